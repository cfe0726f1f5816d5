// The defaults of a trial's training settings: the paper's synthetic setup
// (docs/paper.md). One table, read by the server when it completes a
// submitted spec (server/core/sweep_spec.cc ApplyTrainingDefaults) and by the
// worker's option structs (worker/training/config.h); docs/sweep-files.md
// shows the same values, and tests/unit/defaults_test.cc checks all three
// agree. Header-only, so worker/training uses it without linking anything.
#ifndef QKOV_COMMON_TRIAL_DEFAULTS_H_
#define QKOV_COMMON_TRIAL_DEFAULTS_H_

#include <array>
#include <cstdint>

#include "common/transformer_shape.h"

namespace qkov::defaults {

// The synthetic task (docs/paper.md §2).
inline constexpr int kVocabSize = 50;
inline constexpr int kNumCommon = 10;
inline constexpr int kNumClasses = 4;
inline constexpr int kDistinctPerClass = 10;
inline constexpr int kSeqLen = 64;

// Training.
inline constexpr int64_t kMaxSteps = 100000;
inline constexpr int kBatchSize = 32;
inline constexpr int kReportEvery = 500;
inline constexpr double kTargetLoss = 1e-3;
inline constexpr int kLossWindow = 250;

// Optimizer (SGD, constant schedule; the AdamW constants for kind adamw).
inline constexpr double kAdamBeta1 = 0.9;
inline constexpr double kAdamBeta2 = 0.999;
inline constexpr double kAdamEps = 1e-8;

// Initialization: identity times this scale (the paper's 1e-6).
inline constexpr double kIdentityScale = 1e-6;

// Evaluation.
inline constexpr int kNumExamples = 2048;
inline constexpr uint64_t kEvalSeed = 20260807;
inline constexpr double kTauAttention = 0.6;
inline constexpr double kTauProbability = 0.6;
// Evaluation during training (text and SQuAD tasks; docs/metrics.md): the
// validation examples each evaluation reads. The steps between evaluations
// are per task (kTextEvalEvery, kSquadEvalEvery), chosen so that evaluating
// costs at most about a tenth of training (docs/PERFORMANCE.md).
inline constexpr int kEvalExamples = 256;
inline constexpr int kTextEvalEvery = 1000;
inline constexpr int kSquadEvalEvery = 1000;
inline constexpr std::array<double, 6> kDtapEdges = {0,   0.2, 0.4,
                                                     0.6, 0.8, 1.0};

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

// The reduced ODE (docs/paper.md §4) with the authors' settings.
struct TheoryDefaults {
  double m;            // informative tokens
  double n;            // common tokens
  double b;            // normalization constant of the paper
  double num_classes;  // M
  double dtau;         // the paper's fixed step
  double max_tau;
  double target_loss;
  int num_thresholds;  // log-spaced loss thresholds from 1 to target_loss
  int num_samples;     // trajectory samples, log-spaced in tau
};
inline constexpr TheoryDefaults kTheory = {5,   50,   50, 20, 10,
                                           5e7, 1e-4, 50, 200};

// Retry budget of a trial's failures.
inline constexpr int kMaxAttempts = 3;

}  // namespace qkov::defaults

#endif  // QKOV_COMMON_TRIAL_DEFAULTS_H_
