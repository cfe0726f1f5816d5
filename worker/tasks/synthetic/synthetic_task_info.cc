#include "worker/tasks/synthetic/synthetic_task_info.h"

namespace qkov {
namespace {

// The four parameterizations at equal rates (paper §3, Fig. 2).
Preset FourParamPreset() {
  return {
      "paper-four-param",
      "the four parameterizations at equal rates (docs/paper.md §3, Fig. 2): "
      "SGD 0.01, 5 seeds, <= 625k steps",
      R"(name: paper-four-param
description: four parameterizations, eta_QK = eta_OV = 0.01 (docs/paper.md §3 Row-1 runs)
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
      {"axes.eta_ov=[0.1]", "training.max_steps=30000",
       "training.report_every=500", "axes.seed=[1234, 1235]",
       "name=paper-four-param-quick"},
      "the four parameterizations at 10x the paper's rate, 2 seeds. "
      "Compare distinct_attention at the same training loss (the matched "
      "view below): the paper's Fig. 4 says the arm whose QK circuit "
      "learns faster (factorized QK: FAFO, FACO) attends more sharply at a "
      "given loss. docs/results.md, collapsed-ov-sharpens, has what it gave.",
      {"--matched", "train_loss", "--window", "5", "--metrics",
       "distinct_attention"}};
}

// FAFO over eta_QK/eta_OV: the fast-QK runs.
Preset RatioPreset() {
  return {
      "paper-ratio",
      "FAFO over eta_QK/eta_OV in {1, 2, 5, 10, 20} with 5 seeds (the fast-QK "
      "runs): SGD eta_OV 0.01",
      R"(name: paper-ratio
description: FAFO, eta_QK/eta_OV sweep, 5 seeds (docs/paper.md §3 fast-QK runs)
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
      {"axes.eta_ov=[0.1]", "training.max_steps=30000",
       "training.report_every=500", "axes.seed=[1234, 1235, 1236]",
       "name=paper-ratio-quick"},
      "",
      {}};
}

// An adaptive search for the ratio where attention crosses a target.
Preset RatioSearchPreset() {
  return {"paper-ratio-search",
          "adaptive: the smallest eta_QK/eta_OV in [1, 100] at which FAFO's "
          "distinct-token attention reaches 0.6, to a factor 1.2, 5 seeds a "
          "probe (docs/adaptive.md)",
          R"(name: paper-ratio-search
description: FAFO, where distinct-token attention crosses 0.6 (docs/adaptive.md worked example)
axes:
  parameterization: [FAFO]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
search:
  metric: distinct_attention
  op: ">="
  target: 0.6
  lo: 1
  hi: 100
  resolution: 1.2
  coarse_points: 5
training:
  max_steps: 100000
  report_every: 1000
  target_loss: 1.0e-3
  optimizer: {kind: sgd}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
          {"axes.eta_ov=[0.1]", "training.max_steps=30000",
           "training.report_every=500", "axes.seed=[1234, 1235, 1236]",
           "name=paper-ratio-search-quick"},
          "",
          {}};
}

// eta_QK ramped up from eta_OV: the QK ramp runs.
Preset QkRampPreset() {
  return {"paper-qk-ramp",
          "the QK ramp runs: eta_QK rises linearly from eta_OV to R x eta_OV "
          "(FAFO R=40, CACO R=10 in the paper)",
          R"(name: paper-qk-ramp
description: QK learning-rate ramp (docs/paper.md §3 ramp runs)
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
          {"axes.eta_ov=[0.1]", "training.max_steps=30000",
           "training.report_every=500", "axes.seed=[1234, 1235]",
           "name=paper-qk-ramp-quick"},
          "",
          {}};
}

// Attention fixed at alpha, only OV trained (Fig. 3).
Preset FixedAttentionPreset() {
  return {
      "paper-fixed-attention",
      "attention fixed at alpha in {0.2, ..., 1}, only OV trained, collapsed "
      "vs factorized (docs/paper.md §3, Fig. 3)",
      R"(name: paper-fixed-attention
description: "fixed-attention experiment (docs/paper.md §3 Fig-3): CACO = collapsed OV, FAFO = factorized OV"
axes:
  parameterization: [CACO, FAFO]
  alpha: [0.2, 0.4, 0.6, 0.8, 1.0]
  eta_ov: [0.01]
  seed: [1234]
training:
  task: fixed_attention
  max_steps: 125000
  batch_size: 128
  report_every: 2500
  target_loss: -1
)",
      {"training.max_steps=10000", "training.report_every=500",
       "axes.eta_ov=[0.1]", "name=paper-fixed-attention-quick"},
      "",
      {}};
}

}  // namespace

TaskInfo SyntheticTaskInfo() {
  TaskInfo t;
  t.name = "synthetic";
  t.settings = "synthetic";
  t.stacks = true;
  t.presets = {FourParamPreset(), RatioPreset(), RatioSearchPreset(),
               QkRampPreset()};
  for (const char* n : {"accuracy", "gold_probability", "distinct_attention",
                        "ac", "acmc", "converged"})
    AddResult(&t, n, 0, 1);
  for (const char* n : {"separability", "comprehensiveness", "sufficiency"})
    AddResult(&t, n, -1, 1);
  for (const char* n : {"loss", "train_loss", "top_k", "steps", "qk_norm",
                        "ov_norm", "qk_balancedness", "ov_balancedness"})
    AddResult(&t, n, 0, kUnbounded);
  t.curves = {
      "train_loss", "train_accuracy", "distinct_attention", "separability",
      "qk_norm",    "ov_norm",        "qk_balancedness",    "ov_balancedness",
      "lr_qk",      "lr_ov"};
  // The paper's §3 numbers.
  t.views = {{"steps", "accuracy", "loss", "distinct_attention", "ac", "acmc",
              "separability"},
             {"accuracy", "distinct_attention", "ac", "acmc"},
             {"distinct_attention", "ac", "accuracy"},
             {"train_loss", "distinct_attention"},
             {"train_loss", "train_accuracy", "distinct_attention"},
             {"ratio", "search", "dtap", "curves"}};
  return t;
}

TaskInfo FixedAttentionTaskInfo() {
  TaskInfo t;
  t.name = "fixed_attention";
  t.settings = "synthetic";
  t.takes_alphas = true;
  t.presets = {FixedAttentionPreset()};
  t.searchable = false;  // attention is fixed: no QK circuit
  AddResult(&t, "accuracy", 0, 1);
  AddResult(&t, "alpha", 0, 1);
  AddResult(&t, "loss", 0, kUnbounded);
  AddResult(&t, "steps", 0, kUnbounded);
  t.curves = {"train_loss", "train_accuracy"};
  // The final loss against alpha: the paper's Fig. 3.
  t.views = {{"steps", "alpha", "loss", "accuracy"},
             {"loss", "accuracy"},
             {"loss"},
             {"train_loss"},
             {"train_loss", "train_accuracy"},
             {"fixed"}};
  return t;
}

namespace {

// The package's tasks in the task table, numbered as config.proto numbers
// them (TASK_SYNTHETIC, TASK_FIXED_ATTENTION).
const TaskRegistration kSynthetic(1, SyntheticTaskInfo());
const TaskRegistration kFixedAttention(3, FixedAttentionTaskInfo());

}  // namespace

}  // namespace qkov
