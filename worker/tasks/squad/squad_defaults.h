// The SQuAD package's defaults (docs/squad.md). Header-only and
// torch-free, like the text package's (worker/tasks/text/text_defaults.h).
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_DEFAULTS_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_DEFAULTS_H_

#include <array>
#include <cstdint>

#include "common/transformer_shape.h"

namespace qkov::defaults {

// Evaluation during training: the steps between evaluations.
inline constexpr int kSquadEvalEvery = 1000;

// The SQuAD decoder and its training (docs/squad.md): the authors' faster-QK
// arm (NOTES §6), on GPT-2's tokenizer.
struct SquadDefaults {
  int crop_chars;
  int max_prompt_tokens;
  int max_answer_tokens;
  int n_ctx;
  int d_model;
  int heads;
  int d_head;
  int d_mlp;
  int layers;
  double dropout;
  double init_std;
  double embed_init_std;
  int epochs;
  double embed_lr_multiplier;
  double label_smoothing;
  int batch_size;
  int accumulation;
  double grad_clip;
  double weight_decay;
  int64_t warmup_steps;
  double rollout_alpha;
  double k_percent;
  int max_new_tokens;
  int num_examples;  // evaluation questions
  double tau_attention;
  double tau_probability;
  std::array<double, 5> dtap_edges;  // both axes

  constexpr TransformerShape shape() const {
    return {n_ctx, d_model, heads, d_head, d_mlp, layers};
  }
};
inline constexpr SquadDefaults kSquad = {
    200,  204,   50,  256, 300, 6,    50,  1200, 6,
    0.2,  0.041, 0.1, 100, 0.1, 0.1,  32,  2,    0.5,
    0.05, 1000,  0.5, 5,   50,  5000, 0.1, 0.5,  {0, 0.05, 0.1, 0.5, 1.001}};

}  // namespace qkov::defaults

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_DEFAULTS_H_
