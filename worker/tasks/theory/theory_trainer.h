// The theory task's trainer: integrates the reduced ODE of theory.h for each
// trial (its TheoryOptions, at the trial's eta_ov and lr_ratio). The
// trajectory and the loss-threshold crossings become the outcome's final
// points, the end state its results (docs/metrics.md).
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_TRAINER_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_TRAINER_H_

#include "worker/tasks/theory/theory.h"
#include "worker/tasks/theory/theory_options.h"
#include "worker/training/task_registry.h"
#include "worker/training/task_trainer.h"

namespace qkov::training {

class TheoryTrainer : public InTurnTrainer {
 protected:
  // INVALID_ARGUMENT for sizes or rates the ODE does not take.
  absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device,
      const std::string& resume_from) const override;
};

// An integrated trajectory as a trial outcome.
TrialOutcome TheoryOutcome(const TheoryResult& result);

// The theory task's entry in the worker's trainers (task_registry.h): its
// trainer, and its checks (the ratio and the ODE's settings; eta_ov and
// lr_ratio are its rates; no model).
TrainingTask TheoryTrainingTask();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_TRAINER_H_
