// The paper's reduced gradient flow (docs/paper.md §4): two scalars, the OV
// strength mu_OV and the QK strength mu_QK, integrated with RK4 in
// normalized time tau = t * min(eta_OV, eta_QK).
//
//   alpha  = m e^{mu_QK} / (m e^{mu_QK} + n)
//   loss   = log(1 + (M - 1) exp(-alpha mu_OV))
//   dmu_OV/dt = eta_OV alpha / (b [exp(alpha mu_OV) + M - 1])
//   dmu_QK/dt = eta_QK (M - 1) alpha (1 - alpha) mu_OV / (M b^2 [exp(alpha
//   mu_OV) + M - 1])
#ifndef QKOV_WORKER_TRAINING_THEORY_H_
#define QKOV_WORKER_TRAINING_THEORY_H_

#include <vector>

#include "absl/status/statusor.h"

namespace qkov::training {

struct TheoryOptions {
  double m = 5;   // informative tokens
  double n = 50;  // common tokens
  double b = 50;  // normalization constant of the paper
  double M = 20;  // classes
  double eta_ov = 1;
  double lr_ratio = 1;  // r = eta_QK / eta_OV
  double dtau = 10;     // the paper's fixed step
  // When > 0, the step grows to relative_step * tau (for very long horizons);
  // the paper's setting is 0.
  double relative_step = 0;
  double max_tau = 5e7;
  double target_loss = 1e-4;
  int num_thresholds = 50;  // log-spaced loss thresholds from 1 to target_loss
  int num_samples = 200;    // trajectory samples, log-spaced in tau
};

struct TheoryPoint {
  double tau;
  double mu_ov;
  double mu_qk;
  double alpha;
  double loss;
};

struct TheoryResult {
  std::vector<TheoryPoint> trajectory;  // log-spaced in tau
  std::vector<double> thresholds;       // loss thresholds
  std::vector<TheoryPoint>
      at_thresholds;  // first point below each (reached ones only)
  TheoryPoint final_point;
  bool reached_target = false;
};

double TheoryAlpha(const TheoryOptions& o, double mu_qk);
double TheoryLoss(const TheoryOptions& o, double mu_ov, double mu_qk);

// InvalidArgument for non-positive sizes or rates.
absl::StatusOr<TheoryResult> IntegrateTheory(const TheoryOptions& options);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_THEORY_H_
