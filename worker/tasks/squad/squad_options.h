// The settings of a SQuAD trial (the squad task; docs/squad.md), as the
// agent converts them from qkov.v1.SquadTask. The base rate is the trial's
// eta_ov, the QK group's lr_ratio x eta_ov; AdamW's betas, eps, weight decay
// and warm-up are the trial's optimizer settings; the AC/ACMC thresholds,
// DTAP edges and evaluation size are its evaluation settings.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_OPTIONS_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_OPTIONS_H_

#include <cstdint>
#include <string>

#include "common/transformer_shape.h"
#include "common/trial_defaults.h"
#include "worker/tasks/squad/squad_data.h"
#include "worker/tasks/squad/squad_defaults.h"
#include "worker/tasks/text/gpt2_bpe.h"
#include "worker/tasks/text/text_options.h"

namespace qkov::training::squad {

// The decoder: the text tasks' transformer (text/text_model.h) as a causal
// language model in GPT-2's layout (residual stream, layer norm, logits
// through the tied token embedding, the exact GELU, no padding mask), of
// defaults::kSquad's shape. Its vocabulary is the tokenizer's and its
// sequence its n_ctx positions, both set by the trainer.
inline text::TextModelOptions DecoderModelOptions() {
  text::TextModelOptions m;
  m.shape = defaults::kSquad.shape();
  m.residual = m.layer_norm = m.causal = m.lm_head = true;
  m.padding_mask = m.gelu_tanh = false;
  m.dropout = defaults::kSquad.dropout;
  m.init_std = defaults::kSquad.init_std;
  m.embed_init_std = defaults::kSquad.embed_init_std;
  return m;
}

struct SquadTaskOptions {
  SquadSource train;  // the first answer of each question is its target
  SquadSource eval;   // scored: the first evaluation.num_examples questions
  // > 0: checkpoint selection by the greedy answers' F1 on the first
  // validation_questions questions of `validation`, after each epoch and
  // the last step (SquadTrainHooks::validate).
  SquadSource validation;
  int64_t validation_questions = 0;
  // > 0: the greedy answers' F1 on the first that many training questions
  // (file order) after training, with the weights scored (train_f1).
  int64_t train_f1_questions = 0;
  text::Gpt2BpeOptions tokenizer;
  std::string glove_path;  // empty: random token embedding
  PromptOptions prompt;
  text::TextModelOptions model = DecoderModelOptions();
  int64_t epochs = defaults::kSquad.epochs;
  double embed_lr_multiplier = defaults::kSquad.embed_lr_multiplier;
  double label_smoothing = defaults::kSquad.label_smoothing;
  int64_t accumulation = defaults::kSquad.accumulation;
  double grad_clip = defaults::kSquad.grad_clip;
  double rollout_alpha = defaults::kSquad.rollout_alpha;
  double k_percent = defaults::kSquad.k_percent;
  int64_t max_new_tokens = defaults::kSquad.max_new_tokens;
};

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_OPTIONS_H_
