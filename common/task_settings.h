// A task's own settings message in qkov.v1.Training (the task table's
// `settings`: synthetic, theory, text, squad): the defaults the server fills
// in before it expands a sweep, the checks the server runs on a submission
// and the worker's agent again on every leased trial (the same values
// refused in the same words), and the model of a trial's memory the server
// refuses oversized trials by. One entry per message, registered by a
// TaskSettingsRegistration in the folder of the package whose tasks read it
// (worker/tasks/text/text_settings.cc, a lab's own anywhere; proto-aware,
// torch-free; docs/adding-a-task.md): this file names no task. The server and
// the agent look the entry up by the task instead of testing which message a
// task reads.
#ifndef QKOV_COMMON_TASK_SETTINGS_H_
#define QKOV_COMMON_TASK_SETTINGS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "qkov/v1/config.pb.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov {

struct TaskSettings {
  std::string name;  // the qkov.v1.Training field, as TaskInfo::settings
  // Fills the message's unset fields, and the shared settings in which the
  // task differs from the synthetic defaults (its optimizer, evaluation,
  // seeds); runs before server/core/sweep_spec.h's ApplyTrainingDefaults
  // fills the rest. nullptr: nothing of its own.
  void (*apply_defaults)(qkov::v1::SweepSpec* spec) = nullptr;
  // OK, or INVALID_ARGUMENT "PREFIXtext.n_ctx: ..." naming the first field
  // that is wrong. Runs with defaults applied.
  absl::Status (*check)(const qkov::v1::Training& training,
                        absl::string_view prefix) = nullptr;
  // Bytes one trial holds while it trains (server/core/trial_memory.h), and
  // the sizes that drive it, for the refusal ("batch_size 64, text.max_len
  // ..."). nullptr: no model to hold (0 bytes).
  int64_t (*memory_bytes)(const qkov::v1::Training& training) = nullptr;
  std::string (*memory_sizes)(const qkov::v1::Training& training) = nullptr;
  // Bytes each further trial adds to a stack of the task's trials that a
  // worker trains together (TaskInfo::stacks; server/core/trial_memory.h's
  // EstimateStackedTrialBytes). nullptr: none stack.
  int64_t (*stacked_trial_bytes)(const qkov::v1::Training& training) = nullptr;
};

// A memory estimate made in double (the product of the largest accepted
// sizes overflows int64), as int64 bytes, saturating.
inline int64_t ClampedBytes(double bytes) {
  return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(bytes);
}

// The entry of the message the task of `training` reads (the synthetic
// task's for an unknown or unspecified task; the server refuses those by
// name before it asks).
const TaskSettings& TaskSettingsOf(const qkov::v1::Training& training);

// The entry named `name`, or nullptr.
const TaskSettings* FindTaskSettings(absl::string_view name);

// Adds `settings` to the table. Called before main() by a
// TaskSettingsRegistration; dies, naming it, on an empty or taken name, a
// null check, or when called after the first lookup.
void RegisterTaskSettings(TaskSettings settings);

// Registers a settings message at static initialization, from the task's
// own folder, beside its TaskRegistration:
//   const qkov::TaskSettingsRegistration kNeedleSettings(NeedleSettings());
class TaskSettingsRegistration {
 public:
  explicit TaskSettingsRegistration(TaskSettings settings) {
    RegisterTaskSettings(std::move(settings));
  }
};

}  // namespace qkov

#endif  // QKOV_COMMON_TASK_SETTINGS_H_
