// Fault injection with real processes on loopback: a worker killed
// mid-trial, the server killed mid-sweep and restarted, a worker frozen past
// its lease, a worker stopped by SIGTERM that hands its trial back with a
// checkpoint, and a worker drained by SIGUSR2 that finishes its trial and
// exits. In every case each trial finishes exactly once.
#include <gtest/gtest.h>
#include <signal.h>

#include "absl/strings/str_cat.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

// Long enough that a trial is caught mid-way (~10 s at 30k steps), short
// enough for CI.
std::string SweepYaml(const std::string& name, int seeds, int max_steps) {
  std::string seed_list;
  for (int i = 0; i < seeds; ++i)
    absl::StrAppend(&seed_list, i ? ", " : "", 100 + i);
  return absl::StrCat("name: ", name, R"(
axes:
  parameterization: [FAFO]
  lr_ratio: [1]
  eta_ov: [0.1]
  seed: [)",
                      seed_list, R"(]
training:
  max_steps: )",
                      max_steps, R"(
  report_every: 200
  target_loss: -1
  evaluation: {num_examples: 256}
)");
}

class FaultTest : public ::testing::Test {
 protected:
  void Submit(ServerUnderTest& server, const std::string& yaml) {
    const std::string path =
        dir_.File("sweep-" + std::to_string(submitted_++) + ".yaml");
    WriteFile(path, yaml);
    CommandResult r = RunCommand(
        {QKOV_CLI_BIN, "--server=" + server.address(), "submit", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::unique_ptr<Process> Worker(ServerUnderTest& server,
                                  const std::string& name,
                                  bool exit_when_idle = true) {
    std::vector<std::string> argv = {
        QKOV_WORKER_BIN, "--server=" + server.address(), "--name=" + name,
        "--unreachable_timeout_seconds=120"};
    if (exit_when_idle) argv.push_back("--exit_when_idle");
    return std::make_unique<Process>(argv, dir_.File(name + ".log"));
  }
  int64_t Q(ServerUnderTest& server, const std::string& sql) {
    return QueryInt(server.db_path(), sql);
  }
  void ExpectEveryTrialDoneOnce(ServerUnderTest& server, int trials) {
    EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
              trials);
    EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'done'"),
              trials);
    EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM results WHERE name = 'accuracy'"),
              trials);
    EXPECT_EQ(Q(server,
                "SELECT COUNT(*) FROM pragma_integrity_check WHERE "
                "integrity_check = 'ok'"),
              1);
  }

  TempDir dir_;
  int submitted_ = 0;
};

TEST_F(FaultTest, WorkerKilledMidTrialFinishesElsewhereOnce) {
  ServerUnderTest server(dir_, {"--lease_seconds=2", "--heartbeat_seconds=1"});
  Submit(server, SweepYaml("kill-worker", 2, 30000));
  auto a = Worker(server, "a", false);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server,
                 "SELECT COUNT(*) FROM trials WHERE last_step >= 1000") > 0;
      },
      60));
  a->Signal(SIGKILL);
  EXPECT_EQ(a->Wait(10), 128 + SIGKILL);
  auto b = Worker(server, "b");
  ASSERT_EQ(b->Wait(180), 0) << ReadFile(dir_.File("b.log"));
  ExpectEveryTrialDoneOnce(server, 2);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'lost'"), 1);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM attempts WHERE state = 'done' AND "
              "worker_id LIKE 'b/%'"),
            2);
}

TEST_F(FaultTest, ServerKilledMidSweepLosesNothing) {
  ServerUnderTest server(dir_);
  Submit(server, SweepYaml("kill-server", 6, 4000));
  auto a = Worker(server, "a");
  auto b = Worker(server, "b");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'") >=
               2;
      },
      120));
  server.process().Signal(SIGKILL);
  server.process().Wait(10);
  // What the server acknowledged before it died.
  auto before = QueryRows(
      server.db_path(),
      "SELECT trial_id, name, value FROM results ORDER BY trial_id, name");
  ASSERT_FALSE(before.empty());
  server.Restart();
  ASSERT_EQ(a->Wait(180), 0) << ReadFile(dir_.File("a.log"));
  ASSERT_EQ(b->Wait(180), 0) << ReadFile(dir_.File("b.log"));
  ExpectEveryTrialDoneOnce(server, 6);
  auto after = QueryRows(
      server.db_path(),
      "SELECT trial_id, name, value FROM results ORDER BY trial_id, name");
  for (const auto& row : before) {
    EXPECT_NE(std::find(after.begin(), after.end(), row), after.end())
        << row[0] << " " << row[1];
  }
  // No duplicate points: one per (trial, name, step) among the done attempts.
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM (SELECT trial_id, name, step FROM metrics "
              "m JOIN attempts a "
              "USING (trial_id, attempt) WHERE a.state = 'done' GROUP BY 1, 2, "
              "3 HAVING COUNT(*) > 1)"),
            0);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM metrics m JOIN attempts a USING (trial_id, "
              "attempt) "
              "WHERE a.state = 'done' AND m.name = 'train_loss'"),
            6 * 4000 / 200);
}

TEST_F(FaultTest, WorkerFrozenPastItsLeaseIsRefused) {
  ServerUnderTest server(dir_, {"--lease_seconds=2", "--heartbeat_seconds=1"});
  Submit(server, SweepYaml("freeze", 1, 20000));
  auto a = Worker(server, "a");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server, "SELECT COUNT(*) FROM trials WHERE last_step >= 600") >
               0;
      },
      60));
  a->Signal(SIGSTOP);  // cut off: no heartbeats, no reports
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server,
                 "SELECT COUNT(*) FROM attempts WHERE state = 'lost'") == 1;
      },
      30));
  const int64_t frozen_at =
      Q(server, "SELECT MAX(step) FROM metrics WHERE attempt = 1");
  auto b = Worker(server, "b");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server, "SELECT COUNT(*) FROM attempts WHERE attempt = 2") ==
               1;
      },
      30));
  a->Signal(SIGCONT);  // its next report carries attempt 1: refused
  ASSERT_EQ(a->Wait(120), 0) << ReadFile(dir_.File("a.log"));
  ASSERT_EQ(b->Wait(180), 0) << ReadFile(dir_.File("b.log"));
  ExpectEveryTrialDoneOnce(server, 1);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM results WHERE attempt != 2"), 0);
  // Nothing of attempt 1 was stored after it lost its lease.
  EXPECT_EQ(
      Q(server, "SELECT COALESCE(MAX(step), 0) FROM metrics WHERE attempt = 1"),
      frozen_at);
  EXPECT_NE(ReadFile(dir_.File("a.log")).find("dropped"), std::string::npos)
      << ReadFile(dir_.File("a.log"));
}

TEST_F(FaultTest, SigtermHandsBackAndResumesToTheSameResult) {
  ServerUnderTest server(dir_);
  // Reference: the same config, uninterrupted, in another sweep.
  Submit(server, SweepYaml("reference", 1, 8000));
  auto ref = Worker(server, "ref");
  ASSERT_EQ(ref->Wait(120), 0);
  Submit(server, SweepYaml("preempted", 1, 8000));
  auto a = Worker(server, "a", false);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server,
                 "SELECT COUNT(*) FROM trials t JOIN sweeps s USING (sweep_id) "
                 "WHERE s.name = 'preempted' AND t.last_step >= 2000") > 0;
      },
      60));
  a->Signal(SIGTERM);
  ASSERT_EQ(a->Wait(30), 3)
      << ReadFile(dir_.File("a.log"));  // 3: stopped by a signal
  EXPECT_EQ(
      Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'preempted'"), 1);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM trials WHERE checkpoint IS NOT NULL AND "
              "failures = 0"),
            1);
  auto b = Worker(server, "b");
  ASSERT_EQ(b->Wait(120), 0) << ReadFile(dir_.File("b.log"));
  ExpectEveryTrialDoneOnce(server, 2);
  EXPECT_GT(Q(server, "SELECT start_step FROM attempts WHERE attempt = 2"), 0);
  // Same final metrics, to the last bit, as the uninterrupted run.
  const std::string per_sweep =
      "SELECT r.name, r.value FROM results r JOIN trials t USING (trial_id) "
      "JOIN sweeps s USING (sweep_id) "
      "WHERE s.name = ";
  EXPECT_GT(
      Q(server, "SELECT COUNT(*) FROM (" + per_sweep + "'reference') a JOIN (" +
                    per_sweep +
                    "'preempted') b USING (name) WHERE a.value IS b.value"),
      10);
  EXPECT_EQ(
      Q(server, "SELECT COUNT(*) FROM (" + per_sweep +
                    "'reference') a LEFT JOIN (" + per_sweep +
                    "'preempted') b USING (name) WHERE a.value IS NOT b.value"),
      0);
}

// SIGUSR2 mid-trial: the worker finishes that trial, leases no other
// although the sweep has more, and exits 0; nothing was handed back.
TEST_F(FaultTest, SigusrTwoDrainsTheWorker) {
  ServerUnderTest server(dir_);
  Submit(server, SweepYaml("drained", 2, 8000));
  auto a = Worker(server, "a", /*exit_when_idle=*/false);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server, "SELECT COUNT(*) FROM trials WHERE last_step >= 200") >
               0;
      },
      60));
  a->Signal(SIGUSR2);
  ASSERT_EQ(a->Wait(120), 0) << ReadFile(dir_.File("a.log"));
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'"), 1);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'queued'"), 1);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts"), 1);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts WHERE state != 'done'"),
            0);
  EXPECT_NE(ReadFile(dir_.File("a.log")).find("worker_drained"),
            std::string::npos);
  auto b = Worker(server, "b");
  ASSERT_EQ(b->Wait(120), 0) << ReadFile(dir_.File("b.log"));
  ExpectEveryTrialDoneOnce(server, 2);
}

}  // namespace
}  // namespace qkov::testing
