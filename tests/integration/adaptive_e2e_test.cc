// Adaptive sweeps with real processes on loopback: a ratio search on the
// synthetic task through qkov-server, two qkov-workers and the CLI, the
// server killed with SIGKILL mid-search and restarted; the search ends with
// every probe run exactly once, `qkov search`, `qkov results` and `qkov plot
// --kind search` show what the database holds, and submitting the file
// again adds nothing. Median stopping ends the slow trials of a sweep, and
// a killed server, a retry and a re-submission never lease them again.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

// FAFO at eta_OV 0.5 for 4,000 steps: distinct-token attention stays at its
// uniform value (0.347) up to ratio 5 and passes 0.6 between 10 and 20
// (0.47 at 10, 0.89 at 20), so a search over [1, 60] with 4 coarse points
// bisects several times. About half a second a trial on one core.
constexpr char kSearchYaml[] = R"(name: search
axes:
  parameterization: [FAFO]
  eta_ov: [0.5]
  seed: [100, 101]
search:
  metric: distinct_attention
  op: ">="
  target: 0.6
  lo: 1
  hi: 60
  resolution: 1.1
  coarse_points: 4
training:
  max_steps: 4000
  report_every: 500
  target_loss: -1
  evaluation: {num_examples: 256}
)";

class AdaptiveE2eTest : public ::testing::Test {
 protected:
  CommandResult Cli(ServerUnderTest& server,
                    const std::vector<std::string>& args) {
    std::vector<std::string> argv = {QKOV_CLI_BIN,
                                     "--server=" + server.address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }
  std::unique_ptr<Process> Worker(ServerUnderTest& server,
                                  const std::string& name,
                                  const std::string& extra_flag = "") {
    std::vector<std::string> argv = {
        QKOV_WORKER_BIN, "--server=" + server.address(), "--name=" + name,
        "--exit_when_idle", "--unreachable_timeout_seconds=120"};
    if (!extra_flag.empty()) argv.push_back(extra_flag);
    return std::make_unique<Process>(argv, dir_.File(name + ".log"));
  }
  int64_t Q(ServerUnderTest& server, const std::string& sql) {
    return QueryInt(server.db_path(), sql);
  }
  TempDir dir_;
};

TEST_F(AdaptiveE2eTest, ServerKilledMidSearchFinishesWithEachProbeOnce) {
  ServerUnderTest server(dir_);
  const std::string file = dir_.File("search.yaml");
  WriteFile(file, kSearchYaml);
  CommandResult sub = Cli(server, {"submit", file});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_NE(sub.out.find("8 trials (8 new"), std::string::npos) << sub.out;
  auto a = Worker(server, "a");
  auto b = Worker(server, "b");
  // Killed once the search has gone past its coarse grid.
  ASSERT_TRUE(WaitUntil(
      [&] { return Q(server, "SELECT COUNT(*) FROM trials") > 8; }, 120));
  server.process().Signal(SIGKILL);
  server.process().Wait(10);
  const int64_t at_kill = Q(server, "SELECT COUNT(*) FROM trials");
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM searches WHERE state = 'running'"),
            1);
  server.Restart();
  ASSERT_EQ(a->Wait(180), 0) << ReadFile(dir_.File("a.log"));
  ASSERT_EQ(b->Wait(180), 0) << ReadFile(dir_.File("b.log"));

  // The search ended (the workers found no work only once it had), every
  // trial is done with exactly one done attempt, each probe has both seeds
  // and the stored outcome lists every probe.
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM searches WHERE state = 'found'"),
            1);
  const int64_t trials = Q(server, "SELECT COUNT(*) FROM trials");
  EXPECT_GT(trials, at_kill);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            trials);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts WHERE state = 'done'"),
            trials);
  EXPECT_EQ(Q(server, "SELECT COUNT(DISTINCT lr_ratio) FROM trials") * 2,
            trials);
  EXPECT_EQ(Q(server,
              "SELECT json_array_length(outcome_json, '$.probes') FROM "
              "searches") *
                2,
            trials);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM pragma_integrity_check WHERE "
              "integrity_check = 'ok'"),
            1);

  // qkov search: the bracket, within the resolution, around the crossing
  // the stored seed means show.
  CommandResult s = Cli(server, {"search", "search", "--format", "csv"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::vector<std::string> lines = absl::StrSplit(s.out, '\n');
  ASSERT_GE(lines.size(), 2u) << s.out;
  std::vector<std::string> cells = absl::StrSplit(lines[1], ',');
  ASSERT_GE(cells.size(), 9u) << s.out;
  EXPECT_EQ(cells[2], "found");
  double below = 0, above = 0, mean_below = 0, mean_above = 0;
  ASSERT_TRUE(absl::SimpleAtod(cells[3], &below));
  ASSERT_TRUE(absl::SimpleAtod(cells[4], &above));
  ASSERT_TRUE(absl::SimpleAtod(cells[6], &mean_below));
  ASSERT_TRUE(absl::SimpleAtod(cells[8], &mean_above));
  EXPECT_LE(above / below, 1.1 * (1 + 1e-3));
  EXPECT_LT(mean_below, 0.6);
  EXPECT_GE(mean_above, 0.6);
  const std::string mean_at =
      "SELECT AVG(r.value) FROM results r JOIN trials t USING (trial_id) "
      "WHERE r.name = 'distinct_attention' AND ABS(t.lr_ratio / ";
  const int64_t below_ok =
      Q(server,
        absl::StrCat("SELECT (", mean_at, above, " - 1) < 1e-3) >= 0.6 AND (",
                     mean_at, below, " - 1) < 1e-3) < 0.6"));
  EXPECT_EQ(below_ok, 1);

  // qkov results ends with the same table; the figure is a real PNG.
  CommandResult r = Cli(server, {"results", "search"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("search: smallest lr_ratio in [1, 60] with seed-mean "
                       "distinct_attention >= 0.6"),
            std::string::npos)
      << r.out;
  CommandResult p =
      Cli(server, {"plot", "search", "--kind", "search", "--out", dir_.path()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(IsValidPng(dir_.File("search.png")));
  EXPECT_NE(ReadFile(dir_.File("search.dat")).find(cells[4]),
            std::string::npos);

  // Submitting the file again resumes: nothing new, nothing queued.
  CommandResult again = Cli(server, {"submit", file});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("(0 new"), std::string::npos) << again.out;
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM trials WHERE state <> 'done'"), 0);
}

// Two trials at eta_OV 0.5, whose training loss falls (1.33 at step 1000),
// then two at 1e-4, whose loss stays at ln 50 = 3.91: with one worker
// training one trial at a time, in grid order, median stopping on
// train_loss with two peers needed judges only the slow trials, and stops
// each at step 1000.
constexpr char kStoppingYaml[] = R"(name: stopping
axes:
  parameterization: [FAFO]
  lr_ratio: [1]
  eta_ov: [0.5, 1.0e-4]
  seed: [100, 101]
early_stopping:
  rule: median
  metric: train_loss
  mode: min
  min_steps: 1000
  min_peers: 2
training:
  max_steps: 4000
  report_every: 500
  target_loss: -1
  evaluation: {num_examples: 256}
)";

TEST_F(AdaptiveE2eTest, EarlyStoppedTrialsAreNeverLeasedAgain) {
  ServerUnderTest server(dir_);
  const std::string file = dir_.File("stopping.yaml");
  WriteFile(file, kStoppingYaml);
  CommandResult sub = Cli(server, {"submit", file});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  auto w = Worker(server, "one", "--batch_trials=1");
  ASSERT_EQ(w->Wait(180), 0) << ReadFile(dir_.File("one.log"));
  const std::string stopped =
      "SELECT COUNT(*) FROM trials WHERE state = 'stopped_early' AND eta_ov < "
      "0.001";
  EXPECT_EQ(Q(server, stopped), 2);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM trials WHERE state = 'done' AND "
              "eta_ov > 0.1"),
            2);
  // Stopped at the first judged step, their curves kept up to it, no
  // results, one attempt each that says why.
  EXPECT_EQ(Q(server,
              "SELECT MAX(m.step) FROM metrics m JOIN trials t USING "
              "(trial_id) WHERE t.state = 'stopped_early'"),
            1000);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM results r JOIN trials t USING "
              "(trial_id) WHERE t.state = 'stopped_early'"),
            0);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM attempts WHERE state = "
              "'stopped_early' AND error LIKE 'early stopping "
              "(median)%'"),
            2);

  // The server killed and restarted, the sweep retried and re-submitted: a
  // new worker finds nothing to do, and the stopped trials keep their one
  // attempt.
  server.process().Signal(SIGKILL);
  server.process().Wait(10);
  server.Restart();
  ASSERT_EQ(Cli(server, {"retry", "stopping"}).exit_code, 0);
  ASSERT_EQ(Cli(server, {"submit", file}).exit_code, 0);
  auto again = Worker(server, "two");
  ASSERT_EQ(again->Wait(60), 0) << ReadFile(dir_.File("two.log"));
  EXPECT_EQ(Q(server, stopped), 2);
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts"), 4);
  CommandResult status = Cli(server, {"watch", "stopping"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("4/4 finished: 2 done, 0 diverged, 0 failed, 0 "
                            "cancelled, 2 stopped early"),
            std::string::npos)
      << status.out;
  CommandResult trials =
      Cli(server, {"trials", "stopping", "--state", "stopped_early"});
  ASSERT_EQ(trials.exit_code, 0) << trials.err;
  EXPECT_NE(trials.out.find("stopped_early"), std::string::npos) << trials.out;
}

// The same sweep trained as one batch of four (a --batch_trials worker
// reports each trial's points in trial order): the two slow trials are
// dropped from the batch at step 1000, the two fast ones train on to the
// end and complete.
TEST_F(AdaptiveE2eTest, EarlyStopDropsTrialsFromABatchAndTheRestFinish) {
  ServerUnderTest server(dir_);
  const std::string file = dir_.File("stopping.yaml");
  WriteFile(file, kStoppingYaml);
  ASSERT_EQ(Cli(server, {"submit", file}).exit_code, 0);
  auto w = Worker(server, "batch", "--batch_trials=4");
  ASSERT_EQ(w->Wait(180), 0) << ReadFile(dir_.File("batch.log"));
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM trials WHERE state = "
              "'stopped_early' AND eta_ov < 0.001"),
            2);
  EXPECT_EQ(Q(server,
              "SELECT COUNT(*) FROM trials t JOIN results r USING "
              "(trial_id) WHERE t.state = 'done' AND t.eta_ov > 0.1 "
              "AND r.name = 'steps' AND r.value = 4000"),
            2);
  EXPECT_EQ(Q(server,
              "SELECT MAX(m.step) FROM metrics m JOIN trials t USING "
              "(trial_id) WHERE t.state = 'stopped_early'"),
            1000);
  // One lease per trial: the batch leased all four at once.
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM attempts"), 4);
}

TEST_F(AdaptiveE2eTest, BadSearchFilesAreRefusedWithTheField) {
  ServerUnderTest server(dir_);
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"metric: distinct_attention", "metric: distinct_atention",
       "spec.search.metric: unknown result 'distinct_atention' for task "
       "synthetic"},
      {"target: 0.6", "target: 2", "spec.search.target: must be in [0, 1]"},
      {"hi: 60", "hi: 1", "spec.search.hi: must be > lo = 1"},
      {"lo: 1", "lo: 100", "spec.search.hi: must be > lo = 100"},
      {"  metric: distinct", "  axis: eta_ov\n  metric: distinct",
       "spec.search.axis: only lr_ratio can be searched"},
  };
  for (const Case& c : cases) {
    std::string yaml = kSearchYaml;
    const size_t at = yaml.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    yaml.replace(at, c.from.size(), c.to);
    const std::string file = dir_.File("bad.yaml");
    WriteFile(file, yaml);
    CommandResult r = Cli(server, {"submit", file});
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.out << r.err;
    // Exit 2 and "invalid: ": the server's INVALID_ARGUMENT.
    EXPECT_NE(r.err.find("invalid: " + c.message), std::string::npos) << r.err;
  }
  EXPECT_EQ(Q(server, "SELECT COUNT(*) FROM sweeps"), 0);
}

}  // namespace
}  // namespace qkov::testing
