// The theory package's defaults: the reduced ODE's settings as the authors
// ran it. Header-only and torch-free.
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_DEFAULTS_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_DEFAULTS_H_

namespace qkov::defaults {

// The reduced ODE (docs/paper.md §4) with the authors' settings.
struct TheoryDefaults {
  double m;            // informative tokens
  double n;            // common tokens
  double b;            // normalization constant of the paper
  double num_classes;  // M
  double dtau;         // the paper's fixed step
  double max_tau;
  double target_loss;
  int num_thresholds;  // log-spaced loss thresholds from 1 to target_loss
  int num_samples;     // trajectory samples, log-spaced in tau
};
inline constexpr TheoryDefaults kTheory = {5,   50,   50, 20, 10,
                                           5e7, 1e-4, 50, 200};

}  // namespace qkov::defaults

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_DEFAULTS_H_
