// Figures are drawn by gnuplot without a shell: file names and labels with
// quotes, `$(...)` or newlines are text, never commands.
#include "client/plot.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "client/curve_figures.h"

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

// A task's own figure from its description (the ODE's Fig. 4 here): every
// r's line in the .dat file, x as drawn (log10(1 + tau)), then each panel's
// y; points pair by step, so a step one curve lacks is left out.
TEST(PlotTest, CurveFigureFromItsDescription) {
  char tmpl[] = "/tmp/qkov-plot-XXXXXX";
  const fs::path dir = mkdtemp(tmpl);
  CurveFigure f;
  f.name = "fig4";
  f.title = "Fig. 4";
  f.x = "tau";
  f.x_label = "log10(1 + tau)";
  f.x_log10_1p = true;
  f.columns = 2;
  f.panels = {{"mu_ov", "mu_OV"}, {"loss", "loss", true}, {"alpha", "alpha"}};
  const CurveLine slow =
      PairByStep(f, 0.1,
                 {{"tau", {{0, 0}, {1, 9}, {2, 99}}},
                  {"mu_ov", {{0, 0}, {1, 1}, {2, 2}}},
                  {"loss", {{0, 3}, {1, 1}, {2, 0.1}}},
                  {"alpha", {{0, 0.1}, {1, 0.2}, {2, 0.3}}}});
  const CurveLine fast =
      PairByStep(f, 10,
                 {{"tau", {{0, 0}, {1, 9}, {2, 99}}},
                  {"mu_ov", {{0, 0}, {2, 1.5}}},
                  {"loss", {{0, 3}, {1, 1}, {2, 0.05}}},
                  {"alpha", {{0, 0.1}, {1, 0.5}, {2, 0.9}}}});
  EXPECT_EQ(fast.x, (std::vector<double>{0, 99}));
  const std::string base = (dir / "fig4").string();
  ASSERT_TRUE(PlotCurveFigure(f, {slow, fast}, {}, base).ok());
  std::ifstream in(base + ".dat");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("# one block per r: log10(1+tau) mu_ov loss "
                            "alpha\n# r = 0.1\n0 0 3 0.1\n1 1 1 0.2\n2 2 0.1 "
                            "0.3\n\n\n# r = 10\n0 0 3 0.1\n2 1.5 0.05 0.9\n"),
            std::string::npos)
      << text.str();
  EXPECT_GT(fs::file_size(base + ".png"), 1000u);
  std::ifstream gp(base + ".gp");
  std::stringstream script;
  script << gp.rdbuf();
  EXPECT_NE(script.str().find("set multiplot layout 2,2"), std::string::npos)
      << script.str();
  // A loss axis falling to the right, with a trained arm on the first panel.
  CurveFigure at;
  at.name = "alpha";
  at.title = "alpha";
  at.x = "loss";
  at.x_label = "loss (decreasing ->)";
  at.log_x = at.reverse_x = at.overlay_matched = true;
  at.panels = {{"alpha", "alpha"}};
  const CurveLine line = PairByStep(
      at, 1, {{"loss", {{0, 1}, {1, 0.1}}}, {"alpha", {{0, 0.2}, {1, 0.4}}}});
  ASSERT_TRUE(PlotCurveFigure(at, {line}, {{"CACO r=20", {0.5}, {0.3}}},
                              (dir / "at").string())
                  .ok());
  std::ifstream at_in((dir / "at.dat").string());
  std::stringstream at_text;
  at_text << at_in.rdbuf();
  EXPECT_NE(at_text.str().find("# r = 1\n1 0.2\n0.1 0.4\n\n\n# trained CACO "
                               "r=20\n0.5 0.3\n"),
            std::string::npos)
      << at_text.str();
  EXPECT_GT(fs::file_size((dir / "at.png").string()), 1000u);
  EXPECT_EQ(PlotCurveFigure(f, {}, {}, (dir / "empty").string()).code(),
            absl::StatusCode::kFailedPrecondition);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qkov::client
