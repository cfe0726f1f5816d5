// The synthetic task's trainer (docs/paper.md §2): the one-layer attention
// model of model.h on the data of synthetic_task.h, evaluated by metrics.h.
// Trials of one shape train together, their parameters stacked along a
// leading trial dimension (batched matrix products), each with its own seed,
// data stream, learning rates, schedule, stopping and observer; a trial's
// arithmetic does not depend on its batch-mates, so its metrics are
// bit-identical alone or batched (trainer_test).
#ifndef QKOV_WORKER_TRAINING_SYNTHETIC_TRAINER_H_
#define QKOV_WORKER_TRAINING_SYNTHETIC_TRAINER_H_

#include "worker/training/trainer.h"

namespace qkov::training {

class SyntheticTrainer : public TaskTrainer {
 public:
  // Same parameterization, task sizes, batch size and optimizer settings
  // (rates, seeds, schedules, steps and stopping may differ).
  absl::Status CheckBatchable(
      const std::vector<TrialOptions>& options) const override;
  absl::StatusOr<std::vector<TrialOutcome>> Train(
      const std::vector<TrialOptions>& options,
      const std::vector<TrainingObserver*>& observers,
      const torch::Device& device,
      const std::vector<std::string>& resume_from) const override;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_SYNTHETIC_TRAINER_H_
