#include "worker/tasks/theory/theory_task_info.h"

#include "worker/tasks/theory/theory_defaults.h"

namespace qkov {
namespace {

// The reduced gradient flow over r (paper §4, Fig. 4).
Preset TheoryPreset() {
  return {
      "paper-theory",
      "the reduced gradient flow over r = eta_QK/eta_OV in {0.01, 0.1, 1, 10, "
      "100} (docs/paper.md §4, Fig. 4)",
      R"(name: paper-theory
description: reduced gradient flow of docs/paper.md §4, RK4 with the authors' settings
axes:
  lr_ratio: [0.01, 0.1, 1, 10, 100]
  eta_ov: [1]
training:
  task: theory
  theory: {m: 5, n: 50, b: 50, num_classes: 20, dtau: 10, max_tau: 5.0e7, target_loss: 1.0e-4,
           num_thresholds: 50, num_samples: 200}
)",
      {"name=paper-theory-quick"},
      "",
      {}};
}

}  // namespace

TaskInfo TheoryTaskInfo() {
  TaskInfo t;
  t.name = "theory";
  t.settings = "theory";
  t.parameterized = false;
  t.presets = {TheoryPreset()};
  AddResult(&t, "alpha", 0, 1);
  AddResult(&t, "converged", 0, 1);
  AddResult(&t, "mu_ov", -kUnbounded, kUnbounded);
  AddResult(&t, "mu_qk", -kUnbounded, kUnbounded);
  AddResult(&t, "loss", 0, kUnbounded);
  AddResult(&t, "tau", 0, kUnbounded);
  // The ODE's end point; its curves are series over time (theory_*), not
  // reports at training steps. Its figures are the paper's Fig. 4.
  t.views = {{"alpha", "mu_ov", "mu_qk", "loss", "tau", "converged"},
             {"alpha", "mu_ov", "mu_qk", "loss"},
             {"alpha"},
             {"theory_loss", "theory_alpha"},
             {"theory_loss", "theory_alpha"},
             {"theory"}};
  return t;
}

namespace {

// The task in the task table, numbered as config.proto numbers it
// (TASK_THEORY).
const TaskRegistration kTheory(2, TheoryTaskInfo());

}  // namespace

}  // namespace qkov
