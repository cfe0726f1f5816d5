// The text package's defaults (docs/text-tasks.md): the HateXplain and SVA
// setups the tasks text, hatexplain and sva start from, how often they
// evaluate, and the published checksums of the tokenizer files they read.
// Header-only and torch-free: the server's defaults (text_settings.cc), the
// worker's options and the tests read the same values; tests/unit/
// defaults_test.cc checks they agree with docs/sweep-files.md.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_DEFAULTS_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_DEFAULTS_H_

#include <array>

#include "common/transformer_shape.h"

namespace qkov::defaults {

// Evaluation during training: the steps between evaluations (the examples
// each reads are common/trial_defaults.h's kEvalExamples).
inline constexpr int kTextEvalEvery = 1000;

// The text tasks' model and training (docs/text-tasks.md): the authors'
// HateXplain setup, and where SVA differs. Task kind `text` takes the
// HateXplain values.
struct TextDefaults {
  int max_len;
  int n_ctx;
  int d_model;
  int heads;
  int d_head;
  int d_mlp;
  int layers;
  bool residual;
  bool layer_norm;
  bool causal;
  bool padding_mask;
  bool readout_last_token;  // else the first pad position
  double init_std;
  int epochs;
  bool pos_embed_in_qk;  // else in the OV group (the token embedding: QK)
  bool sgd;              // else AdamW
  double momentum;
  double weight_decay;
  double grad_clip;
  double warmup_fraction;
  double rollout_alpha;
  double k_percent;
  double train_fraction;  // for a single file without splits
  std::array<double, 4> dtap_attention_edges;
  double tau_attention;
  double tau_probability;

  constexpr TransformerShape shape() const {
    return {n_ctx, d_model, heads, d_head, d_mlp, layers};
  }
};
inline constexpr TextDefaults kHateXplainText = {
    128,   256,  64,    4,     64,   256, 1,     true,
    false, true, false, false, 0.02, 30,  false, false,
    0,     1e-4, 1.0,   0.1,   1.0,  5,   0.1,   {0, 0.33, 0.66, 1.1},
    0.33,  0.66};
inline constexpr TextDefaults kSvaText = {
    128,   256,  64,   4,    64,   0,  1,    false,
    false, true, true, true, 0.02, 15, true, true,
    0.99,  1e-5, 1.0,  0.1,  1.0,  5,  0.1,  {0, 0.1, 0.5, 1.1},
    0.1,   0.66};
// The p(y) edges of both text tasks' DTAP heatmaps.
inline constexpr std::array<double, 4> kTextDtapProbabilityEdges = {0, 0.33,
                                                                    0.66, 1.1};
inline constexpr char kBertVocabSha256[] =
    "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3";
// OpenAI's GPT-2 tokenizer files (encoder.json, vocab.bpe), as published.
inline constexpr char kGpt2EncoderSha256[] =
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783";
inline constexpr char kGpt2MergesSha256[] =
    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5";

}  // namespace qkov::defaults

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_DEFAULTS_H_
