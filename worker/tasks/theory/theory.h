// The paper's reduced gradient flow (docs/paper.md §4): two scalars, the OV
// strength mu_OV and the QK strength mu_QK, integrated with RK4 in
// normalized time tau = t * min(eta_OV, eta_QK).
//
//   alpha  = m e^{mu_QK} / (m e^{mu_QK} + n)
//   loss   = log(1 + (M - 1) exp(-alpha mu_OV))
//   dmu_OV/dt = eta_OV alpha / (b [exp(alpha mu_OV) + M - 1])
//   dmu_QK/dt = eta_QK (M - 1) alpha (1 - alpha) mu_OV / (M b^2 [exp(alpha
//   mu_OV) + M - 1])
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "worker/tasks/theory/theory_options.h"

namespace qkov::training {

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
absl::StatusOr<TheoryResult> IntegrateTheory(const TheoryOptions& options,
                                             const TheoryRates& rates);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_H_
