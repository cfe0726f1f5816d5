// qkov.v1.TrialConfig (wire) -> training::TrialOptions (plain C++).
#ifndef QKOV_WORKER_AGENT_TRIAL_OPTIONS_H_
#define QKOV_WORKER_AGENT_TRIAL_OPTIONS_H_

#include "absl/status/statusor.h"
#include "qkov/v1/config.pb.h"
#include "worker/training/config.h"
#include "worker/training/theory.h"

namespace qkov::agent {

// INVALID_ARGUMENT for enum values this worker does not know. For the
// synthetic and fixed-attention tasks.
absl::StatusOr<training::TrialOptions> ToTrialOptions(
    const qkov::v1::TrialConfig& config);

// For TASK_THEORY: r = lr_ratio, eta_OV = eta_ov, the rest from
// training.theory.
training::TheoryOptions ToTheoryOptions(const qkov::v1::TrialConfig& config);

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_TRIAL_OPTIONS_H_
