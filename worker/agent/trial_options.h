// qkov.v1.TrialConfig (wire) -> training::TrialOptions (plain C++).
#ifndef QKOV_WORKER_AGENT_TRIAL_OPTIONS_H_
#define QKOV_WORKER_AGENT_TRIAL_OPTIONS_H_

#include "absl/status/statusor.h"
#include "qkov/v1/config.pb.h"
#include "worker/training/config.h"

namespace qkov::agent {

// Every task kind; INVALID_ARGUMENT for enum values this worker does not
// know, for settings the task's entry in common/task_settings.h refuses
// (field paths "text.max_len: ..."), and for values TrialOptions::Validate
// refuses.
absl::StatusOr<training::TrialOptions> ToTrialOptions(
    const qkov::v1::TrialConfig& config);

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_TRIAL_OPTIONS_H_
