#include "worker/tasks/text/text_settings.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/task_kind.h"
#include "common/transformer_shape.h"
#include "common/trial_defaults.h"
#include "common/trial_rules.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/tasks/text/text_formats.h"
#include "worker/tasks/text/text_task_info.h"

namespace qkov::text {
namespace {

namespace v1 = ::qkov::v1;
using rules::IntRule;
using rules::RealRule;

constexpr IntRule kMaxLen{"text.max_len", 2, 4096};
constexpr IntRule kNCtx{"text.n_ctx", 2, 65536};
constexpr IntRule kDModel{"text.d_model", 1, 4096};
constexpr IntRule kHeads{"text.heads", 1, 64};
constexpr IntRule kDHead{"text.d_head", 1, 1024};
constexpr IntRule kDMlp{"text.d_mlp", 0, 65536};
constexpr IntRule kLayers{"text.layers", 1, 48};
constexpr IntRule kEpochs{"text.epochs", 1, 100000};
constexpr RealRule kTrainFraction{"text.train_fraction", 0, 0.999};
constexpr RealRule kValidationFraction{"text.validation_fraction", 0, 0.999};
constexpr RealRule kInitStd{"text.init_std", 0, 10, true};
constexpr RealRule kMlpLrMultiplier{"text.mlp_lr_multiplier", 0, 1e6};
constexpr RealRule kQkWeightDecay{"text.qk_weight_decay", 0, 1e3};
constexpr RealRule kOvWeightDecay{"text.ov_weight_decay", 0, 1e3};
constexpr RealRule kMlpWeightDecay{"text.mlp_weight_decay", 0, 1e3};
constexpr RealRule kGradClip{"text.grad_clip", 0, 1e6};
constexpr RealRule kWarmupFraction{"text.warmup_fraction", 0, 1};
constexpr RealRule kRolloutAlpha{"text.rollout_alpha", 0, 1};
constexpr RealRule kKPercent{"text.k_percent", 0, 100, true};

// The message's own fields, from the task's text defaults.
void ApplyModelDefaults(const defaults::TextDefaults& d, v1::TextTask* x) {
  if (x->max_len() == 0) x->set_max_len(d.max_len);
  if (x->n_ctx() == 0) x->set_n_ctx(std::max(d.n_ctx, x->max_len()));
  if (x->d_model() == 0) x->set_d_model(d.d_model);
  if (x->heads() == 0) x->set_heads(d.heads);
  if (x->d_head() == 0) x->set_d_head(d.d_head);
  if (!x->has_d_mlp()) x->set_d_mlp(d.d_mlp);
  if (x->layers() == 0) x->set_layers(d.layers);
  if (!x->has_residual()) x->set_residual(d.residual);
  if (!x->has_layer_norm()) x->set_layer_norm(d.layer_norm);
  if (!x->has_causal()) x->set_causal(d.causal);
  if (!x->has_padding_mask()) x->set_padding_mask(d.padding_mask);
  if (x->readout() == v1::READOUT_UNSPECIFIED)
    x->set_readout(d.readout_last_token ? v1::READOUT_LAST_TOKEN
                                        : v1::READOUT_FIRST_PAD);
  if (x->init_std() == 0) x->set_init_std(d.init_std);
}

// The data, the parameter groups and the training of the message.
void ApplyDataDefaults(const defaults::TextDefaults& d,
                       const std::string& format, v1::TextTask* x) {
  for (v1::TextData* data :
       {x->mutable_train(), x->mutable_validation(), x->mutable_test()}) {
    if (data->format().empty()) data->set_format(format);
  }
  if (x->vocab_sha256().empty())
    x->set_vocab_sha256(defaults::kBertVocabSha256);
  if (!x->has_lowercase()) x->set_lowercase(true);
  if (x->epochs() == 0) x->set_epochs(d.epochs);
  if (x->embed_group() == v1::PARAM_GROUP_UNSPECIFIED)
    x->set_embed_group(v1::PARAM_GROUP_QK);
  if (x->pos_group() == v1::PARAM_GROUP_UNSPECIFIED)
    x->set_pos_group(d.pos_embed_in_qk ? v1::PARAM_GROUP_QK
                                       : v1::PARAM_GROUP_OV);
  if (!x->has_mlp_lr_multiplier()) x->set_mlp_lr_multiplier(1);
  if (x->train_fraction() == 0 && x->test().path().empty() &&
      x->train().format() == "sva_filtered")
    x->set_train_fraction(d.train_fraction);
  if (!x->has_grad_clip()) x->set_grad_clip(d.grad_clip);
  if (!x->has_warmup_fraction()) x->set_warmup_fraction(d.warmup_fraction);
  if (!x->has_rollout_alpha()) x->set_rollout_alpha(d.rollout_alpha);
  if (x->k_percent() == 0) x->set_k_percent(d.k_percent);
}

// The shared settings in which the text tasks differ from the synthetic
// task: SGD or AdamW by the task, a cosine warm-up, per-group weight decay
// from the optimizer's, their evaluation, and training by epochs.
void ApplySharedDefaults(const defaults::TextDefaults& d, v1::Training* t) {
  v1::TextTask* x = t->mutable_text();
  v1::Optimizer* o = t->mutable_optimizer();
  if (o->kind() == v1::OPTIMIZER_KIND_UNSPECIFIED) {
    o->set_kind(d.sgd ? v1::SGD : v1::ADAMW);
    if (o->momentum() == 0) o->set_momentum(d.momentum);
  }
  if (o->schedule() == v1::SCHEDULE_KIND_UNSPECIFIED)
    o->set_schedule(v1::COSINE_WARMUP);
  if (o->weight_decay() == 0) o->set_weight_decay(d.weight_decay);
  for (auto [has, set] : {std::pair{&v1::TextTask::has_qk_weight_decay,
                                    &v1::TextTask::set_qk_weight_decay},
                          std::pair{&v1::TextTask::has_ov_weight_decay,
                                    &v1::TextTask::set_ov_weight_decay},
                          std::pair{&v1::TextTask::has_mlp_weight_decay,
                                    &v1::TextTask::set_mlp_weight_decay}}) {
    if (!(x->*has)()) (x->*set)(o->weight_decay());
  }
  v1::Evaluation* e = t->mutable_evaluation();
  if (e->dtap_attention_edges().empty()) {
    for (double v : d.dtap_attention_edges) e->add_dtap_attention_edges(v);
  }
  if (e->dtap_probability_edges().empty()) {
    for (double v : defaults::kTextDtapProbabilityEdges)
      e->add_dtap_probability_edges(v);
  }
  if (e->tau_attention() == 0) e->set_tau_attention(d.tau_attention);
  if (e->tau_probability() == 0) e->set_tau_probability(d.tau_probability);
  if (!e->has_eval_every()) e->set_eval_every(defaults::kTextEvalEvery);
  if (!e->has_eval_examples()) e->set_eval_examples(defaults::kEvalExamples);
  if (e->num_examples() == 0) e->set_num_examples(100000);
  if (t->loss_window() == 0) t->set_loss_window(1);
  if (t->report_every() == 0) t->set_report_every(100);
  if (t->target_loss() == 0) t->set_target_loss(-1);  // epochs decide
}

void ApplyTextDefaults(v1::SweepSpec* spec) {
  v1::Training* t = spec->mutable_training();
  const TaskInfo* task = FindTask(t->task());
  if (task == nullptr) return;
  const text::TextTaskDefaults* d = text::TextTaskDefaultsOf(task->name);
  if (d == nullptr) return;
  ApplyModelDefaults(*d->defaults, t->mutable_text());
  ApplyDataDefaults(*d->defaults, d->format, t->mutable_text());
  ApplySharedDefaults(*d->defaults, t);
}

// The model's shape: each size in range, positions for every token.
absl::Status CheckShape(const v1::TextTask& x, absl::string_view prefix) {
  const TransformerShape s = TransformerShapeOf(x);
  for (auto [rule, value] :
       {std::pair{kMaxLen, int64_t{x.max_len()}}, std::pair{kNCtx, s.n_ctx},
        std::pair{kDModel, s.d_model}, std::pair{kHeads, s.heads},
        std::pair{kDHead, s.d_head}, std::pair{kDMlp, s.d_mlp},
        std::pair{kLayers, s.layers},
        std::pair{kEpochs, int64_t{x.epochs()}}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  if (s.n_ctx < x.max_len()) {
    return rules::Invalid(prefix, "text.n_ctx",
                          absl::StrCat("must be >= text.max_len = ",
                                       x.max_len(), " (got ", s.n_ctx, ")"));
  }
  return absl::OkStatus();
}

// The data: the splits' shares, the files named, each format known.
absl::Status CheckData(const v1::TextTask& x, absl::string_view prefix) {
  if (x.validation_fraction() > 0) {
    if (x.train_fraction() == 0 ||
        x.train_fraction() + x.validation_fraction() >= 1) {
      return rules::Invalid(
          prefix, "text.validation_fraction",
          absl::StrCat("needs text.train_fraction > 0 and the two below 1 "
                       "(got ",
                       x.train_fraction(), " + ", x.validation_fraction(),
                       ")"));
    }
    if (!x.validation().path().empty()) {
      return rules::Invalid(prefix, "text.validation_fraction",
                            "cannot go with text.validation.path (both name "
                            "the validation split)");
    }
  }
  if (x.train().path().empty())
    return rules::Invalid(prefix, "text.train.path", "is required");
  if (x.vocab_path().empty())
    return rules::Invalid(prefix, "text.vocab_path", "is required");
  for (auto [name, data] : {std::pair{"train", &x.train()},
                            std::pair{"validation", &x.validation()},
                            std::pair{"test", &x.test()}}) {
    if (absl::StatusOr<int> f = rules::TextFormatIndex(
            prefix, absl::StrCat("text.", name, ".format"), data->format());
        !f.ok())
      return f.status();
    if (data->max_examples() < 0)
      return rules::Invalid(
          prefix, absl::StrCat("text.", name, ".max_examples"),
          absl::StrCat("must be >= 0 (got ", data->max_examples(), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckTextSettings(const v1::Training& t,
                               absl::string_view prefix) {
  const v1::TextTask& x = t.text();
  if (absl::Status s = CheckShape(x, prefix); !s.ok()) return s;
  for (auto [rule, value] :
       {std::pair{kTrainFraction, x.train_fraction()},
        std::pair{kValidationFraction, x.validation_fraction()},
        std::pair{kInitStd, x.init_std()},
        std::pair{kMlpLrMultiplier, x.mlp_lr_multiplier()},
        std::pair{kQkWeightDecay, x.qk_weight_decay()},
        std::pair{kOvWeightDecay, x.ov_weight_decay()},
        std::pair{kMlpWeightDecay, x.mlp_weight_decay()},
        std::pair{kGradClip, x.grad_clip()},
        std::pair{kWarmupFraction, x.warmup_fraction()},
        std::pair{kRolloutAlpha, x.rollout_alpha()},
        std::pair{kKPercent, x.k_percent()}}) {
    if (absl::Status s = rules::Check(prefix, rule, value); !s.ok()) return s;
  }
  return CheckData(x, prefix);
}

// Weights with their gradients and two optimizer moments, plus each layer's
// attention tensors in training ([B, H, L, L], ~8 kept for backward) and in
// evaluation (256 examples at a time). The datasets themselves are not
// counted.
int64_t TextBytes(const v1::Training& t) {
  const TransformerShape s = TransformerShapeOf(t.text());
  const double len = t.text().max_len(), layers = s.layers, h = s.heads;
  const double params = TransformerWeights(s, 30522.0);
  return ClampedBytes(4 * (4 * params + layers * h * len * len *
                                            (8.0 * t.batch_size() + 3 * 256)));
}

std::string TextSizes(const v1::Training& t) {
  return absl::StrFormat(
      "batch_size %d, text.max_len %d, text.heads %d, text.layers %d",
      t.batch_size(), t.text().max_len(), t.text().heads(), t.text().layers());
}

}  // namespace

TaskSettings TextSettings() {
  // name, apply_defaults, check, memory_bytes, memory_sizes,
  // stacked_trial_bytes (its trials train one at a time)
  return {"text",     &ApplyTextDefaults, &CheckTextSettings,
          &TextBytes, &TextSizes,         nullptr};
}

namespace {

const TaskSettingsRegistration kTextSettings(TextSettings());

}  // namespace

}  // namespace qkov::text
