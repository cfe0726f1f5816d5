// Figures are drawn by gnuplot without a shell: file names and labels with
// quotes, `$(...)` or newlines are text, never commands.
#include "client/plot.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace qkov::client {
namespace {

namespace fs = std::filesystem;

qkov::v1::ResultRow Done(qkov::v1::Parameterization p, double ratio,
                         uint64_t seed, double value) {
  qkov::v1::ResultRow r;
  r.mutable_config()->set_parameterization(p);
  r.mutable_config()->set_lr_ratio(ratio);
  r.mutable_config()->set_eta_ov(0.01);
  r.mutable_config()->set_seed(seed);
  r.set_state(qkov::v1::DONE);
  (*r.mutable_values())["distinct_attention"] = value;
  return r;
}

TEST(PlotTest, OutWithQuotesAndShellSyntaxRunsNothing) {
  char tmpl[] = "/tmp/qkov-plot-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  // A shell would run `touch`; gnuplot's `system` would too, were the name
  // pasted into the script unquoted. Both would run in the working
  // directory, which is `dir` for this test.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  const std::string hostile =
      "fig'; system('touch PWNED'); print '$(touch PWNED2)`touch PWNED3`";
  const std::string out = (dir / hostile).string();
  std::vector<qkov::v1::ResultRow> rows = {
      Done(qkov::v1::FAFO, 1, 1, 0.2), Done(qkov::v1::FAFO, 1, 2, 0.3),
      Done(qkov::v1::FAFO, 20, 1, 0.6), Done(qkov::v1::FAFO, 20, 2, 0.7)};
  absl::Status s = PlotRatio(rows, "distinct_attention", out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(fs::exists(out + ".png"));
  EXPECT_TRUE(fs::exists(out + ".svg"));
  EXPECT_TRUE(fs::exists(out + ".dat"));
  fs::current_path(cwd);
  for (const char* name : {"PWNED", "PWNED2", "PWNED3"})
    EXPECT_FALSE(fs::exists(dir / name)) << name;
  fs::remove_all(dir);
}

// Fig. 3: the mean final loss per (parameterization, alpha) and the slope
// between adjacent alphas, as the .dat file records them.
TEST(PlotTest, FixedAttentionLossAndSlopeFromTheRows) {
  char tmpl[] = "/tmp/qkov-plot-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  auto row = [](qkov::v1::Parameterization p, double alpha, uint64_t seed,
                double loss) {
    qkov::v1::ResultRow r;
    r.mutable_config()->set_parameterization(p);
    r.mutable_config()->set_alpha(alpha);
    r.mutable_config()->set_seed(seed);
    r.mutable_config()->mutable_training()->set_task(
        qkov::v1::TASK_FIXED_ATTENTION);
    r.set_state(qkov::v1::DONE);
    (*r.mutable_values())["loss"] = loss;
    return r;
  };
  // CACO: mean loss 0.6 at alpha 0.2 (0.5, 0.7), 0.2 at 0.6; FAFO 0.01, 0.002.
  std::vector<qkov::v1::ResultRow> rows = {
      row(qkov::v1::CACO, 0.2, 1, 0.5), row(qkov::v1::CACO, 0.2, 2, 0.7),
      row(qkov::v1::CACO, 0.6, 1, 0.2), row(qkov::v1::FAFO, 0.2, 1, 0.01),
      row(qkov::v1::FAFO, 0.6, 1, 0.002)};
  const std::string base = (dir / "fig3").string();
  ASSERT_TRUE(PlotFixedAttention(rows, base).ok());
  std::ifstream in(base + ".dat");
  std::stringstream text;
  text << in.rdbuf();
  // Blocks: CACO loss, CACO slope, FAFO loss, FAFO slope.
  EXPECT_NE(text.str().find("# CACO\n0.2 0.6\n0.6 0.2\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("# CACO slope\n0.4 1\n"), std::string::npos)
      << text.str();  // -(0.2 - 0.6) / 0.4
  EXPECT_NE(text.str().find("# FAFO slope\n0.4 0.02\n"), std::string::npos)
      << text.str();  // -(0.002 - 0.01) / 0.4
  EXPECT_GT(fs::file_size(base + ".png"), 1000u);
  EXPECT_GT(fs::file_size(base + ".svg"), 1000u);
  // Rows without alpha (another task) give no figure and say so.
  std::vector<qkov::v1::ResultRow> none = {Done(qkov::v1::FAFO, 1, 1, 0.2)};
  EXPECT_EQ(PlotFixedAttention(none, (dir / "none").string()).code(),
            absl::StatusCode::kFailedPrecondition);
  fs::remove_all(dir);
}

// Fig. 4: every r's trajectory in the .dat file, time as log10(1 + tau).
TEST(PlotTest, TheoryTrajectoriesAgainstLogTime) {
  char tmpl[] = "/tmp/qkov-plot-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  std::vector<TheoryTrajectory> curves = {
      {0.1, {0, 9, 99}, {0, 1, 2}, {0, 0.1, 0.2}, {3, 1, 0.1}, {0.1, 0.2, 0.3}},
      {10, {0, 99}, {0, 1.5}, {0, 2}, {3, 0.05}, {0.1, 0.9}}};
  const std::string base = (dir / "fig4").string();
  ASSERT_TRUE(PlotTheoryTime(curves, base).ok());
  std::ifstream in(base + ".dat");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("# r = 0.1\n0 0 0 3 0.1\n1 1 0.1 1 0.2\n2 2 0.2 "
                            "0.1 0.3\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("# r = 10\n0 0 0 3 0.1\n2 1.5 2 0.05 0.9\n"),
            std::string::npos)
      << text.str();
  EXPECT_GT(fs::file_size(base + ".png"), 1000u);
  std::vector<TheoryThresholds> at = {
      {1, {1, 0.1}, {2, 5}, {0.5, 1}, {0.2, 0.4}}};
  ASSERT_TRUE(PlotTheoryThresholds(at, (dir / "th").string()).ok());
  EXPECT_GT(fs::file_size((dir / "th.png").string()), 1000u);
  EXPECT_EQ(PlotTheoryTime({}, (dir / "empty").string()).code(),
            absl::StatusCode::kFailedPrecondition);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qkov::client
