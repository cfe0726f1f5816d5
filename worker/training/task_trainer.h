// What every task's trainer implements (TaskTrainer), and the skeleton of
// those whose trials train one after another (InTurnTrainer). The tasks'
// folders (synthetic/, theory/, text/, squad/) include this, never trainer.h,
// which dispatches to all of them.
#ifndef QKOV_WORKER_TRAINING_TASK_TRAINER_H_
#define QKOV_WORKER_TRAINING_TASK_TRAINER_H_

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/training/config.h"
#include "worker/training/trial.h"

namespace qkov::training {

class TaskTrainer {
 public:
  virtual ~TaskTrainer() = default;

  // OK when these trials (of this kind, each valid, at least one) can train
  // in one call of Train. By default any can: Train runs them one after
  // another.
  virtual absl::Status CheckBatchable(
      const std::vector<TrialOptions>& options) const {
    return absl::OkStatus();
  }

  // Trains the trials on `device`, each from the start or from its
  // `resume_from` (a checkpoint of the same options; "" to start). One
  // outcome per trial; divergence is an outcome, not an error. May throw
  // what LibTorch throws.
  virtual absl::StatusOr<std::vector<TrialOutcome>> Train(
      const std::vector<TrialOptions>& options,
      const std::vector<TrainingObserver*>& observers,
      const torch::Device& device,
      const std::vector<std::string>& resume_from) const = 0;
};

// The skeleton of the trainers whose trials train one after another (every
// kind but the synthetic task, whose trials stack): Train runs TrainOne for
// each trial in turn, and the first error is the call's.
class InTurnTrainer : public TaskTrainer {
 public:
  absl::StatusOr<std::vector<TrialOutcome>> Train(
      const std::vector<TrialOptions>& options,
      const std::vector<TrainingObserver*>& observers,
      const torch::Device& device,
      const std::vector<std::string>& resume_from) const final;

 protected:
  // Trains one trial on `device`, from `resume_from` ("" to start).
  virtual absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device, const std::string& resume_from) const = 0;
};

// The ratio's rule (common/trial_rules.h): the check of a task whose only
// settings of its own are checked elsewhere (the text and SQuAD tasks', on
// the proto) or that has none.
absl::Status CheckLrRatio(const TrialOptions& options);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TASK_TRAINER_H_
