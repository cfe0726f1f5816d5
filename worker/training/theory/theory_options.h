// The reduced ODE's settings (docs/paper.md §4; theory.h integrates it), a
// part of every trial's options (config.h). Its rates are the trial's own
// eta_ov and lr_ratio (TheoryRates).
#ifndef QKOV_WORKER_TRAINING_THEORY_THEORY_OPTIONS_H_
#define QKOV_WORKER_TRAINING_THEORY_THEORY_OPTIONS_H_

namespace qkov::training {

struct TheoryOptions {
  double m = 5;      // informative tokens
  double n = 50;     // common tokens
  double b = 50;     // normalization constant of the paper
  double M = 20;     // classes
  double dtau = 10;  // the paper's fixed step
  // When > 0, the step grows to relative_step * tau (for very long horizons);
  // the paper's setting is 0.
  double relative_step = 0;
  double max_tau = 5e7;
  double target_loss = 1e-4;
  int num_thresholds = 50;  // log-spaced loss thresholds from 1 to target_loss
  int num_samples = 200;    // trajectory samples, log-spaced in tau
};

// The ODE's learning rates: a trial's eta_ov and lr_ratio.
struct TheoryRates {
  double eta_ov = 1;
  double lr_ratio = 1;  // r = eta_QK / eta_OV
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_THEORY_THEORY_OPTIONS_H_
