// The tasks the worker trains, one entry each (task_registry.cc): the
// training kind, its name, the task table's names it trains
// (common/task_info.h; the text trainer trains text, hatexplain and sva),
// its trainer, and the checks of the options only it reads. RunTrials, the
// agent's conversion of a lease and TrialOptions::Validate look a task up
// here instead of testing its kind.
#ifndef QKOV_WORKER_TRAINING_TASK_REGISTRY_H_
#define QKOV_WORKER_TRAINING_TASK_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "worker/training/config.h"
#include "worker/training/task_trainer.h"

namespace qkov::training {

struct TrainingTask {
  TaskKind kind;
  const char* name;                     // TaskKindName
  std::vector<std::string> task_names;  // the task table's names it trains
  const TaskTrainer* trainer;
  // The task's own checks (its rates and settings), with field paths
  // relative to a trial, before TrialOptions::Validate's shared ones.
  absl::Status (*check)(const TrialOptions& options);
  // False for the ODE: no model, so no optimizer, initialisation, run or
  // evaluation settings to check.
  bool trains_a_model = true;
};

// Every task, in TaskKind's order.
const std::vector<TrainingTask>& TrainingTasks();

// The entry of `kind` (every TaskKind has one).
const TrainingTask& TrainingTaskFor(TaskKind kind);

// The entry that trains the task table's `task_name`, or nullptr.
const TrainingTask* TrainingTaskNamed(absl::string_view task_name);

// "synthetic, fixed_attention, ..., or squad": the task table's names the
// worker trains, for refusals.
std::string TrainedTaskNames();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TASK_REGISTRY_H_
