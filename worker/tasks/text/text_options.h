// The settings of a text-classification trial (docs/text-tasks.md): where
// its data is, how it is tokenized, the model's shape, and how its
// parameters are grouped for the learning rates. Plain values, no LibTorch.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_OPTIONS_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_OPTIONS_H_

#include <array>
#include <cstdint>
#include <vector>

#include "common/transformer_shape.h"
#include "common/trial_defaults.h"
#include "worker/tasks/text/datasets.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/tasks/text/wordpiece.h"
#include "worker/training/param_group.h"

namespace qkov::training::text {

// Unset fields take the HateXplain setup (task kind `text`); the agent fills
// every field from the trial's config.
inline constexpr const defaults::TextDefaults& kDefaults =
    defaults::kHateXplainText;

// Where the classifier reads the residual stream.
enum class Readout {
  kFirstPad,   // the first pad position; position 0 when none (HateXplain)
  kLastToken,  // the last real token (SVA)
};

struct TextModelOptions {
  int64_t vocab_size = 30522;
  int64_t num_classes = 3;
  int64_t max_len = kDefaults.max_len;  // sequence length (padded)
  TransformerShape shape = kDefaults.shape();
  bool residual = kDefaults.residual;
  bool layer_norm = kDefaults.layer_norm;
  bool causal = kDefaults.causal;
  bool padding_mask = kDefaults.padding_mask;
  Readout readout = Readout::kFirstPad;
  double init_std =
      kDefaults.init_std;  // N(0, init_std^2) weights, zero biases
  // > 0: the token embedding's own N(0, std^2) (SQuAD's decoder: 0.1).
  double embed_init_std = 0;
  // A language model (SQuAD's decoder): logits over the vocabulary at
  // every position through the token embedding (tied), no classifier.
  bool lm_head = false;
  // Dropout (training only) on the embeddings, the attention weights, and
  // each attention and MLP output before it joins the residual stream.
  double dropout = 0;
  // GELU by its tanh approximation (DemoTransformer's gelu_new); false:
  // the exact erf form (torch.nn.GELU, SQuAD's decoder).
  bool gelu_tanh = true;
};

struct TextTaskOptions {
  TextSource train, validation, test;  // an empty path: no such split
  // > 0: `train`'s examples are split, this share (drawn with split_seed)
  // for training and the rest for test (sources without splits).
  double train_fraction = 0;
  // > 0 (with train_fraction, no validation source): this share of train's
  // examples, drawn from the rest, is the validation split.
  double validation_fraction = 0;
  uint64_t split_seed = 0;
  WordPieceOptions tokenizer;
  TextModelOptions model;
  int64_t epochs = kDefaults.epochs;
  ParamGroup embed_group = ParamGroup::kQk;  // the token embedding's group
  ParamGroup pos_group = ParamGroup::kOv;    // the position embedding's
  double mlp_lr_multiplier = 1;  // MLP rate = this x eta_ov; 0: frozen
  // Weight decay per group (qk, ov, mlp).
  std::array<double, kNumParamGroups> weight_decay = {0, 0, 0};
  double grad_clip = kDefaults.grad_clip;              // global norm; 0: none
  double warmup_fraction = kDefaults.warmup_fraction;  // of the steps
  double rollout_alpha = kDefaults.rollout_alpha;
  double k_percent = kDefaults.k_percent;  // comprehensiveness / sufficiency
};

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_OPTIONS_H_
