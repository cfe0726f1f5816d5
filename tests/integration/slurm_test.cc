// On a real single-node Slurm cluster (munge, slurmctld, slurmd started by
// tests/slurm/start-cluster.sh): workers launched as a job array through
// deploy/slurm/launch-workers.sh run a sweep to the end, and survive
// `scontrol requeue` and `scancel` in the middle of a trial. Needs root (the
// cluster's daemons); skipped, saying so, without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

std::string SweepYaml(const std::string& name, int seeds, int max_steps) {
  std::string seed_list;
  for (int i = 0; i < seeds; ++i)
    absl::StrAppend(&seed_list, i ? ", " : "", 10 + i);
  return absl::StrCat("name: ", name,
                      "\naxes: {parameterization: [CACO], lr_ratio: [1], "
                      "eta_ov: [0.1], seed: [",
                      seed_list, "]}\ntraining: {max_steps: ", max_steps,
                      ", report_every: 200, target_loss: -1, evaluation: "
                      "{num_examples: 256}}\n");
}

class SlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    CommandResult r = RunCommand(
        {"/bin/bash", QKOV_SOURCE_DIR "/tests/slurm/start-cluster.sh"}, 300);
    started_ = r.exit_code == 0;
    start_log_ = r.out + r.err;
  }
  static void TearDownTestSuite() {
    if (started_)
      RunCommand({"/bin/bash", QKOV_SOURCE_DIR "/tests/slurm/stop-cluster.sh"},
                 120);
  }
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "the Slurm tests start slurmctld/slurmd and need root";
    ASSERT_TRUE(started_) << start_log_;
  }

  std::string Launch(ServerUnderTest& server, int workers, int concurrent) {
    WriteFile(dir_.File("cluster.env"),
              "QKOV_SERVER=" + server.address() + "\n");
    chmod(dir_.File("cluster.env").c_str(), 0600);
    CommandResult r = RunCommand(
        {"/bin/bash", QKOV_SOURCE_DIR "/deploy/slurm/launch-workers.sh",
         "--env-file", dir_.File("cluster.env"), "--workers",
         std::to_string(workers), "--concurrent", std::to_string(concurrent),
         "--log-dir", dir_.File("logs"), "--worker-bin", QKOV_WORKER_BIN});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(absl::StripAsciiWhitespace(r.out));
  }
  void Submit(ServerUnderTest& server, const std::string& yaml) {
    WriteFile(dir_.File("sweep.yaml"), yaml);
    CommandResult r = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(),
                                  "submit", dir_.File("sweep.yaml")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  int64_t Q(ServerUnderTest& server, const std::string& sql) {
    return QueryInt(server.db_path(), sql);
  }
  std::string Logs() {
    CommandResult r = RunCommand(
        {"/bin/bash", "-c", "tail -n 30 " + dir_.File("logs") + "/*.log"});
    return r.out;
  }
  bool ArrayGone(const std::string& job) {
    CommandResult r = RunCommand({"/usr/bin/squeue", "-h", "-j", job});
    return r.out.empty();
  }

  static bool started_;
  static std::string start_log_;
  TempDir dir_;
};
bool SlurmTest::started_ = false;
std::string SlurmTest::start_log_;

TEST_F(SlurmTest, JobArrayRunsTheSweepExactlyOnce) {
  ServerUnderTest server(dir_);
  Submit(server, SweepYaml("slurm-array", 6, 3000));
  const std::string job = Launch(server, 4, 2);
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'") ==
               6;
      },
      300))
      << Logs();
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts"), 6);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM results WHERE name = 'accuracy'"),
            6);
  // Worker identity comes from the array job and task ids.
  EXPECT_EQ(
      Q(server, "SELECT COUNT(*) FROM attempts WHERE worker_id LIKE 'slurm-" +
                    job + "\\_%' ESCAPE '\\'"),
      6);
  EXPECT_TRUE(WaitUntil([&] { return ArrayGone(job); }, 60))
      << "workers did not exit when idle";
}

TEST_F(SlurmTest, RequeueAndScancelMidTrialFinishExactlyOnce) {
  ServerUnderTest server(dir_);
  Submit(server, SweepYaml("slurm-preempt", 2, 20000));
  const std::string job = Launch(server, 2, 2);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server,
                 "SELECT COUNT(*) FROM trials WHERE last_step >= 1000") == 2;
      },
      120))
      << Logs();
  CommandResult r = RunCommand({"/usr/bin/scontrol", "requeue", job + "_0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand({"/usr/bin/scancel", job + "_1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Both running trials are handed back with checkpoints; the requeued task
  // comes back (~11 s) and finishes both, resuming from the checkpoints.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'") ==
               2;
      },
      300))
      << Logs();
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'done'"), 2);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM results WHERE name = 'accuracy'"),
            2);
  // Each signalled task hands back what it runs: at least the two trials.
  // The task signalled second may first have leased the trial the first
  // one handed back, and then hands that back too; every attempt still
  // ends done or preempted, none lost or failed.
  EXPECT_GE(
      Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'preempted'"), 2)
      << Logs();
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM attempts WHERE state NOT IN "
              "('done', 'preempted')"),
            0)
      << Logs();
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM attempts WHERE state = 'done' AND "
              "start_step > 0"),
            2);
  EXPECT_EQ(Q(server, "SELECT SUM(failures) FROM trials"), 0);
  EXPECT_TRUE(WaitUntil([&] { return ArrayGone(job); }, 60));
}

}  // namespace
}  // namespace qkov::testing
