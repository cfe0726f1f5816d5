// Figures are drawn by gnuplot without a shell: file names and labels with
// quotes, `$(...)` or newlines are text, never commands.
#include "client/plot.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

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

}  // namespace
}  // namespace qkov::client
