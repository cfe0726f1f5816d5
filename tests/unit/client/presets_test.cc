// Every preset, and its --quick variant, is a sweep file the server accepts.
#include "client/presets.h"

#include <gtest/gtest.h>

#include "client/sweep_file.h"
#include "server/core/sweep_spec.h"

namespace qkov::client {
namespace {

TEST(PresetsTest, EveryPresetAndItsQuickVariantPassTheServersValidation) {
  ASSERT_FALSE(Presets().empty());
  for (const Preset& p : Presets()) {
    for (bool quick : {false, true}) {
      absl::StatusOr<qkov::v1::SweepSpec> spec = ParseSweepText(
          p.yaml, p.name, quick ? p.quick : std::vector<std::string>{});
      ASSERT_TRUE(spec.ok()) << p.name << ": " << spec.status();
      core::ApplySpecDefaults(&*spec);
      const absl::Status s = core::ValidateSweepSpec(*spec, core::SpecLimits());
      EXPECT_TRUE(s.ok()) << p.name << (quick ? " --quick" : "") << ": " << s;
    }
  }
}

// The SVA preset gets the authors' SVA setup from the task's defaults.
TEST(PresetsTest, SvaPresetTrainsTheAuthorsSvaSetup) {
  absl::StatusOr<Preset> p = FindPreset("paper-sva");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<qkov::v1::SweepSpec> spec =
      ParseSweepText(p->yaml, p->name, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  core::ApplySpecDefaults(&*spec);
  const qkov::v1::Training& t = spec->training();
  EXPECT_EQ(t.optimizer().kind(), qkov::v1::SGD);
  EXPECT_DOUBLE_EQ(t.optimizer().momentum(), 0.99);
  EXPECT_EQ(t.text().epochs(), 15);
  EXPECT_DOUBLE_EQ(t.text().train_fraction(), 0.1);
  EXPECT_EQ(t.text().d_mlp(), 0);
  EXPECT_FALSE(t.text().residual());
  EXPECT_TRUE(t.text().padding_mask());
}

}  // namespace
}  // namespace qkov::client
