// The accepted values of the ODE's settings (training.theory), checked by
// the server on submit (theory_settings.cc) and by the worker before it
// integrates (theory_trainer.cc), in common/trial_rules.h's words.
// Header-only, so both parts of the package use it without linking one to
// the other.
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_RULES_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_RULES_H_

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/trial_rules.h"

namespace qkov::rules {

// training.theory (the reduced ODE).
inline constexpr RealRule kTheoryM{"theory.m", 0, 1e15, true};
inline constexpr RealRule kTheoryN{"theory.n", 0, 1e15, true};
inline constexpr RealRule kTheoryB{"theory.b", 0, 1e15, true};
inline constexpr RealRule kTheoryNumClasses{"theory.num_classes", 1, 1e9, true};
inline constexpr RealRule kTheoryDtau{"theory.dtau", 0, 1e15, true};
inline constexpr RealRule kTheoryMaxTau{"theory.max_tau", 0, 1e15, true};
inline constexpr RealRule kTheoryTargetLoss{"theory.target_loss", 0, 1e15,
                                            true};
inline constexpr RealRule kTheoryRelativeStep{"theory.relative_step", 0, 1};
inline constexpr IntRule kTheoryNumThresholds{"theory.num_thresholds", 1,
                                              10000};
inline constexpr IntRule kTheoryNumSamples{"theory.num_samples", 2, 100000};

// The ODE's settings, and at most 1e9 fixed steps.
inline absl::Status CheckTheory(absl::string_view prefix, double m, double n,
                                double b, double num_classes, double dtau,
                                double relative_step, double max_tau,
                                double target_loss, int64_t num_thresholds,
                                int64_t num_samples) {
  for (auto [rule, value] :
       {std::pair{kTheoryM, m}, std::pair{kTheoryN, n}, std::pair{kTheoryB, b},
        std::pair{kTheoryDtau, dtau}, std::pair{kTheoryMaxTau, max_tau},
        std::pair{kTheoryTargetLoss, target_loss},
        std::pair{kTheoryNumClasses, num_classes},
        std::pair{kTheoryRelativeStep, relative_step}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (absl::Status s = Check(prefix, kTheoryNumThresholds, num_thresholds);
      !s.ok())
    return s;
  if (absl::Status s = Check(prefix, kTheoryNumSamples, num_samples); !s.ok())
    return s;
  if (relative_step == 0 && max_tau / dtau > 1e9) {
    return Invalid(prefix, "theory.max_tau",
                   "more than 1e9 fixed steps; set relative_step");
  }
  return absl::OkStatus();
}

}  // namespace qkov::rules

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_RULES_H_
