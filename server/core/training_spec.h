// A sweep's training settings on the server: the paper's defaults filled
// into every unset field, and the checks of them by the rules the worker
// applies again to each trial. Below sweep_spec.h (which applies and
// checks a whole spec) and sweep_arms.h (each arm's training settings).
#ifndef QKOV_SERVER_CORE_TRAINING_SPEC_H_
#define QKOV_SERVER_CORE_TRAINING_SPEC_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "qkov/v1/config.pb.h"

namespace qkov::core {

// Fills every unset (zero) field of `training` with the paper's synthetic
// defaults (docs/sweep-files.md lists them), and an unset task with the
// default task (common/task_info.h). Every trial's config carries them,
// whatever its task.
void ApplyTrainingDefaults(qkov::v1::Training* training);

// The training settings alone, by the rules of common/trial_rules.h and
// the task's settings message by its entry in common/task_settings.h (the
// worker checks each trial by the same rules); field paths start with `prefix`
// ("spec.training."). OK, or INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateTraining(const qkov::v1::Training& training,
                              absl::string_view prefix);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_TRAINING_SPEC_H_
