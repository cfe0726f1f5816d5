// The text-classification task's trainer (HateXplain, SVA, or a dataset in
// the generic JSON Lines form; docs/text-tasks.md): reads and tokenizes the
// trial's data, trains the TextModel of text_model.h with the trial's rate
// groups (torch::optim's AdamW or SGD, one cosine schedule with warm-up,
// gradient clipping, epochs over the training set in a seeded order), and
// evaluates on validation and test (text_metrics.h).
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_TRAINER_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_TRAINER_H_

#include "worker/tasks/text/text_options.h"
#include "worker/training/task_registry.h"
#include "worker/training/task_trainer.h"

namespace qkov::training::text {

class TextTrainer : public InTurnTrainer {
 protected:
  // A data or vocabulary file that is missing or malformed is the trial's
  // error (INVALID_ARGUMENT or NOT_FOUND, "PATH:LINE: ...").
  absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device,
      const std::string& resume_from) const override;
};

// The text task's entry in the worker's trainers (task_registry.h): its
// trainer for the task table's text, hatexplain and sva, and the ratio's
// check (the text settings are checked on the proto, text_settings.h).
TrainingTask TextTrainingTask();

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_TRAINER_H_
