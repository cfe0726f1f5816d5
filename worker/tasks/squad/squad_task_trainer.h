// The SQuAD task's trainer (the squad task; docs/squad.md): reads the
// trial's SQuAD files and GPT-2 tokenizer, builds the prompts, trains the
// decoder (squad_trainer.h) with hand-back checkpoints, and scores greedy
// answers on the evaluation questions (answer_lm.h). Results are prefixed
// eval_ (docs/metrics.md, "SQuAD").
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_TASK_TRAINER_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_TASK_TRAINER_H_

#include "worker/tasks/squad/squad_options.h"
#include "worker/training/task_registry.h"
#include "worker/training/task_trainer.h"

namespace qkov::training::squad {

class SquadTaskTrainer : public InTurnTrainer {
 protected:
  // A data, tokenizer or GloVe file that is missing or malformed is the
  // trial's error (NOT_FOUND or INVALID_ARGUMENT naming the file, and its
  // line or JSON path).
  absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device,
      const std::string& resume_from) const override;
};

// The SQuAD task's entry in the worker's trainers (task_registry.h): its
// trainer and the ratio's check (the SQuAD settings are checked on the
// proto, squad_settings.h).
TrainingTask SquadTrainingTask();

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_TASK_TRAINER_H_
