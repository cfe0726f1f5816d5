// The quick SQuAD preset end to end: the real qkov-server, two real
// qkov-worker processes and the qkov CLI on loopback, reading the shipped
// dev set and GPT-2 tokenizer (../shared/data); then the results, the DTAP
// heatmaps and the figures are checked against the SQLite file. The test
// trims the quick preset's budget further (40 steps, 10 evaluation
// questions): what it checks is the path through the system, not the
// paper's direction.
#include <gtest/gtest.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/data_available.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

TEST(SquadEndToEndTest, QuickSquadPresetThroughServerWorkersAndCli) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  TempDir dir;
  ServerUnderTest server(dir);
  const std::string at = "--server=" + server.address();
  const std::string dev = kShared + "/squad/dev-v1.1-all.json";
  CommandResult submit = RunCommand(
      {QKOV_CLI_BIN,
       at,
       "submit",
       "--preset",
       "paper-squad",
       "--quick",
       "--set",
       "training.squad.train.path=" + dev,
       "--set",
       "training.squad.eval.path=" + dev,
       "--set",
       "training.squad.validation.path=" + dev,
       "--set",
       "training.squad.encoder_path=" + kShared +
           "/tokenizers/gpt2/encoder.json",
       "--set",
       "training.squad.merges_path=" + kShared + "/tokenizers/gpt2/vocab.bpe",
       "--set",
       "training.max_steps=40",
       "--set",
       "training.optimizer.warmup_steps=4",
       "--set",
       "training.evaluation.num_examples=10",
       "--set",
       "training.report_every=10"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("paper-squad-quick: 2 trials (2 new"),
            std::string::npos)
      << submit.out;

  Process w1({QKOV_WORKER_BIN, at, "--name=w1", "--exit_when_idle"},
             dir.File("w1.log"));
  Process w2({QKOV_WORKER_BIN, at, "--name=w2", "--exit_when_idle"},
             dir.File("w2.log"));
  ASSERT_EQ(w1.Wait(900), 0) << ReadFile(dir.File("w1.log"));
  ASSERT_EQ(w2.Wait(900), 0) << ReadFile(dir.File("w2.log"));
  const std::string db = server.db_path();
  ASSERT_EQ(QueryInt(db, "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            2);

  // Both trials trained 40 steps on the 8,123 questions of articles
  // [0, 36), validated once (40 steps of 16 are less than an epoch: after
  // the last step) on 20 of articles [36, 40), were scored on 10 of
  // articles [40, 48), reported the training loss every 10 steps, and
  // recorded the checksums of the files they read.
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = 'steps' AND "
                     "value = 40"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = "
                     "'train_questions' AND value = 8123"),
            2);
  EXPECT_EQ(
      QueryInt(db,
               "SELECT COUNT(*) FROM metrics WHERE name = 'selection_f1' AND "
               "step = 40"),
      2);
  EXPECT_EQ(
      QueryInt(db,
               "SELECT COUNT(*) FROM results r JOIN metrics m ON "
               "m.trial_id = r.trial_id AND m.name = 'selection_f1' WHERE "
               "r.name = 'selected_val_f1' AND r.value = m.value"),
      2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = "
                     "'selected_step' AND value = 40"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = 'train_f1' "
                     "AND value BETWEEN 0 AND 1"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = "
                     "'eval_examples' AND value = 10"),
            2);
  EXPECT_EQ(
      QueryInt(db, "SELECT COUNT(*) FROM metrics WHERE name = 'train_loss'"),
      8);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM attempts WHERE state = 'done' AND "
                     "json_extract(provenance_json, "
                     "'$.input_sha256.\"squad.merges_path\"') = "
                     "'1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b"
                     "7726adc5'"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM attempts WHERE state = 'done' AND "
                     "length(json_extract(provenance_json, "
                     "'$.input_sha256.\"squad.train\"')) = 64"),
            2);

  // qkov results shows the SQuAD metrics, one row per trial, as stored.
  CommandResult results = RunCommand(
      {QKOV_CLI_BIN, at, "results", "paper-squad-quick", "--format", "csv"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  std::vector<std::string> lines =
      absl::StrSplit(results.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << results.out;
  for (const char* column : {"eval_f1", "eval_em", "eval_answer_mass_rollout",
                             "eval_ac", "eval_comprehensiveness"}) {
    EXPECT_NE(lines[0].find(column), std::string::npos) << lines[0];
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_NE(lines[i].find(",done,"), std::string::npos) << lines[i];
    for (absl::string_view f : absl::StrSplit(lines[i], ','))
      EXPECT_NE(f, "-") << lines[i];  // every default column is stored
  }

  // qkov export writes the same results, and every reported loss point.
  CommandResult csv =
      RunCommand({QKOV_CLI_BIN, at, "export", "paper-squad-quick", "-o",
                  dir.File("results.csv")});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> rows = absl::StrSplit(
      ReadFile(dir.File("results.csv")), '\n', absl::SkipEmpty());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[0].find(",eval_f1,"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find(",train_questions,"), std::string::npos) << rows[0];
  CommandResult curves =
      RunCommand({QKOV_CLI_BIN, at, "export", "paper-squad-quick", "--per",
                  "point", "-o", dir.File("curves.csv")});
  ASSERT_EQ(curves.exit_code, 0) << curves.err;
  int loss_points = 0;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(dir.File("curves.csv")), '\n'))
    loss_points += absl::StrContains(line, ",train_loss,") ? 1 : 0;
  EXPECT_EQ(loss_points, 8);

  // Each trial stored the 4 x 4 DTAP heatmap; qkov trial prints it.
  auto heatmaps = QueryRows(
      db,
      "SELECT trial_id FROM artifacts WHERE kind = 'heatmap' AND name = "
      "'dtap' ORDER BY trial_id");
  ASSERT_EQ(heatmaps.size(), 2u);
  CommandResult trial = RunCommand({QKOV_CLI_BIN, at, "trial", heatmaps[0][0]});
  ASSERT_EQ(trial.exit_code, 0) << trial.err;
  EXPECT_NE(trial.out.find("dtap heatmap"), std::string::npos) << trial.out;
  EXPECT_NE(trial.out.find("rollout attention on the answer span"),
            std::string::npos)
      << trial.out;

  // The ratio figure of the answer-span rollout mass carries each arm's
  // stored value (one seed: the mean is the value).
  CommandResult plot =
      RunCommand({QKOV_CLI_BIN, at, "plot", "paper-squad-quick", "--out",
                  dir.File("plots")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  for (const char* name : {"ratio_eval_answer_mass_rollout", "ratio_eval_ac",
                           "ratio_eval_f1", "dtap_grid", "curves_train_loss"}) {
    EXPECT_TRUE(IsValidPng(dir.File(std::string("plots/") + name + ".png")))
        << name;
  }
  std::map<std::string, double> stored;
  for (const auto& row :
       QueryRows(db,
                 "SELECT printf('%g', t.lr_ratio), r.value FROM results r "
                 "JOIN trials t USING (trial_id) WHERE r.name = "
                 "'eval_answer_mass_rollout'")) {
    stored[row[0]] = std::stod(row[1]);
  }
  ASSERT_EQ(stored.size(), 2u);
  const std::vector<RatioPoint> points =
      ReadRatioFigure(dir.File("plots/ratio_eval_answer_mass_rollout.dat"));
  ASSERT_EQ(points.size(), 2u);
  for (const RatioPoint& p : points) {
    ASSERT_TRUE(stored.count(p.ratio)) << p.ratio;
    EXPECT_NEAR(p.mean, stored[p.ratio], 1e-6) << p.ratio;
  }
}

}  // namespace
}  // namespace qkov::testing
