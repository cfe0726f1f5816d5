// Training of the SQuAD decoder (docs/squad.md): AdamW over three rate
// groups as the authors set them (the QK weights and biases at lr_ratio x
// base; the token embedding at embed_lr_multiplier x base with no weight
// decay; everything else at base), OneCycleLR's schedule or a cosine after
// a linear warm-up, gradient accumulation and clipping, epochs over the
// training questions in a seeded order, loss on the answer tokens only;
// optionally the authors' checkpoint selection (the weights with the best
// validation F1 of those after each epoch). A run can be stopped before any
// step and handed back as a checkpoint from which it continues bit for bit.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_TRAINER_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_TRAINER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/tasks/squad/answer_lm.h"
#include "worker/training/trial.h"

namespace qkov::training::squad {

struct SquadTrainOptions {
  uint64_t seed = 1234;  // the order of the questions in each epoch
  double base_lr = 5e-5;
  double lr_ratio = 1;               // QK rate = lr_ratio x base_lr
  double embed_lr_multiplier = 0.1;  // token embedding rate, no weight decay
  double weight_decay = 0.05;        // every other group
  double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_eps = 1e-8;
  double label_smoothing = 0.1;
  int64_t batch = 32;
  int64_t accumulation = 2;  // micro-batches per optimizer step
  double grad_clip = 0.5;    // global norm; 0: none
  int64_t epochs = 1;
  int64_t max_steps = 0;  // > 0: at most this many optimizer steps
  // true: OneCycleLR's shape and beta1 cycling (optimizer.h
  // OneCycleFactor; the authors'); false: linear warm-up over warmup_steps,
  // then a cosine to 0 (CosineWarmupFactor).
  bool one_cycle = true;
  int64_t warmup_steps = 1000;
};

// The optimizer steps `options` give for `questions` training questions:
// epochs x micro-batches per epoch / accumulation (at least 1), capped by
// max_steps.
int64_t SquadTotalSteps(const SquadTrainOptions& options, int64_t questions);

struct SquadTrainReport {
  int64_t step = 0;  // optimizer steps done
  double loss = 0;   // mean answer loss since the last report
  double lr_qk = 0, lr_base = 0;
  double epoch = 0;  // epochs done (fractional)
};

struct SquadTrainHooks {
  int64_t report_every = 100;
  // Called every report_every optimizer steps and after the last; false
  // stops training there.
  std::function<bool(const SquadTrainReport&)> report;
  // Polled before every optimizer step; kHandBack fills `checkpoint`.
  std::function<StopRequest()> poll_stop;
  std::string resume_from;  // a checkpoint of the same options; "" to start
  // Set: checkpoint selection. Called after the optimizer step that
  // completes an epoch and after the last step, with the steps done; returns
  // the validation score (F1) of the model's weights then, and must leave
  // the model and every random stream as it found them. The run ends holding
  // the weights of the first call with the highest score.
  std::function<double(int64_t step)> validate;
};

struct SquadTrainRun {
  int64_t steps = 0;       // optimizer steps done
  int64_t total = 0;       // SquadTotalSteps
  bool stopped = false;    // by `report` or `poll_stop`
  bool diverged = false;   // a micro-batch loss was NaN or infinite
  std::string checkpoint;  // set on StopRequest::kHandBack
  // The step whose weights the model holds at the end: the selected one
  // with `validate`, else the last; and the selected weights' score (-1
  // without `validate`).
  int64_t selected_step = 0;
  double selected_score = -1;
};

// Trains `model` (lm_head) in place. INVALID_ARGUMENT for no training
// questions, a rate that is not finite and positive, or a checkpoint that
// does not parse or belongs to other options. May throw what LibTorch
// throws.
absl::StatusOr<SquadTrainRun> TrainSquadModel(
    text::TextModel& model, const std::vector<SquadExample>& train,
    int64_t pad_id, const SquadTrainOptions& options,
    const SquadTrainHooks& hooks);

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_TRAINER_H_
