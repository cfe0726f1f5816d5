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

}  // namespace
}  // namespace qkov::client
