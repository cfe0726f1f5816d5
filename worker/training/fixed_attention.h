// The fixed-attention experiment (docs/paper.md §3, "Fig-3"): attention is not
// learned but fixed at alpha, spread uniformly over the distinct tokens of
// each sequence, with 1 - alpha spread uniformly over its common tokens; only
// the OV circuit trains. Collapsed OV is one Linear(V, V) with bias;
// factorized OV is W_O W_V without bias (the authors' code). The sequence
// ends [y_c, q_c], so the label is the query token q_c.
#ifndef QKOV_WORKER_TRAINING_FIXED_ATTENTION_H_
#define QKOV_WORKER_TRAINING_FIXED_ATTENTION_H_

#include "absl/status/statusor.h"
#include "worker/training/config.h"
#include "worker/training/trainer.h"

namespace qkov::training {

struct FixedAttentionOptions {
  TrialOptions
      trial;  // task, seed, eta_ov (the only rate), steps, batch, reporting
  double alpha = 0.6;  // attention mass on distinct tokens, in (0, 1]
  bool factorized = false;
};

// Reports train_loss and train_accuracy every report_every steps; final
// results: loss and accuracy on the held-out set, alpha, steps. Divergence
// ends the trial kDiverged. InvalidArgument for a bad alpha or options.
absl::StatusOr<TrialOutcome> RunFixedAttention(
    const FixedAttentionOptions& options, TrainingObserver* observer);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_FIXED_ATTENTION_H_
