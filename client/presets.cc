#include "client/presets.h"

#include "absl/strings/str_cat.h"

namespace qkov::client {

const std::vector<Preset>& Presets() {
  static const auto* presets = new std::vector<Preset>{
      {"paper-four-param",
       "the four parameterizations at equal rates (NOTES §3, Fig. 2): SGD 0.01, 5 seeds, <= 625k steps",
       R"(name: paper-four-param
description: four parameterizations, eta_QK = eta_OV = 0.01 (NOTES.md §3 Row-1 runs)
axes:
  parameterization: [FAFO, FACO, CAFO, CACO]
  lr_ratio: [1]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  max_steps: 625000
  report_every: 2500
  target_loss: 1.0e-3
  optimizer: {kind: sgd}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000", "training.report_every=500", "axes.seed=[1234, 1235]",
        "name=paper-four-param-quick"}},
      {"paper-ratio",
       "FAFO over eta_QK/eta_OV in {1, 2, 5, 10, 20} with 5 seeds (the fast-QK runs): SGD eta_OV 0.01",
       R"(name: paper-ratio
description: FAFO, eta_QK/eta_OV sweep, 5 seeds (NOTES.md §3 fast-QK runs)
axes:
  parameterization: [FAFO]
  lr_ratio: [1, 2, 5, 10, 20]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  max_steps: 100000
  report_every: 1000
  target_loss: 1.0e-3
  optimizer: {kind: sgd}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000", "training.report_every=500", "axes.seed=[1234, 1235, 1236]",
        "name=paper-ratio-quick"}},
      {"paper-qk-ramp",
       "the QK ramp runs: eta_QK rises linearly from eta_OV to R x eta_OV (FAFO R=40, CACO R=10 in the paper)",
       R"(name: paper-qk-ramp
description: QK learning-rate ramp (NOTES.md §3 ramp runs)
axes:
  parameterization: [FAFO, CACO]
  lr_ratio: [10, 40]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  max_steps: 200000
  report_every: 2000
  target_loss: 1.0e-3
  optimizer: {kind: sgd, schedule: qk_ramp}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000", "training.report_every=500", "axes.seed=[1234, 1235]",
        "name=paper-qk-ramp-quick"}},
  };
  return *presets;
}

absl::StatusOr<Preset> FindPreset(const std::string& name) {
  std::string known;
  for (const Preset& p : Presets()) {
    if (p.name == name) return p;
    absl::StrAppend(&known, known.empty() ? "" : ", ", p.name);
  }
  return absl::NotFoundError(absl::StrCat("no preset named '", name, "' (known: ", known, ")"));
}

}  // namespace qkov::client
