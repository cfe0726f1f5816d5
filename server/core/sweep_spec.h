// Sweep specs: the paper's defaults and field-by-field validation of a
// whole spec (its training settings by training_spec.h, its arms by
// sweep_arms.h, its search and early stopping by adaptive_sweep.h). This
// header also gives what it stands on: training_spec.h and
// sweep_expansion.h (the trials a spec expands into, their canonical
// configs and hashes).
#ifndef QKOV_SERVER_CORE_SWEEP_SPEC_H_
#define QKOV_SERVER_CORE_SWEEP_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/text.h"
#include "qkov/v1/config.pb.h"
#include "qkov/v1/sweep.pb.h"
#include "server/core/sweep_expansion.h"
#include "server/core/training_spec.h"

namespace qkov::core {

struct SpecLimits {
  int64_t max_trials = 200000;  // grid size limit per submission
  // EstimateTrialMemoryBytes above this is refused (qkov-server
  // --max_trial_memory_gb).
  int64_t max_trial_memory_bytes = 16000000000;  // 16 GB
};

// The task's own defaults (its settings message's entry,
// common/task_settings.h), then ApplyTrainingDefaults, max_attempts, and
// the axes' and the search's and early stopping's defaults.
void ApplySpecDefaults(qkov::v1::SweepSpec* spec);

// OK, or INVALID_ARGUMENT whose message starts with the field path, e.g.
// "spec.axes.lr_ratios[1]: must be finite and > 0 (got nan)". Expects
// defaults applied.
absl::Status ValidateSweepSpec(const qkov::v1::SweepSpec& spec,
                               const SpecLimits& limits);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_SWEEP_SPEC_H_
