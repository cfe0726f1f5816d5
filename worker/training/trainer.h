// Trains trials of every task kind: the one file that knows every task.
// Each kind has a TaskTrainer (task_trainer.h), with its data, model,
// metrics and evaluation in a folder of its own:
//   synthetic        synthetic/synthetic_trainer.h (synthetic_task.h,
//                    model.h, analytic_gradients.h, metrics.h)
//   fixed_attention  synthetic/fixed_attention.h
//   theory           theory/theory_trainer.h (the ODE of theory.h)
//   text             text/text_trainer.h (data, tokenizer, model, metrics
//                    in text/)
//   squad            squad/squad_task_trainer.h (data, decoder training and
//                    answer evaluation in squad/; tokenizer and model in
//                    text/)
// RunTrials is the one entry: it validates, dispatches by kind, and turns
// LibTorch's exceptions into a Status (torch_status.h). Knows nothing of the
// coordinator: a trainer reports through TrainingObserver, which may also ask
// it to stop (lease lost, sweep cancelled, SIGTERM).
#ifndef QKOV_WORKER_TRAINING_TRAINER_H_
#define QKOV_WORKER_TRAINING_TRAINER_H_

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/training/config.h"
#include "worker/training/optimizer.h"
#include "worker/training/task_trainer.h"
#include "worker/training/trial.h"

namespace qkov::training {

// The trainer of `options`' task; the options must be valid
// (TrialOptions::Validate: a task this worker trains).
const TaskTrainer& TrainerFor(const TrialOptions& options);

// OK when the trials can train in one batch: all valid, of one task, and
// batchable by its trainer.
absl::Status CheckBatchable(const std::vector<TrialOptions>& options);

// Trains the trials together (CheckBatchable). InvalidArgument for invalid
// options or a checkpoint that does not parse; RESOURCE_EXHAUSTED when memory
// runs out; INTERNAL for another LibTorch error (message kept). `observers`
// entries may be null.
absl::StatusOr<std::vector<TrialOutcome>> RunTrials(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from);

// One trial: RunTrials of one.
absl::StatusOr<TrialOutcome> RunTrial(const TrialOptions& options,
                                      TrainingObserver* observer,
                                      const torch::Device& device = torch::kCPU,
                                      const std::string& resume_from = "");

// "torch 1.13.1": the LibTorch this was built against, for provenance (the
// device and threads are recorded beside it).
std::string TorchVersion();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TRAINER_H_
