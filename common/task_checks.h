// The text and SQuAD settings of a qkov.v1.Training, checked by the rules of
// common/trial_rules.h (CheckText, CheckSquad). This is the one place that
// reads those settings out of the proto for checking: the server calls it on
// a submitted sweep (server/core/sweep_spec.cc, prefix "spec.training."), and
// the worker's agent on every leased trial before it converts the trial for
// training (worker/agent/trial_options.cc, no prefix), so both
// refuse the same values in the same words.
#ifndef QKOV_COMMON_TASK_CHECKS_H_
#define QKOV_COMMON_TASK_CHECKS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "qkov/v1/config.pb.h"

namespace qkov::rules {

// A task whose settings are training.text (the task table's `settings`):
// text, hatexplain and sva.
bool IsTextTaskKind(qkov::v1::TaskKind kind);

// OK for a task that is not a text task. Otherwise every training.text
// setting by CheckText, each split's format known and max_examples >= 0;
// INVALID_ARGUMENT "PREFIXtext.FIELD: ..." naming the first that is not.
absl::Status CheckTextTask(const qkov::v1::Training& training,
                           absl::string_view prefix);

// OK for a task whose settings are not training.squad. Otherwise every
// training.squad setting, and the optimizer's kind and schedule, by CheckSquad.
absl::Status CheckSquadTask(const qkov::v1::Training& training,
                            absl::string_view prefix);

}  // namespace qkov::rules

#endif  // QKOV_COMMON_TASK_CHECKS_H_
