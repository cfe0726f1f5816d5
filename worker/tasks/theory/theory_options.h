// The reduced ODE's settings (docs/paper.md §4; theory.h integrates it), a
// part of every trial's options (config.h). Its rates are the trial's own
// eta_ov and lr_ratio (TheoryRates).
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_OPTIONS_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_OPTIONS_H_

#include "common/trial_defaults.h"
#include "worker/tasks/theory/theory_defaults.h"

namespace qkov::training {

// Unset fields take the authors' settings (defaults::kTheory).
struct TheoryOptions {
  double m = defaults::kTheory.m;  // informative tokens
  double n = defaults::kTheory.n;  // common tokens
  double b = defaults::kTheory.b;  // normalization constant of the paper
  double M = defaults::kTheory.num_classes;  // classes
  double dtau = defaults::kTheory.dtau;      // the paper's fixed step
  // When > 0, the step grows to relative_step * tau (for very long horizons);
  // the paper's setting is 0.
  double relative_step = 0;
  double max_tau = defaults::kTheory.max_tau;
  double target_loss = defaults::kTheory.target_loss;
  // Log-spaced loss thresholds from 1 to target_loss.
  int num_thresholds = defaults::kTheory.num_thresholds;
  // Trajectory samples, log-spaced in tau.
  int num_samples = defaults::kTheory.num_samples;
};

// The ODE's learning rates: a trial's eta_ov and lr_ratio.
struct TheoryRates {
  double eta_ov = 1;
  double lr_ratio = 1;  // r = eta_QK / eta_OV
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_OPTIONS_H_
