// qkov-server's Prometheus metrics (docs/operations.md), against the real
// parts: the server, a worker training a sweep, the SQLite file read
// directly, Debian's promtool on the scraped text, and Debian's prometheus
// scraping the server on loopback and answering PromQL.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/version.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

constexpr char kReaderToken[] = "reader-token-0123456789";
constexpr char kWorkerToken[] = "worker-token-0123456789";
constexpr char kUserToken[] = "user-token-0123456789ab";

// Eight short synthetic trials.
constexpr char kSweep[] = R"(name: metrics-sweep
axes:
  parameterization: [FAFO, CACO]
  lr_ratio: [1, 20]
  eta_ov: [0.1]
  seed: [1, 2]
training:
  max_steps: 300
  report_every: 100
  evaluation: {num_examples: 128}
)";

// Every series of a scrape: "name{labels}" -> value.
std::map<std::string, double> ParseSamples(const std::string& text) {
  std::map<std::string, double> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    double v = 0;
    if (space == absl::string_view::npos ||
        !absl::SimpleAtod(line.substr(space + 1), &v)) {
      ADD_FAILURE() << "unparsable sample line: " << line;
      continue;
    }
    out[std::string(line.substr(0, space))] = v;
  }
  return out;
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(
        dir_.File("tokens"),
        absl::StrCat("worker ", kWorkerToken, " workers\nuser ", kUserToken,
                     " alice\nread-only ", kReaderToken, " prometheus\n"));
    WriteFile(dir_.File("worker.token"), absl::StrCat(kWorkerToken, "\n"));
    WriteFile(dir_.File("user.token"), absl::StrCat(kUserToken, "\n"));
    WriteFile(dir_.File("reader.token"), absl::StrCat(kReaderToken, "\n"));
    WriteFile(dir_.File("sweep.yaml"), kSweep);
  }

  void StartServer(const std::vector<std::string>& more_flags = {}) {
    std::vector<std::string> flags = {
        "--token_file=" + dir_.File("tokens"), "--metrics_listen=127.0.0.1:0",
        "--metrics_port_file=" + dir_.File("metrics.port"), "--lease_seconds=5",
        "--heartbeat_seconds=1"};
    flags.insert(flags.end(), more_flags.begin(), more_flags.end());
    server_ = std::make_unique<ServerUnderTest>(dir_, flags);
    ASSERT_TRUE(WaitUntil(
        [&] { return !ReadFile(dir_.File("metrics.port")).empty(); }, 30));
    metrics_port_ = std::stoi(ReadFile(dir_.File("metrics.port")));
  }

  // Submits the sweep and trains it to the end with one worker.
  void RunSweep() {
    CommandResult submit =
        RunCommand({QKOV_CLI_BIN, "--server=" + server_->address(),
                    "--token_file=" + dir_.File("user.token"), "submit",
                    dir_.File("sweep.yaml")});
    ASSERT_EQ(submit.exit_code, 0) << submit.err;
    Process worker({QKOV_WORKER_BIN, "--server=" + server_->address(),
                    "--name=w1", "--exit_when_idle"},
                   dir_.File("worker.log"),
                   {"QKOV_TOKEN_FILE=" + dir_.File("worker.token")});
    ASSERT_EQ(worker.Wait(300), 0) << ReadFile(dir_.File("worker.log"));
  }

  httplib::Result Get(const std::string& path, const std::string& token) {
    httplib::Client client("127.0.0.1", metrics_port_);
    client.set_read_timeout(10, 0);
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Get(path, headers);
  }

  std::string Scrape() {
    httplib::Result r = Get("/metrics", kReaderToken);
    EXPECT_TRUE(r) << "no reply from /metrics";
    if (!r) return "";
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"),
              "text/plain; version=0.0.4; charset=utf-8");
    return r->body;
  }

  int64_t Db(const std::string& sql) {
    return QueryInt(server_->db_path(), sql);
  }

  TempDir dir_;
  std::unique_ptr<ServerUnderTest> server_;
  int metrics_port_ = 0;
};

TEST_F(MetricsTest, ScrapeAfterASweepPassesPromtoolAndMatchesTheDatabase) {
  StartServer();
  RunSweep();
  const std::string text = Scrape();
  WriteFile(dir_.File("scrape.txt"), text);
  // promtool's linter: names, units, _total on counters, help text.
  CommandResult lint = RunCommand(
      {"/bin/sh", "-c", "promtool check metrics < " + dir_.File("scrape.txt")});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "") << "promtool reported problems";

  std::map<std::string, double> s = ParseSamples(text);
  for (const char* name :
       {"qkov_queue_depth", "qkov_queue_oldest_age_seconds",
        "qkov_leases_in_flight", "qkov_lease_grants_total",
        "qkov_lease_expirations_total", "qkov_trial_retries_total",
        "qkov_worker_heartbeat_oldest_age_seconds", "qkov_db_size_bytes",
        "qkov_db_wal_size_bytes", "qkov_db_volume_free_bytes",
        "qkov_db_write_transaction_duration_seconds_count",
        "qkov_metrics_scrapes_refused_total"}) {
    EXPECT_TRUE(s.count(name)) << name << " missing from\n" << text;
  }
  // Trial counts are the database's.
  for (const char* state : {"queued", "running", "done", "failed"}) {
    EXPECT_EQ(s[absl::StrCat("qkov_trials{state=\"", state, "\"}")],
              Db(absl::StrCat("SELECT COUNT(*) FROM trials WHERE state = '",
                              state, "'")))
        << state;
  }
  const int64_t done = Db("SELECT COUNT(*) FROM trials WHERE state = 'done'");
  EXPECT_EQ(done, 8);
  EXPECT_EQ(s["qkov_trials_finished_total{outcome=\"done\"}"], done);
  // Every attempt was one lease grant, and each ended attempt one duration.
  EXPECT_EQ(s["qkov_lease_grants_total"], Db("SELECT COUNT(*) FROM attempts"));
  EXPECT_EQ(s["qkov_trial_duration_seconds_count{task=\"synthetic\"}"],
            Db("SELECT COUNT(*) FROM attempts WHERE ended_ms IS NOT NULL"));
  EXPECT_EQ(s["qkov_queue_depth"], 0);
  EXPECT_EQ(s["qkov_leases_in_flight"], 0);
  // The worker called within one lease period: active.
  EXPECT_EQ(s["qkov_workers{state=\"active\"}"], 1);
  EXPECT_GT(s["qkov_rpcs_total{code=\"OK\",method=\"/qkov.v1.WorkerService/"
              "RegisterWorker\"}"],
            0)
      << text;
  EXPECT_GT(s["qkov_db_writes_total"], 0);
  EXPECT_EQ(s[absl::StrCat("qkov_build_info{version=\"", CodeVersion(), "\"}")],
            1);
  // No id of a trial, sweep or worker is a label value.
  EXPECT_EQ(text.find("metrics-sweep"), std::string::npos);
  EXPECT_EQ(text.find("w1/"), std::string::npos);
}

TEST_F(MetricsTest, ScrapesWithoutAKnownReaderTokenAreRefusedAndCounted) {
  StartServer();
  httplib::Result none = Get("/metrics", "");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer");
  httplib::Result wrong = Get("/metrics", "not-a-token-at-all-000");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  httplib::Result worker = Get("/metrics", kWorkerToken);
  ASSERT_TRUE(worker);
  EXPECT_EQ(worker->status, 403);
  httplib::Result other = Get("/api/v1/sweeps", kReaderToken);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);

  std::map<std::string, double> s = ParseSamples(Scrape());
  EXPECT_EQ(s["qkov_metrics_scrapes_refused_total"], 3);
  EXPECT_EQ(s["qkov_http_responses_total{code=\"401\"}"], 2);
  EXPECT_EQ(s["qkov_http_responses_total{code=\"403\"}"], 1);
}

// qkov-backup.sh against the running server's database, and the server's
// backup metrics over its --backup_dir: none at first; a verified copy's
// time once one is written; and a copy that fails its integrity check (the
// real check, on a copy corrupted between the write and the check) leaves no
// file named like a backup, exits 1, and moves neither metric.
TEST_F(MetricsTest, BackupAgeIsTheNewestVerifiedCopy) {
  const std::string backups = dir_.File("backups");
  StartServer({"--backup_dir=" + backups});
  RunSweep();
  std::map<std::string, double> s = ParseSamples(Scrape());
  EXPECT_EQ(s["qkov_backup_last_success_timestamp_seconds"], 0);
  EXPECT_EQ(s["qkov_backups"], 0);

  const std::string script = QKOV_SOURCE_DIR "/deploy/systemd/qkov-backup.sh";
  CommandResult good =
      RunCommand({"/bin/bash", script, server_->db_path(), backups});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  const std::string copy(absl::StripAsciiWhitespace(good.out));
  EXPECT_EQ(QueryInt(copy, "SELECT COUNT(*) FROM trials"), 8);
  struct stat st;
  ASSERT_EQ(stat(copy.c_str(), &st), 0) << copy;
  s = ParseSamples(Scrape());
  EXPECT_NEAR(s["qkov_backup_last_success_timestamp_seconds"],
              st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9, 1e-3);
  EXPECT_EQ(s["qkov_backups"], 1);

  // The copy's pages 2 and 3 overwritten just before the check.
  std::filesystem::create_directories(dir_.File("shim"));
  WriteFile(dir_.File("shim/sqlite3"),
            "#!/bin/sh\n"
            "if [ \"$2\" = 'PRAGMA integrity_check' ]; then\n"
            "  dd if=/dev/urandom of=\"$1\" bs=4096 seek=1 count=2 "
            "conv=notrunc 2>/dev/null\n"
            "fi\n"
            "exec /usr/bin/sqlite3 \"$@\"\n");
  ASSERT_EQ(chmod(dir_.File("shim/sqlite3").c_str(), 0755), 0);
  CommandResult bad = RunCommand(
      {"/usr/bin/env", "PATH=" + dir_.File("shim") + ":/usr/bin:/bin",
       "/bin/bash", script, server_->db_path(), backups});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("failed integrity_check; no backup written"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.out, "");
  CommandResult left = RunCommand({"/bin/ls", "-A", backups});
  EXPECT_EQ(left.out, copy.substr(copy.rfind('/') + 1) + "\n");
  s = ParseSamples(Scrape());
  EXPECT_NEAR(s["qkov_backup_last_success_timestamp_seconds"],
              st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9, 1e-3);
  EXPECT_EQ(s["qkov_backups"], 1);
}

TEST_F(MetricsTest, AMetricsAddressThatCannotBeBoundStopsStartUp) {
  // A port this test holds.
  const int held = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(held, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(held, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(held, 1), 0);
  socklen_t len = sizeof(a);
  ASSERT_EQ(getsockname(held, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string taken = absl::StrCat("127.0.0.1:", ntohs(a.sin_port));
  for (const std::string& bad : {taken, std::string("not-an-address")}) {
    CommandResult r =
        RunCommand({QKOV_SERVER_BIN, "--db=" + dir_.File("bad.db"),
                    "--listen=127.0.0.1:0", "--metrics_listen=" + bad},
                   30);
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--metrics_listen"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  }
  close(held);
}

// qkov-worker --metrics_listen: its steps, completions and memory, with a
// token of its own.
TEST_F(MetricsTest, AWorkerServesItsOwnMetrics) {
  StartServer();
  CommandResult submit =
      RunCommand({QKOV_CLI_BIN, "--server=" + server_->address(),
                  "--token_file=" + dir_.File("user.token"), "submit",
                  dir_.File("sweep.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  WriteFile(dir_.File("scrape.token"), "worker-scrape-token-42\n");
  // Not --exit_when_idle: it stays up, idle, once the sweep is done.
  Process worker({QKOV_WORKER_BIN, "--server=" + server_->address(),
                  "--name=w1", "--metrics_listen=127.0.0.1:0",
                  "--metrics_port_file=" + dir_.File("worker-metrics.port"),
                  "--metrics_token_file=" + dir_.File("scrape.token")},
                 dir_.File("worker.log"),
                 {"QKOV_TOKEN_FILE=" + dir_.File("worker.token")});
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Db("SELECT COUNT(*) FROM trials WHERE state = 'done'") == 8;
      },
      300))
      << ReadFile(dir_.File("worker.log"));
  ASSERT_TRUE(WaitUntil(
      [&] { return !ReadFile(dir_.File("worker-metrics.port")).empty(); }, 30));
  httplib::Client client("127.0.0.1",
                         std::stoi(ReadFile(dir_.File("worker-metrics.port"))));
  httplib::Result wrong = client.Get(
      "/metrics", httplib::Headers{{"Authorization", "Bearer nope"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  // The completion is counted once the coordinator's reply arrives: wait
  // for the eighth.
  std::map<std::string, double> s;
  ASSERT_TRUE(WaitUntil(
      [&] {
        httplib::Result r = client.Get(
            "/metrics", httplib::Headers{{"Authorization",
                                          "Bearer worker-scrape-token-42"}});
        if (!r || r->status != 200) return false;
        WriteFile(dir_.File("worker-scrape.txt"), r->body);
        s = ParseSamples(r->body);
        return s["qkov_worker_trials_completed_total"] == 8;
      },
      30));
  CommandResult lint = RunCommand(
      {"/bin/sh", "-c",
       "promtool check metrics < " + dir_.File("worker-scrape.txt")});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "");
  // Eight trials of 300 steps.
  EXPECT_EQ(s["qkov_worker_training_steps_total"], 8 * 300);
  EXPECT_EQ(s["qkov_worker_trials_in_flight"], 0);
  EXPECT_EQ(s["qkov_worker_rpc_retries_total"], 0);
  EXPECT_GT(s["qkov_worker_device_memory_in_use_bytes{device=\"cpu\"}"], 0);
  EXPECT_GT(s["qkov_worker_device_memory_available_bytes{device=\"cpu\"}"], 0);
  EXPECT_EQ(s["qkov_worker_metrics_scrapes_refused_total"], 1);
  EXPECT_EQ(s[absl::StrCat("qkov_build_info{version=\"", CodeVersion(), "\"}")],
            1);
}

// A free loopback port (bound, read, released).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// The value of a PromQL instant query with one result, or NaN.
double PromQuery(int port, const std::string& query) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10, 0);
  httplib::Result r = client.Get(
      "/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
  if (!r || r->status != 200) return NAN;
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded() || j["status"] != "success") return NAN;
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.size() != 1) return NAN;
  double v = NAN;
  if (!absl::SimpleAtod(result[0]["value"][1].get<std::string>(), &v))
    return NAN;
  return v;
}

TEST_F(MetricsTest, PrometheusScrapesTheServerAndAgreesWithTheDatabase) {
  StartServer();
  const int prom_port = FreePort();
  WriteFile(dir_.File("prometheus.yml"),
            absl::StrCat("global:\n  scrape_interval: 1s\n"
                         "scrape_configs:\n  - job_name: qkov\n"
                         "    authorization:\n      credentials_file: ",
                         dir_.File("reader.token"),
                         "\n    static_configs:\n      - targets: "
                         "['127.0.0.1:",
                         metrics_port_, "']\n"));
  CommandResult check = RunCommand(
      {"/usr/bin/promtool", "check", "config", dir_.File("prometheus.yml")});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  Process prometheus(
      {"/usr/bin/prometheus", "--config.file=" + dir_.File("prometheus.yml"),
       "--storage.tsdb.path=" + dir_.File("tsdb"),
       absl::StrCat("--web.listen-address=127.0.0.1:", prom_port)},
      dir_.File("prometheus.log"));
  // Prometheus is up and its first scrape of the server succeeded.
  ASSERT_TRUE(WaitUntil(
      [&] { return PromQuery(prom_port, "up{job=\"qkov\"}") == 1; }, 60))
      << ReadFile(dir_.File("prometheus.log"));
  RunSweep();
  const int64_t done = Db("SELECT COUNT(*) FROM trials WHERE state = 'done'");
  const int64_t attempts = Db("SELECT COUNT(*) FROM attempts");
  ASSERT_EQ(done, 8);
  // Scrapes come every second; the finished sweep shows within a few.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return PromQuery(prom_port, "qkov_trials{state=\"done\"}") == done &&
               PromQuery(prom_port, "qkov_lease_grants_total") == attempts;
      },
      60))
      << "done " << PromQuery(prom_port, "qkov_trials{state=\"done\"}")
      << " vs " << done << ", grants "
      << PromQuery(prom_port, "qkov_lease_grants_total") << " vs " << attempts;
  EXPECT_EQ(
      PromQuery(prom_port, "sum(qkov_trials_finished_total{outcome=\"done\"})"),
      done);
  EXPECT_EQ(PromQuery(prom_port, "qkov_lease_expirations_total"), 0);
  // Prometheus saw the server as one healthy target all along.
  EXPECT_EQ(PromQuery(prom_port, "min_over_time(up{job=\"qkov\"}[5m])"), 1);
}

}  // namespace
}  // namespace qkov::testing
