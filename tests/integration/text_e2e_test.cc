// The quick HateXplain preset end to end: the real qkov-server, two real
// qkov-worker processes and the qkov CLI on loopback, reading the shipped
// data (../shared/data); then the results, heatmaps and figures are checked
// against the SQLite file, and the faster-QK arm's attention on the
// rationale is checked to be well above the baseline's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/data_available.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

TEST(TextEndToEndTest, QuickHateXplainPresetThroughServerWorkersAndCli) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  TempDir dir;
  ServerUnderTest server(dir);
  const std::string at = "--server=" + server.address();
  // The preset names its data relative to the repository root; the test
  // points the same settings at the configured data folder.
  CommandResult submit = RunCommand(
      {QKOV_CLI_BIN, at, "submit", "--preset", "paper-hatexplain", "--quick",
       "--set",
       "training.text.train.path=" + kShared +
           "/hatexplain/train-reconstructed.jsonl",
       "--set",
       "training.text.validation.path=" + kShared +
           "/hatexplain/validation.jsonl",
       "--set", "training.text.test.path=" + kShared + "/hatexplain/test.jsonl",
       "--set",
       "training.text.vocab_path=" + kShared +
           "/tokenizers/bert-base-uncased/vocab.txt"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("paper-hatexplain-quick: 2 trials (2 new"),
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

  // The evaluation used the quick preset's subsets of the real files, and
  // each attempt records the checksums of the files it read.
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = "
                     "'test_examples' AND value = 1000"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = "
                     "'validation_examples' AND value = 500"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM results WHERE name = "
                     "'train_examples' AND value = 15383"),
            2);
  // Three epochs over every training post show the paper's direction: the
  // faster-QK arm's test attention on the rationale is several times the
  // baseline's, at an accuracy not below it.
  auto result = [&](const std::string& name, int lr_ratio) {
    auto rows = QueryRows(
        db, absl::StrCat("SELECT r.value FROM results r JOIN trials t USING "
                         "(trial_id) WHERE r.name = '",
                         name, "' AND t.lr_ratio = ", lr_ratio));
    EXPECT_EQ(rows.size(), 1u) << name << " " << lr_ratio;
    return rows.empty() ? 0.0 : std::stod(rows[0][0]);
  };
  EXPECT_GT(result("test_rationale_mass", 30),
            3 * result("test_rationale_mass", 1));
  EXPECT_GE(result("test_accuracy", 30), result("test_accuracy", 1));
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM attempts WHERE state = 'done' AND "
                     "json_extract(provenance_json, "
                     "'$.input_sha256.\"text.vocab_path\"') = "
                     "'07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c"
                     "992038a3'"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM attempts WHERE state = 'done' AND "
                     "length(json_extract(provenance_json, "
                     "'$.input_sha256.\"text.test\"')) = 64"),
            2);

  // qkov results shows the text metrics, one row per trial, as stored.
  CommandResult results =
      RunCommand({QKOV_CLI_BIN, at, "results", "paper-hatexplain-quick",
                  "--format", "csv"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  std::vector<std::string> lines =
      absl::StrSplit(results.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << results.out;
  EXPECT_NE(lines[0].find("test_rationale_mass_head0"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("test_comprehensiveness"), std::string::npos);
  EXPECT_EQ(lines[0].rfind("trial,arm,param,", 0), 0u) << lines[0];
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(fields.size(), 14u) << lines[i];
    EXPECT_EQ(fields[1], i == 1 ? "baseline" : "faster") << lines[i];
    EXPECT_EQ(fields[6], "done") << lines[i];
    for (const std::string& f : fields)
      EXPECT_NE(f, "-") << lines[i];  // every default column is stored
  }

  // The preset's two arms (docs/sweep-files.md, "Arms"): each trial's
  // stored config carries its arm's weight decay, MLP rate and ratio, and
  // `qkov results --by arm` groups by them.
  EXPECT_EQ(
      QueryRows(
          db,
          "SELECT json_extract(config_json, '$.arm'), "
          "json_extract(config_json, '$.training.optimizer.weight_decay'),"
          " json_extract(config_json, '$.training.text.mlp_lr_multiplier'"
          "), printf('%g', lr_ratio) FROM trials ORDER BY ordinal"),
      (std::vector<std::vector<std::string>>{{"baseline", "0.0001", "1", "1"},
                                             {"faster", "0.001", "0", "30"}}));
  CommandResult by_arm =
      RunCommand({QKOV_CLI_BIN, at, "results", "paper-hatexplain-quick", "--by",
                  "arm", "--metrics", "test_accuracy", "--format", "csv"});
  ASSERT_EQ(by_arm.exit_code, 0) << by_arm.err;
  lines = absl::StrSplit(by_arm.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << by_arm.out;
  EXPECT_EQ(lines[1].rfind("baseline,1,", 0), 0u) << by_arm.out;
  EXPECT_EQ(lines[2].rfind("faster,1,", 0), 0u) << by_arm.out;

  CommandResult status =
      RunCommand({QKOV_CLI_BIN, at, "status", "paper-hatexplain-quick"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("optimizer.weight_decay=0.001, "
                            "text.mlp_lr_multiplier=0"),
            std::string::npos)
      << status.out;

  // An arm with an unknown key is refused by the CLI, one with a bad value
  // by the server; each names the arm and the key, and nothing is stored.
  const std::string bad = dir.File("bad-arm.yaml");
  for (const auto& [setting, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"weight_decayy: 1.0e-3",
            "axes.arm[faster].training.optimizer.weight_decayy: unknown key"},
           {"momentum: 2",
            "spec.axes.arms[faster].training.optimizer.momentum: must be in "
            "[0, "}}) {
    WriteFile(bad, absl::StrCat(
                       "name: bad-arm\naxes:\n  parameterization: [FAFO]\n"
                       "  eta_ov: [5.0e-5]\n  seed: [1]\n  arm:\n"
                       "    - {name: baseline, lr_ratio: 1}\n"
                       "    - name: faster\n      lr_ratio: 30\n"
                       "      training: {optimizer: {",
                       setting,
                       "}}\ntraining:\n  task: hatexplain\n  text: {train: "
                       "{path: ",
                       kShared,
                       "/hatexplain/train-reconstructed.jsonl}, vocab_path: ",
                       kShared, "/tokenizers/bert-base-uncased/vocab.txt}\n"));
    CommandResult refused = RunCommand({QKOV_CLI_BIN, at, "submit", bad});
    EXPECT_NE(refused.exit_code, 0) << setting;
    EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
  }
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM sweeps"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM trials"), 2);

  // Both trials stored the test and validation DTAP heatmaps, 3 x 3 bins of
  // percentages that sum to 100; qkov trial prints the test one.
  auto heatmaps = QueryRows(db,
                            "SELECT trial_id, name FROM artifacts WHERE kind = "
                            "'heatmap' ORDER BY trial_id, name");
  ASSERT_EQ(heatmaps.size(), 4u);
  EXPECT_EQ(heatmaps[0][1], "dtap");
  EXPECT_EQ(heatmaps[1][1], "dtap_validation");
  CommandResult trial = RunCommand({QKOV_CLI_BIN, at, "trial", heatmaps[0][0]});
  ASSERT_EQ(trial.exit_code, 0) << trial.err;
  EXPECT_NE(trial.out.find("dtap heatmap"), std::string::npos) << trial.out;
  EXPECT_NE(trial.out.find("rationale attention (layer 0, head 0)"),
            std::string::npos)
      << trial.out;

  // The figures: the ratio figure of the rationale mass carries the stored
  // value of each arm (one seed: the mean is the value).
  CommandResult plot =
      RunCommand({QKOV_CLI_BIN, at, "plot", "paper-hatexplain-quick", "--out",
                  dir.File("plots")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  for (const char* name :
       {"ratio_test_rationale_mass_head0", "ratio_test_accuracy", "dtap_grid",
        "curves_train_loss", "curves_train_accuracy"}) {
    EXPECT_TRUE(IsValidPng(dir.File(std::string("plots/") + name + ".png")))
        << name;
  }
  std::map<std::string, double> stored;
  for (const auto& row :
       QueryRows(db,
                 "SELECT printf('%g', t.lr_ratio), r.value FROM results r "
                 "JOIN trials t USING (trial_id) WHERE r.name = "
                 "'test_rationale_mass_head0'")) {
    stored[row[0]] = std::stod(row[1]);
  }
  ASSERT_EQ(stored.size(), 2u);
  const std::vector<RatioPoint> points =
      ReadRatioFigure(dir.File("plots/ratio_test_rationale_mass_head0.dat"));
  ASSERT_EQ(points.size(), 2u);
  for (const RatioPoint& p : points) {
    ASSERT_TRUE(stored.count(p.ratio)) << p.ratio;
    EXPECT_NEAR(p.mean, stored[p.ratio], 1e-6) << p.ratio;
  }
}

}  // namespace
}  // namespace qkov::testing
