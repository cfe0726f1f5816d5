#include "worker/tasks/theory/theory_task_info.h"

#include <string>
#include <utility>
#include <vector>

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

// Fig. 4, drawn by `qkov plot --kind theory` and the dashboard from this
// description: the series over time against log10(1 + tau), the values at
// each loss threshold, and alpha at the loss reached with a trained sweep
// overlaid.
CurveFigure Fig4(std::string name, std::string title, std::string x,
                 std::string x_label) {
  CurveFigure f;
  f.kind = "theory";
  f.name = std::move(name);
  f.title = std::move(title);
  f.x = std::move(x);
  f.x_label = std::move(x_label);
  return f;
}

std::vector<CurveFigure> TheoryFigures() {
  CurveFigure time = Fig4(
      "theory_time", "Fig. 4: the reduced gradient flow, by r = eta_QK/eta_OV",
      "theory_tau", "log10(1 + tau)");
  time.x_log10_1p = true;
  time.columns = 2;
  time.panels = {{"theory_mu_ov", "mu_OV"},
                 {"theory_mu_qk", "mu_QK"},
                 {"theory_loss", "loss", true},
                 {"theory_alpha", "alpha (attention on informative tokens)"}};
  CurveFigure at = Fig4("theory_thresholds",
                        "Fig. 4: at each loss threshold, by r = eta_QK/eta_OV",
                        "threshold_loss", "loss threshold (decreasing ->)");
  at.log_x = true;
  at.reverse_x = true;
  at.columns = 3;
  at.panels = {{"threshold_mu_ov", "mu_OV"},
               {"threshold_mu_qk", "mu_QK"},
               {"threshold_alpha", "alpha"}};
  CurveFigure alpha = Fig4(
      "theory_alpha", "theory: alpha at the loss reached, by r = eta_QK/eta_OV",
      "threshold_loss", "loss (decreasing ->)");
  alpha.log_x = true;
  alpha.reverse_x = true;
  alpha.panels = {
      {"threshold_alpha", "attention on informative tokens (alpha)"}};
  alpha.overlay_matched = true;
  return {time, at, alpha};
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
  t.curve_figures = TheoryFigures();
  return t;
}

namespace {

// The task in the task table, numbered as config.proto numbers it
// (TASK_THEORY).
const TaskRegistration kTheory(2, TheoryTaskInfo());

}  // namespace

}  // namespace qkov
