// The fixed-attention experiment (docs/paper.md §3, "Fig-3"): attention is not
// learned but fixed at alpha, spread uniformly over the distinct tokens of
// each sequence, with 1 - alpha spread uniformly over its common tokens; only
// the OV circuit trains. Collapsed OV is one Linear(V, V) with bias;
// factorized OV is W_O W_V without bias (the authors' code). The sequence
// ends [y_c, q_c], so the label is the query token q_c.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_FIXED_ATTENTION_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_FIXED_ATTENTION_H_

#include "worker/training/task_registry.h"
#include "worker/training/task_trainer.h"

namespace qkov::training {

// TrialOptions: kind kFixedAttention, alpha in (0, 1], the synthetic task's
// data, seed, eta_ov (the only rate), steps, batch, reporting; FAFO and CAFO
// mean factorized OV, FACO and CACO collapsed. Reports train_loss and
// train_accuracy every report_every steps; final results: loss and accuracy
// on the held-out set, alpha, steps. Divergence ends the trial kDiverged.
class FixedAttentionTrainer : public InTurnTrainer {
 protected:
  // Never an error: divergence is the outcome kDiverged.
  absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device,
      const std::string& resume_from) const override;
};

// The fixed-attention task's entry in the worker's trainers
// (task_registry.h): its trainer, and its checks (alpha, not the ratio: no
// QK circuit; the task's shape).
TrainingTask FixedAttentionTrainingTask();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_FIXED_ATTENTION_H_
