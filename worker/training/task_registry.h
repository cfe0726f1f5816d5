// The tasks the worker trains, one entry each: the training kind, its name,
// the task table's names it trains (common/task_info.h; the text trainer
// trains text, hatexplain and sva), its trainer, and the checks of the
// options only it reads. This repository's trainers are task_registry.cc's
// table, one line each, of entries each task's folder declares
// (theory/theory_trainer.h's TheoryTrainingTask(), ...); a task defined
// elsewhere adds its entry with a
// TrainingTaskRegistration in its own folder (docs/adding-a-task.md).
// RunTrials, the agent's conversion of a lease and TrialOptions::Validate
// look a task up here instead of testing its kind.
#ifndef QKOV_WORKER_TRAINING_TASK_REGISTRY_H_
#define QKOV_WORKER_TRAINING_TASK_REGISTRY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "worker/training/config.h"
#include "worker/training/task_trainer.h"

namespace qkov::training {

struct TrainingTask {
  // The table's TaskKind; a registered task's is assigned (its index here).
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

// Every task, in TaskKind's order: the table's, then the registered ones.
const std::vector<TrainingTask>& TrainingTasks();

// Adds `task` (its kind is ignored and assigned) to TrainingTasks(). Called
// before main() by a TrainingTaskRegistration, like common/task_info.h's
// RegisterTask; dies, naming the task, on a name trained already, a task
// name the task table lacks, a null trainer or check, or when called after
// the first lookup.
void RegisterTrainingTask(TrainingTask task);

class TrainingTaskRegistration {
 public:
  explicit TrainingTaskRegistration(TrainingTask task) {
    RegisterTrainingTask(std::move(task));
  }
};

// The entry of `kind` (every TaskKind has one).
const TrainingTask& TrainingTaskFor(TaskKind kind);

// The entry that trains the task table's `task_name`, or nullptr.
const TrainingTask* TrainingTaskNamed(absl::string_view task_name);

// "synthetic, fixed_attention, ..., or squad": the task table's names the
// worker trains, for refusals.
std::string TrainedTaskNames();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TASK_REGISTRY_H_
