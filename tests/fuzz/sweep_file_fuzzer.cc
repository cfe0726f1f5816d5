// The sweep file, as `qkov submit` reads it (ParseSweepText: YAML or JSON,
// with --set overrides) and the server checks and expands it
// (ApplySpecDefaults, ValidateSweepSpec, ExpandSweep). Properties: no crash,
// no leak; the reader refuses with a message; the validator refuses with
// INVALID_ARGUMENT naming a field under "spec."; an accepted spec expands to
// exactly the product of its axes, each trial with its own config hash.
// Input: the file, then up to two --set overrides, each after "--8<--".
#include <set>

#include "common/sweep_file.h"
#include "server/core/sweep_spec.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> parts = qkov::fuzz::SplitInput(
      absl::string_view(reinterpret_cast<const char*>(data), size), 3);
  const std::string& text = parts[0];
  std::vector<std::string> overrides;
  for (size_t i = 1; i < parts.size(); ++i)
    if (!parts[i].empty()) overrides.push_back(parts[i]);
  absl::StatusOr<qkov::v1::SweepSpec> parsed =
      qkov::ParseSweepText(text, "fuzz.yaml", overrides);
  if (!parsed.ok()) {
    QKOV_FUZZ_CHECK(!parsed.status().message().empty(), "empty refusal");
    return 0;
  }
  qkov::v1::SweepSpec spec = *parsed;
  qkov::core::ApplySpecDefaults(&spec);
  qkov::core::SpecLimits limits;
  limits.max_trials = 512;  // expansion stays cheap per input
  const absl::Status valid = qkov::core::ValidateSweepSpec(spec, limits);
  if (!valid.ok()) {
    QKOV_FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument,
                    valid.ToString());
    QKOV_FUZZ_CHECK(valid.message().rfind("spec.", 0) == 0, valid.ToString());
    return 0;
  }
  const auto& a = spec.axes();
  const int64_t want = int64_t{std::max(1, a.parameterizations_size())} *
                       a.lr_ratios_size() * a.eta_ovs_size() * a.seeds_size() *
                       std::max(1, a.alphas_size());
  const std::vector<qkov::core::ExpandedTrial> trials =
      qkov::core::ExpandSweep(spec);
  QKOV_FUZZ_CHECK(
      static_cast<int64_t>(trials.size()) == want,
      std::to_string(trials.size()) + " trials, want " + std::to_string(want));
  std::set<std::string> hashes;
  for (const auto& t : trials) hashes.insert(t.config_hash);
  QKOV_FUZZ_CHECK(hashes.size() == trials.size(), "two trials share a hash");
  return 0;
}
