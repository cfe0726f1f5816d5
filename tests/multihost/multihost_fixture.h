// MultihostTest: the network-namespace cluster of multihost_test.cc (a
// service node with TLS and three compute nodes, tests/multihost/
// netns_cluster.h), the timeline each case prints, and the trial ledger
// every case checks (CheckLedger).
#ifndef TESTS_MULTIHOST_MULTIHOST_FIXTURE_H_
#define TESTS_MULTIHOST_MULTIHOST_FIXTURE_H_

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/integration/harness.h"
#include "tests/multihost/netns_cluster.h"

namespace qkov::testing {

inline constexpr int kNodes = 3;
inline constexpr int64_t kLeaseMs = 8000;
inline constexpr int64_t kHeartbeatMs = 1000;
inline constexpr int64_t kReaperMs = kLeaseMs / 4;
// The workers' call deadline (--rpc_deadline_seconds).
inline constexpr int64_t kRpcDeadlineMs = 3000;
inline constexpr char kPort[] = "7443";
inline constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();

inline int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

// A stretch during which a node could not reach the coordinator (a cut, or
// the node lost). The coordinator's own downtime is not one: the lease
// clock stops while it is down (ResumeLeases).
struct Outage {
  int node;
  int64_t start_ms;
  int64_t end_ms = kOpen;
};

// What happened when, printed relative to the case's start.
class Timeline {
 public:
  explicit Timeline(std::string name) : name_(std::move(name)) {}
  void Add(const std::string& what) { AddAt(NowMs(), what); }
  void AddAt(int64_t ms, const std::string& what) {
    events_.emplace_back(ms, what);
  }
  void Print() const {
    std::vector<std::pair<int64_t, std::string>> sorted = events_;
    std::stable_sort(
        sorted.begin(), sorted.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    std::printf("timeline of case %s (seconds from its start):\n",
                name_.c_str());
    for (const auto& [ms, what] : sorted) {
      std::printf("  %+8.3f  %s\n", (ms - start_) / 1000.0, what.c_str());
    }
    std::fflush(stdout);
  }

 private:
  const std::string name_;
  const int64_t start_ = NowMs();
  std::vector<std::pair<int64_t, std::string>> events_;
};

// The node a worker runs on, from its name "n<K>-...".
inline int NodeOf(const std::string& worker_id) {
  int node = 0;
  if (worker_id.size() < 3 || worker_id[0] != 'n' ||
      !absl::SimpleAtoi(worker_id.substr(1, worker_id.find('-') - 1), &node))
    return 0;
  return node;
}

class MultihostTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<NetnsCluster>> cluster =
        NetnsCluster::Create(kNodes);
    if (!cluster.ok()) {
      skip_reason_ = new std::string(std::string(cluster.status().message()));
      std::printf("multihost: skipped: %s\n", skip_reason_->c_str());
      return;
    }
    cluster_ = cluster->release();
    dir_ = new TempDir();
    MakeCertificates();
    WriteFile(dir_->File("tokens"),
              "worker worker-token-0123456789abcdef\n"
              "user   user-token-0123456789abcdef\n");
    WriteFile(dir_->File("worker.token"), "worker-token-0123456789abcdef\n");
    WriteFile(dir_->File("user.token"), "user-token-0123456789abcdef\n");
    StartServer();
  }

  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete cluster_;  // kills what is left in the namespaces
    cluster_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (cluster_ == nullptr) GTEST_SKIP() << *skip_reason_;
    ASSERT_NE(server_, nullptr);
    ASSERT_TRUE(server_->Running()) << ServerLog();
  }

  void TearDown() override {
    if (cluster_ == nullptr) return;
    workers_.clear();                    // SIGKILL whatever still runs
    for (int k = 1; k <= kNodes; ++k) {  // heal whatever a failed case left
      cluster_->LinkUp(k).IgnoreError();
      cluster_->Rejoin(k).IgnoreError();
      cluster_->PassReplies(k).IgnoreError();
    }
    if (server_ == nullptr || !server_->Running()) StartServer();
  }

  static void MakeCertificates() {
    const std::string script = absl::StrCat(
        "set -e; cd '", dir_->path(), "'\n",
        "ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
        "openssl req -x509 $ec -keyout ca.key -out ca.pem -days 1 -subj "
        "/CN=qkov-multihost-ca 2>/dev/null\n"
        "openssl req $ec -keyout server.key -out server.csr -subj /CN=",
        NetnsCluster::kServiceHost,
        " 2>/dev/null\n"
        "echo 'subjectAltName=DNS:",
        NetnsCluster::kServiceHost,
        "' > server.ext\n"
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
        "-CAcreateserial -out server.pem -days 1 -extfile server.ext "
        "2>/dev/null\n");
    CommandResult r = RunCommand({"/bin/bash", "-c", script});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  static std::string ServerAddress() {
    return absl::StrCat(NetnsCluster::kServiceHost, ":", kPort);
  }
  static std::string ServerLog() { return ReadFile(dir_->File("server.log")); }

  // qkov-server on the service node, on the same database each time.
  static void StartServer() {
    const std::string port_file = dir_->File("port");
    std::remove(port_file.c_str());
    delete server_;
    server_ = new Process(
        cluster_->InService(
            {QKOV_SERVER_BIN, "--db=" + dir_->File("results.db"),
             absl::StrCat("--listen=", NetnsCluster::kServiceAddress, ":",
                          kPort),
             "--port_file=" + port_file, "--token_file=" + dir_->File("tokens"),
             "--tls_cert=" + dir_->File("server.pem"),
             "--tls_key=" + dir_->File("server.key"),
             absl::StrCat("--lease_seconds=", kLeaseMs / 1000),
             absl::StrCat("--heartbeat_seconds=", kHeartbeatMs / 1000)}),
        dir_->File("server.log"));
    ASSERT_TRUE(WaitUntil([&] { return !ReadFile(port_file).empty(); }, 30))
        << ServerLog();
  }

  // qkov-worker `name` on compute node `node`; the name starts "n<node>-".
  Process& Worker(int node, const std::string& name) {
    const std::string full = absl::StrCat("n", node, "-", name);
    workers_[full] = std::make_unique<Process>(
        cluster_->InNode(
            node,
            {QKOV_WORKER_BIN, "--server=" + ServerAddress(),
             "--tls_ca=" + dir_->File("ca.pem"),
             "--token_file=" + dir_->File("worker.token"), "--name=" + full,
             absl::StrCat("--rpc_deadline_seconds=", kRpcDeadlineMs / 1000),
             "--unreachable_timeout_seconds=300"}),
        WorkerLogPath(full));
    return *workers_[full];
  }
  std::string WorkerLogPath(const std::string& full) const {
    return dir_->File(full + ".log");
  }
  std::string WorkerLog(const std::string& full) const {
    return ReadFile(WorkerLogPath(full));
  }

  // Submits `trials` synthetic trials (seeds 1..trials) of `steps` steps,
  // through qkov on the service node.
  void Submit(const std::string& sweep, int trials, int steps,
              int report_every) {
    std::string seeds;
    for (int i = 1; i <= trials; ++i)
      absl::StrAppend(&seeds, i > 1 ? ", " : "", i);
    const std::string path = dir_->File(sweep + ".yaml");
    WriteFile(path, absl::StrCat("name: ", sweep,
                                 "\naxes:\n  parameterization: [FAFO]\n"
                                 "  lr_ratio: [1]\n  eta_ov: [0.1]\n"
                                 "  seed: [",
                                 seeds, "]\ntraining:\n  max_steps: ", steps,
                                 "\n  report_every: ", report_every,
                                 "\n  target_loss: -1\n"
                                 "  evaluation: {num_examples: 64}\n"));
    CommandResult r = RunCommand(cluster_->InService(
        {QKOV_CLI_BIN, "--server=" + ServerAddress(),
         "--tls_ca=" + dir_->File("ca.pem"),
         "--token_file=" + dir_->File("user.token"), "submit", path}));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    steps_[sweep] = steps / report_every;
  }

  static int64_t Q(const std::string& sql) {
    return QueryInt(dir_->File("results.db"), sql);
  }
  static std::vector<std::vector<std::string>> Rows(const std::string& sql) {
    return QueryRows(dir_->File("results.db"), sql);
  }
  static std::string InSweep(const std::string& sweep) {
    return absl::StrCat(
        "trial_id IN (SELECT trial_id FROM trials JOIN sweeps "
        "USING (sweep_id) WHERE sweeps.name = '",
        sweep, "')");
  }
  static int64_t Done(const std::string& sweep) {
    return Q("SELECT COUNT(*) FROM trials WHERE state = 'done' AND " +
             InSweep(sweep));
  }
  bool WaitDone(const std::string& sweep, int trials, double timeout_s) {
    return WaitUntil([&] { return Done(sweep) == trials; }, timeout_s);
  }
  // Waits until `trials` trials of the sweep run past `step`.
  bool WaitRunning(const std::string& sweep, int trials, int step) {
    return WaitUntil(
        [&] {
          return Q(absl::StrCat("SELECT COUNT(*) FROM trials WHERE state = "
                                "'running' AND last_step >= ",
                                step, " AND ", InSweep(sweep))) == trials;
        },
        60);
  }
  // The worker (name) holding the sweep's trial `ordinal`, attempt `n`.
  std::string AttemptWorker(const std::string& sweep, int ordinal, int n) {
    auto rows = Rows(absl::StrCat(
        "SELECT worker_id FROM attempts JOIN trials USING (trial_id) WHERE "
        "ordinal = ",
        ordinal, " AND attempt = ", n, " AND ", InSweep(sweep)));
    return rows.empty() ? "" : rows[0][0];
  }

  // Waits for `needle` in a worker's log; notes when it appeared.
  bool WaitLog(const std::string& worker, const std::string& needle,
               Timeline* timeline, double timeout_s) {
    const bool seen =
        WaitUntil([&] { return absl::StrContains(WorkerLog(worker), needle); },
                  timeout_s);
    if (!seen) return false;
    for (absl::string_view line : absl::StrSplit(WorkerLog(worker), '\n')) {
      if (absl::StrContains(line, needle)) {
        timeline->Add(absl::StrCat(worker, " logged: ", line));
        break;
      }
    }
    return true;
  }

  // The trial ledger after a case (see the file comment). Adds each
  // expiry and re-lease to `timeline`.
  void CheckLedger(const std::string& sweep, int trials,
                   const std::vector<Outage>& outages, Timeline* timeline) {
    const std::string in = InSweep(sweep);
    EXPECT_EQ(Done(sweep), trials) << sweep;
    EXPECT_EQ(Q("SELECT COUNT(*) FROM attempts WHERE state = 'done' AND " + in),
              trials)
        << sweep << ": every trial done exactly once";
    EXPECT_EQ(Q("SELECT COUNT(*) FROM results r JOIN attempts a USING "
                "(trial_id, attempt) WHERE a.state != 'done' AND r." +
                in),
              0)
        << sweep << ": a result row of an attempt that did not finish";
    EXPECT_EQ(Q("SELECT COUNT(*) FROM (SELECT trial_id, name FROM results "
                "WHERE " +
                in + " GROUP BY 1, 2 HAVING COUNT(*) > 1)"),
              0)
        << sweep << ": duplicate result rows";
    // Nothing lost: every report of each done attempt is stored.
    EXPECT_EQ(Q("SELECT COUNT(*) FROM metrics m JOIN attempts a USING "
                "(trial_id, attempt) WHERE a.state = 'done' AND "
                "m.name = 'train_loss' AND m." +
                in),
              trials * steps_[sweep])
        << sweep << ": train_loss points of the done attempts";
    EXPECT_EQ(Q("SELECT COUNT(*) FROM pragma_integrity_check WHERE "
                "integrity_check = 'ok'"),
              1);
    EXPECT_EQ(
        Q("SELECT COUNT(*) FROM attempts WHERE state = 'failed' AND " + in), 0)
        << sweep << ": an attempt failed";
    auto attempts = Rows(
        "SELECT trial_id, attempt, worker_id, state, started_ms, "
        "COALESCE(ended_ms, 0) FROM attempts WHERE " +
        in + " ORDER BY trial_id, attempt");
    std::map<std::string, std::vector<std::string>> previous;
    for (const auto& a : attempts) {
      const std::string& trial = a[0];
      int attempt = 0;
      int64_t started = 0, ended = 0;
      ASSERT_TRUE(absl::SimpleAtoi(a[1], &attempt));
      ASSERT_TRUE(absl::SimpleAtoi(a[4], &started));
      ASSERT_TRUE(absl::SimpleAtoi(a[5], &ended));
      if (attempt > 1) {
        timeline->AddAt(started,
                        absl::StrCat("trial ", trial, " re-leased as attempt ",
                                     attempt, " to ", a[2]));
        const auto& before = previous[trial];
        ASSERT_FALSE(before.empty()) << trial << " attempt " << attempt;
        EXPECT_EQ(before[3], "lost")
            << trial << ": attempt " << attempt
            << " follows one that did not expire (" << before[3] << ")";
        int64_t before_ended = 0;
        ASSERT_TRUE(absl::SimpleAtoi(before[5], &before_ended));
        EXPECT_GE(started, before_ended) << trial;
      }
      if (a[3] == "lost") {
        timeline->AddAt(
            ended, absl::StrCat("lease of trial ", trial, " attempt ", attempt,
                                " (", a[2], ") expired; requeued"));
        // Expired only while its worker could not reach the server: no
        // sooner than a lease after the outage began (less a heartbeat),
        // no later than a lease after it ended.
        const int node = NodeOf(a[2]);
        bool explained = false;
        for (const Outage& o : outages) {
          if (o.node != node) continue;
          const int64_t earliest = o.start_ms + kLeaseMs - kHeartbeatMs - 250;
          const int64_t latest =
              o.end_ms == kOpen ? kOpen : o.end_ms + kLeaseMs + kReaperMs;
          if (ended >= earliest && ended <= latest) explained = true;
        }
        EXPECT_TRUE(explained) << trial << " attempt " << attempt << " of "
                               << a[2] << " expired at " << ended
                               << " while its worker could reach the server";
      }
      previous[trial] = a;
    }
  }

  static NetnsCluster* cluster_;
  static TempDir* dir_;
  static Process* server_;
  static std::string* skip_reason_;
  std::map<std::string, std::unique_ptr<Process>> workers_;
  std::map<std::string, int> steps_;  // train_loss reports per trial
};

NetnsCluster* MultihostTest::cluster_ = nullptr;
TempDir* MultihostTest::dir_ = nullptr;
Process* MultihostTest::server_ = nullptr;
std::string* MultihostTest::skip_reason_ = nullptr;

}  // namespace qkov::testing

#endif  // TESTS_MULTIHOST_MULTIHOST_FIXTURE_H_
