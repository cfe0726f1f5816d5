// On a real single-node Slurm cluster (munge, slurmctld, slurmd started by
// tests/slurm/start-cluster.sh): workers launched as a job array through
// deploy/slurm/launch-workers.sh run a sweep to the end, survive
// `scontrol requeue` and `scancel` in the middle of a trial, reach a TLS
// server by the name its certificate carries (docs/cluster.md's settings in
// the env file), and drain on `scancel --signal=USR2 --batch`. Needs root
// (the cluster's daemons); skipped, saying so, without it.
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

  // `env`: more lines of the env file (docs/cluster.md, the researcher);
  // `more`: more options of launch-workers.sh.
  std::string Launch(ServerUnderTest& server, int workers, int concurrent,
                     const std::string& env = "",
                     const std::vector<std::string>& more = {}) {
    WriteFile(dir_.File("cluster.env"),
              "QKOV_SERVER=" + server.address() + "\n" + env);
    chmod(dir_.File("cluster.env").c_str(), 0600);
    std::vector<std::string> argv = {
        "/bin/bash",    QKOV_SOURCE_DIR "/deploy/slurm/launch-workers.sh",
        "--env-file",   dir_.File("cluster.env"),
        "--workers",    std::to_string(workers),
        "--concurrent", std::to_string(concurrent),
        "--log-dir",    dir_.File("logs"),
        "--worker-bin", QKOV_WORKER_BIN};
    argv.insert(argv.end(), more.begin(), more.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(absl::StripAsciiWhitespace(r.out));
  }
  void Submit(ServerUnderTest& server, const std::string& yaml,
              const std::vector<std::string>& flags = {}) {
    WriteFile(dir_.File("sweep.yaml"), yaml);
    std::vector<std::string> argv = {QKOV_CLI_BIN,
                                     "--server=" + server.address()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"submit", dir_.File("sweep.yaml")});
    CommandResult r = RunCommand(argv);
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

// The lab's TLS as docs/cluster.md sets it up: a certificate that names
// qkov.lab.example only (no IP address), reached at 127.0.0.1, so a worker
// connects only if the env file's QKOV_TLS_SERVER_NAME reaches it; a
// worker-role token from the env file. Then `scancel --signal=USR2 --batch`
// mid-trial: the worker finishes that trial, leases no other, and its task
// ends without a requeue.
TEST_F(SlurmTest, TlsByTheCertificatesNameAndADrain) {
  const std::string script = absl::StrCat(
      "set -e; cd '", dir_.path(), "'\n",
      "ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
      "openssl req -x509 $ec -keyout ca.key -out ca.pem -days 1 "
      "-subj /CN=lab-ca 2>/dev/null\n"
      "openssl req $ec -keyout server.key -out server.csr "
      "-subj /CN=qkov.lab.example 2>/dev/null\n"
      "printf 'subjectAltName=DNS:qkov.lab.example\\n' >server.ext\n"
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -out server.pem -days 1 -extfile server.ext "
      "2>/dev/null\n"
      "printf 'worker worker-token-0123456789 workers\\n"
      "user user-token-0123456789ab alice\\n' >tokens\n"
      "printf 'worker-token-0123456789\\n' >worker.token\n"
      "printf 'user-token-0123456789ab\\n' >user.token\n"
      "chmod 600 worker.token user.token\n");
  CommandResult certs = RunCommand({"/bin/bash", "-c", script});
  ASSERT_EQ(certs.exit_code, 0) << certs.err;
  ServerUnderTest server(dir_, {"--tls_cert=" + dir_.File("server.pem"),
                                "--tls_key=" + dir_.File("server.key"),
                                "--token_file=" + dir_.File("tokens")});
  // 600,000 steps: ~20 s per trial here, long enough to drain mid-trial.
  Submit(
      server, SweepYaml("slurm-tls", 2, 600000),
      {"--tls_ca=" + dir_.File("ca.pem"), "--tls_server_name=qkov.lab.example",
       "--token_file=" + dir_.File("user.token")});
  const std::string job =
      Launch(server, 1, 1,
             "QKOV_TOKEN_FILE=" + dir_.File("worker.token") +
                 "\nQKOV_TLS_CA=" + dir_.File("ca.pem") +
                 "\nQKOV_TLS_SERVER_NAME=qkov.lab.example\n",
             {"--batch-trials", "1"});  // one trial held: the other waits
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Q(server,
                 "SELECT COUNT(*) FROM trials WHERE last_step >= 1000") >= 1;
      },
      120))
      << Logs();
  ASSERT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'"), 0)
      << "the first trial ended before the drain (training ran too fast)";
  CommandResult r =
      RunCommand({"/usr/bin/scancel", "--signal=USR2", "--batch", job});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(WaitUntil([&] { return ArrayGone(job); }, 120)) << Logs();
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'"), 1)
      << Logs();
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'queued'"), 1);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts"), 1);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'done'"), 1);
  EXPECT_NE(Logs().find("worker exited 0 (signal 'USR2')"), std::string::npos)
      << Logs();
}

}  // namespace
}  // namespace qkov::testing
