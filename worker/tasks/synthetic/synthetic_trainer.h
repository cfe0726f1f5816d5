// The synthetic task's trainer (docs/paper.md §2): the one-layer attention
// model of model.h on the data of synthetic_task.h, evaluated by metrics.h.
// Trials of one shape train together, their parameters stacked along a
// leading trial dimension (batched matrix products), each with its own seed,
// data stream, learning rates, schedule, stopping and observer; a trial's
// arithmetic does not depend on its batch-mates, so its metrics are
// bit-identical alone or batched (trainer_test). A step's gradients come from
// analytic_gradients.h; autograd is kept as the reference engine.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TRAINER_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TRAINER_H_

#include "worker/training/task_registry.h"
#include "worker/training/task_trainer.h"

namespace qkov::training {

enum class SyntheticEngine {
  kAnalytic,  // AnalyticGradients: the trainer's engine
  kAutograd,  // autograd through StackedAttentionForward: the reference
};

// Trains synthetic trials (valid, batchable: SyntheticTrainer::CheckBatchable)
// with `engine`; the body of SyntheticTrainer::Train. May throw what LibTorch
// throws.
absl::StatusOr<std::vector<TrialOutcome>> TrainSynthetic(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from,
    SyntheticEngine engine);

class SyntheticTrainer : public TaskTrainer {
 public:
  // Same parameterization, task sizes, batch size, loss window and optimizer
  // settings (rates, seeds, schedules, steps and stopping may differ).
  absl::Status CheckBatchable(
      const std::vector<TrialOptions>& options) const override;
  absl::StatusOr<std::vector<TrialOutcome>> Train(
      const std::vector<TrialOptions>& options,
      const std::vector<TrainingObserver*>& observers,
      const torch::Device& device,
      const std::vector<std::string>& resume_from) const override;
};

// The synthetic task's entry in the worker's trainers (task_registry.h): its
// SyntheticTrainer, and its checks (the ratio and the task's shape).
TrainingTask SyntheticTrainingTask();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TRAINER_H_
