// The trainers the worker has, one entry each: its name, the task table's
// names it trains (common/task_info.h; the text trainer trains text,
// hatexplain and sva), its trainer, and the checks of the options only it
// reads. Each task package registers its entry from its own folder with a
// TrainingTaskRegistration (worker/tasks/*/..._trainer.cc, a lab's own
// anywhere; docs/adding-a-task.md). RunTrials and TrialOptions::Validate
// look a trial's task up here by its name instead of testing it.
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
  const char* name;                     // the trainer's, for refusals
  std::vector<std::string> task_names;  // the task table's names it trains
  const TaskTrainer* trainer;
  // The task's own checks (its rates and settings), with field paths
  // relative to a trial, before TrialOptions::Validate's shared ones.
  absl::Status (*check)(const TrialOptions& options);
  // False for the ODE: no model, so no optimizer, initialisation, run or
  // evaluation settings to check.
  bool trains_a_model = true;
};

// Every trainer, in the order of the task table's kinds of the first task
// each trains (config.proto's first).
const std::vector<TrainingTask>& TrainingTasks();

// Adds `task` to TrainingTasks(). Called
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

// The entry that trains the task table's `task_name`, or nullptr.
const TrainingTask* TrainingTaskNamed(absl::string_view task_name);

// "synthetic, fixed_attention, ..., or squad": the task table's names the
// worker trains, for refusals.
std::string TrainedTaskNames();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TASK_REGISTRY_H_
