// Structured logs of the real programs (common/log.h, docs/operations.md):
// one trial's lease, expiry, second lease and completion found by filtering
// qkov-server's JSON log on the trial's id, as `journalctl QKOV_TRIAL=...`
// filters the journal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

// Every line of a JSON log, each checked to be one object with the four
// keys every event has.
std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    if (j.is_discarded()) continue;
    for (const char* key : {"ts", "program", "severity", "event"})
      EXPECT_TRUE(j.contains(key)) << key << " missing: " << line;
    out.push_back(std::move(j));
  }
  return out;
}

TEST(StructuredLogsTest, OneTrialsLeasesExpiryAndCompletionByItsId) {
  TempDir dir;
  ServerUnderTest server(
      dir, {"--log_format=json", "--lease_seconds=2", "--heartbeat_seconds=1"});
  WriteFile(dir.File("sweep.yaml"), R"(name: logged
axes: {parameterization: [FAFO], lr_ratio: [1], eta_ov: [0.1], seed: [7]}
training:
  max_steps: 20000
  report_every: 200
  target_loss: -1
  evaluation: {num_examples: 256}
)");
  CommandResult submit =
      RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                  dir.File("sweep.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto q = [&](const std::string& sql) {
    return QueryInt(server.db_path(), sql);
  };
  Process a({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=a",
             "--log_format=json", "--exit_when_idle"},
            dir.File("a.log"));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return q("SELECT COUNT(*) FROM trials WHERE last_step >= 400") > 0;
      },
      60));
  a.Signal(SIGSTOP);  // no heartbeats: the lease expires
  ASSERT_TRUE(WaitUntil(
      [&] {
        return q("SELECT COUNT(*) FROM attempts WHERE state = 'lost'") == 1;
      },
      30));
  Process b({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=b",
             "--log_format=json", "--exit_when_idle"},
            dir.File("b.log"));
  ASSERT_EQ(b.Wait(180), 0) << ReadFile(dir.File("b.log"));
  a.Signal(SIGKILL);
  const std::string trial =
      QueryRows(server.db_path(), "SELECT trial_id FROM trials")[0][0];

  // The server's log, filtered on the trial's id.
  std::vector<std::string> story;
  std::vector<std::string> workers;
  for (const nlohmann::json& e : JsonLines(ReadFile(dir.File("server.log")))) {
    EXPECT_EQ(e["program"], "qkov-server");
    if (!e.contains("trial") || e["trial"] != trial) continue;
    story.push_back(absl::StrCat(e["event"].get<std::string>(), " ",
                                 e["attempt"].get<int>()));
    workers.push_back(e["worker"].get<std::string>());
  }
  EXPECT_EQ(story,
            (std::vector<std::string>{"trial_leased 1", "lease_expired 1",
                                      "trial_leased 2", "trial_completed 2"}));
  ASSERT_EQ(workers.size(), 4u);
  EXPECT_EQ(workers[0].rfind("a/", 0), 0u) << workers[0];
  EXPECT_EQ(workers[1], workers[0]);
  EXPECT_EQ(workers[2].rfind("b/", 0), 0u) << workers[2];
  EXPECT_EQ(workers[3], workers[2]);
  // The worker that finished logs JSON too, ending with its count.
  std::vector<nlohmann::json> b_log = JsonLines(ReadFile(dir.File("b.log")));
  ASSERT_FALSE(b_log.empty());
  EXPECT_EQ(b_log.back()["event"], "worker_finished");
  EXPECT_EQ(b_log.back()["trials_completed"], 1);
}

// The journal's fields of one datagram of journald's native protocol:
// KEY=value lines, or KEY, a little-endian 64-bit length and the value.
std::map<std::string, std::string> JournalEntry(const std::string& d) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  while (i < d.size()) {
    const size_t nl = d.find('\n', i);
    if (nl == std::string::npos) break;
    const std::string line = d.substr(i, nl - i);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) {
      out[line.substr(0, eq)] = line.substr(eq + 1);
      i = nl + 1;
      continue;
    }
    uint64_t n = 0;
    if (nl + 1 + 8 > d.size()) break;
    std::memcpy(&n, d.data() + nl + 1, 8);  // little-endian hosts only
    out[line] = d.substr(nl + 9, n);
    i = nl + 9 + n + 1;
  }
  return out;
}

// Under systemd (stderr is the journal's stream, as JOURNAL_STREAM says),
// events go to the journal natively, each field its own journal field. The
// server runs in a mount namespace of its own where /run is a fresh tmpfs
// and journald's socket is this test's.
TEST(StructuredLogsTest, UnderSystemdEventsReachTheJournalAsFields) {
  TempDir dir;
  const std::string sock = dir.File("journal.sock");
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof(addr.sun_path));
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int big = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
  const std::string script = absl::StrCat(
      "mount -t tmpfs none /run && mkdir -p /run/systemd/journal && "
      "ln -s ",
      sock,
      " /run/systemd/journal/socket && "
      "export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) && exec ",
      QKOV_SERVER_BIN, " --db=", dir.File("j.db"),
      " --listen=127.0.0.1:0 --port_file=", dir.File("j.port"));
  Process server({"/usr/bin/unshare", "--mount", "--propagation", "private",
                  "/bin/sh", "-c", script},
                 dir.File("server.log"));
  ASSERT_TRUE(
      WaitUntil([&] { return !ReadFile(dir.File("j.port")).empty(); }, 30))
      << ReadFile(dir.File("server.log"));
  const std::string address = "127.0.0.1:" + ReadFile(dir.File("j.port"));
  WriteFile(dir.File("sweep.yaml"), R"(name: journaled
axes: {parameterization: [FAFO], lr_ratio: [1], eta_ov: [0.1], seed: [7]}
training: {max_steps: 200, report_every: 100, evaluation: {num_examples: 64}}
)");
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, "--server=" + address, "submit",
                        dir.File("sweep.yaml")})
                .exit_code,
            0);
  Process worker(
      {QKOV_WORKER_BIN, "--server=" + address, "--name=j", "--exit_when_idle"},
      dir.File("worker.log"));
  ASSERT_EQ(worker.Wait(120), 0) << ReadFile(dir.File("worker.log"));
  server.Signal(SIGTERM);
  ASSERT_EQ(server.Wait(30), 0) << ReadFile(dir.File("server.log"));

  std::vector<std::map<std::string, std::string>> entries;
  std::string buf(1 << 20, '\0');
  while (true) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    entries.push_back(JournalEntry(buf.substr(0, static_cast<size_t>(n))));
  }
  close(fd);
  const std::string trial =
      QueryRows(dir.File("j.db"), "SELECT trial_id FROM trials")[0][0];
  std::vector<std::string> story;
  for (const auto& e : entries) {
    ASSERT_TRUE(e.count("QKOV_EVENT") && e.count("MESSAGE") &&
                e.count("PRIORITY"));
    EXPECT_EQ(e.at("SYSLOG_IDENTIFIER"), "qkov-server");
    auto t = e.find("QKOV_TRIAL");
    if (t != e.end() && t->second == trial) {
      story.push_back(e.at("QKOV_EVENT"));
      EXPECT_EQ(e.at("PRIORITY"), "6");  // info
      EXPECT_EQ(e.at("QKOV_ATTEMPT"), "1");
      EXPECT_EQ(e.at("QKOV_WORKER").rfind("j/", 0), 0u);
      EXPECT_NE(e.at("MESSAGE").find("trial=" + trial), std::string::npos);
    }
  }
  EXPECT_EQ(story,
            (std::vector<std::string>{"trial_leased", "trial_completed"}));
  EXPECT_GE(entries.size(), 4u);  // started, submitted, ..., stopped
  // Nothing went to stderr: the journal had every event.
  EXPECT_EQ(ReadFile(dir.File("server.log")), "");
}

TEST(StructuredLogsTest, AnUnknownLogFormatIsRefusedAtStart) {
  TempDir dir;
  const std::vector<std::vector<std::string>> commands = {
      {QKOV_SERVER_BIN, "--db=" + dir.File("x.db"), "--log_format=xml"},
      {QKOV_WORKER_BIN, "--server=127.0.0.1:1", "--log_format=xml"}};
  for (const std::vector<std::string>& argv : commands) {
    CommandResult r = RunCommand(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << argv[0] << ": " << r.err;
    EXPECT_NE(r.err.find("--log_format: 'xml' is not text or json"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace qkov::testing
