#include "worker/tasks/squad/squad_settings.h"

#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/transformer_shape.h"
#include "common/trial_defaults.h"
#include "common/trial_rules.h"
#include "worker/tasks/squad/squad_defaults.h"
#include "worker/tasks/text/text_defaults.h"

namespace qkov::squad {
namespace {

namespace v1 = ::qkov::v1;
using rules::IntRule;
using rules::RealRule;

constexpr IntRule kCropChars{"squad.crop_chars", 0, 100000};
constexpr IntRule kMaxPromptTokens{"squad.max_prompt_tokens", 8, 65536};
constexpr IntRule kMaxAnswerTokens{"squad.max_answer_tokens", 1, 4096};
constexpr IntRule kNCtx{"squad.n_ctx", 16, 65536};
constexpr IntRule kDModel{"squad.d_model", 1, 4096};
constexpr IntRule kHeads{"squad.heads", 1, 64};
constexpr IntRule kDHead{"squad.d_head", 1, 1024};
constexpr IntRule kDMlp{"squad.d_mlp", 0, 65536};
constexpr IntRule kLayers{"squad.layers", 1, 48};
constexpr IntRule kEpochs{"squad.epochs", 1, 100000};
constexpr IntRule kAccumulation{"squad.accumulation", 1, 4096};
constexpr IntRule kMaxNewTokens{"squad.max_new_tokens", 1, 4096};
constexpr IntRule kValidationQuestions{"squad.validation_questions", 0,
                                       1000000};
constexpr IntRule kTrainF1Questions{"squad.train_f1_questions", 0, 1000000};
constexpr int64_t kMaxArticle = 1000000000;
constexpr int64_t kMaxQuestions = 1000000000;
constexpr RealRule kDropout{"squad.dropout", 0, 0.99};
constexpr RealRule kInitStd{"squad.init_std", 0, 10, true};
constexpr RealRule kEmbedInitStd{"squad.embed_init_std", 0, 10, true};
constexpr RealRule kEmbedLrMultiplier{"squad.embed_lr_multiplier", 0, 1e6, true,
                                      true};
constexpr RealRule kLabelSmoothing{"squad.label_smoothing", 0, 0.999};
constexpr RealRule kGradClip{"squad.grad_clip", 0, 1e6};
constexpr RealRule kRolloutAlpha{"squad.rollout_alpha", 0, 1};
constexpr RealRule kKPercent{"squad.k_percent", 0, 100};

// The message's own fields.
void ApplyDecoderDefaults(const defaults::SquadDefaults& d, v1::SquadTask* x) {
  if (x->encoder_sha256().empty())
    x->set_encoder_sha256(defaults::kGpt2EncoderSha256);
  if (x->merges_sha256().empty())
    x->set_merges_sha256(defaults::kGpt2MergesSha256);
  if (x->crop_chars() == 0) x->set_crop_chars(d.crop_chars);
  if (x->max_prompt_tokens() == 0)
    x->set_max_prompt_tokens(d.max_prompt_tokens);
  if (x->max_answer_tokens() == 0)
    x->set_max_answer_tokens(d.max_answer_tokens);
  if (x->n_ctx() == 0) x->set_n_ctx(d.n_ctx);
  if (x->d_model() == 0) x->set_d_model(d.d_model);
  if (x->heads() == 0) x->set_heads(d.heads);
  if (x->d_head() == 0) x->set_d_head(x->d_model() / x->heads());
  if (x->d_mlp() == 0) x->set_d_mlp(4 * x->d_model());
  if (x->layers() == 0) x->set_layers(d.layers);
  if (!x->has_dropout()) x->set_dropout(d.dropout);
  if (x->init_std() == 0) x->set_init_std(d.init_std);
  if (x->embed_init_std() == 0) x->set_embed_init_std(d.embed_init_std);
  if (x->epochs() == 0) x->set_epochs(d.epochs);
  if (x->embed_lr_multiplier() == 0)
    x->set_embed_lr_multiplier(d.embed_lr_multiplier);
  if (!x->has_label_smoothing()) x->set_label_smoothing(d.label_smoothing);
  if (x->accumulation() == 0) x->set_accumulation(d.accumulation);
  if (!x->has_grad_clip()) x->set_grad_clip(d.grad_clip);
  if (!x->has_rollout_alpha()) x->set_rollout_alpha(d.rollout_alpha);
  if (!x->has_k_percent()) x->set_k_percent(d.k_percent);
  if (x->max_new_tokens() == 0) x->set_max_new_tokens(d.max_new_tokens);
}

// The shared settings in which SQuAD differs from the synthetic task.
void ApplySharedDefaults(const defaults::SquadDefaults& d, v1::Training* t) {
  v1::Optimizer* o = t->mutable_optimizer();
  if (o->kind() == v1::OPTIMIZER_KIND_UNSPECIFIED) o->set_kind(v1::ADAMW);
  if (o->schedule() == v1::SCHEDULE_KIND_UNSPECIFIED)
    o->set_schedule(v1::ONE_CYCLE);
  if (o->weight_decay() == 0) o->set_weight_decay(d.weight_decay);
  if (o->warmup_steps() == 0) o->set_warmup_steps(d.warmup_steps);
  v1::Evaluation* e = t->mutable_evaluation();
  if (e->dtap_attention_edges().empty()) {
    for (double v : d.dtap_edges) e->add_dtap_attention_edges(v);
  }
  if (e->dtap_probability_edges().empty()) {
    for (double v : d.dtap_edges) e->add_dtap_probability_edges(v);
  }
  if (e->tau_attention() == 0) e->set_tau_attention(d.tau_attention);
  if (e->tau_probability() == 0) e->set_tau_probability(d.tau_probability);
  if (!e->has_eval_every()) e->set_eval_every(defaults::kSquadEvalEvery);
  if (!e->has_eval_examples()) e->set_eval_examples(defaults::kEvalExamples);
  if (e->num_examples() == 0) e->set_num_examples(d.num_examples);
  if (t->batch_size() == 0) t->set_batch_size(d.batch_size);
  if (t->loss_window() == 0) t->set_loss_window(1);
  if (t->report_every() == 0) t->set_report_every(100);
  if (t->target_loss() == 0) t->set_target_loss(-1);  // epochs decide
}

void ApplySquadDefaults(v1::SweepSpec* spec) {
  ApplyDecoderDefaults(defaults::kSquad,
                       spec->mutable_training()->mutable_squad());
  ApplySharedDefaults(defaults::kSquad, spec->mutable_training());
}

// Every size and rate in range, and positions for the longest sequence.
absl::Status CheckRanges(const v1::SquadTask& x, absl::string_view prefix) {
  const TransformerShape s = TransformerShapeOf(x);
  for (auto [rule, value] :
       {std::pair{kCropChars, int64_t{x.crop_chars()}},
        std::pair{kMaxPromptTokens, int64_t{x.max_prompt_tokens()}},
        std::pair{kMaxAnswerTokens, int64_t{x.max_answer_tokens()}},
        std::pair{kNCtx, s.n_ctx}, std::pair{kDModel, s.d_model},
        std::pair{kHeads, s.heads}, std::pair{kDHead, s.d_head},
        std::pair{kDMlp, s.d_mlp}, std::pair{kLayers, s.layers},
        std::pair{kEpochs, int64_t{x.epochs()}},
        std::pair{kAccumulation, int64_t{x.accumulation()}},
        std::pair{kMaxNewTokens, int64_t{x.max_new_tokens()}},
        std::pair{kValidationQuestions, int64_t{x.validation_questions()}},
        std::pair{kTrainF1Questions, int64_t{x.train_f1_questions()}}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  for (auto [rule, value] :
       {std::pair{kDropout, x.dropout()}, std::pair{kInitStd, x.init_std()},
        std::pair{kEmbedInitStd, x.embed_init_std()},
        std::pair{kEmbedLrMultiplier, x.embed_lr_multiplier()},
        std::pair{kLabelSmoothing, x.label_smoothing()},
        std::pair{kGradClip, x.grad_clip()},
        std::pair{kRolloutAlpha, x.rollout_alpha()},
        std::pair{kKPercent, x.k_percent()}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  const int64_t longest =
      int64_t{x.max_prompt_tokens()} + x.max_answer_tokens() + 1;
  if (s.n_ctx < longest) {
    return rules::Invalid(prefix, "squad.n_ctx",
                          absl::StrCat("must be >= squad.max_prompt_tokens + "
                                       "squad.max_answer_tokens + 1 = ",
                                       longest, " (got ", s.n_ctx, ")"));
  }
  return absl::OkStatus();
}

// Each split's articles and question count.
absl::Status CheckSplits(const v1::SquadTask& x, absl::string_view prefix) {
  for (auto [split, data] :
       {std::pair{"train", &x.train()}, std::pair{"eval", &x.eval()},
        std::pair{"validation", &x.validation()}}) {
    const std::string field = absl::StrCat("squad.", split, ".");
    const int64_t begin = data->article_begin(), end = data->article_end(),
                  max = data->max_questions();
    if (begin < 0 || begin > kMaxArticle)
      return rules::Invalid(
          prefix, field + "article_begin",
          absl::StrCat("must be in [0, ", kMaxArticle, "] (got ", begin, ")"));
    if (end != 0 && end <= begin)
      return rules::Invalid(
          prefix, field + "article_end",
          absl::StrCat("must be 0 (to the end) or > article_begin = ", begin,
                       " (got ", end, ")"));
    if (max < 0 || max > kMaxQuestions)
      return rules::Invalid(
          prefix, field + "max_questions",
          absl::StrCat("must be in [0, ", kMaxQuestions, "] (got ", max, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckSquadSettings(const v1::Training& t,
                                absl::string_view prefix) {
  const v1::SquadTask& x = t.squad();
  if (absl::Status s = CheckRanges(x, prefix); !s.ok()) return s;
  if (absl::Status s = CheckSplits(x, prefix); !s.ok()) return s;
  if (x.train().path().empty())
    return rules::Invalid(prefix, "squad.train.path", "is required");
  if (x.eval().path().empty())
    return rules::Invalid(prefix, "squad.eval.path", "is required");
  if (x.validation_questions() > 0 && x.validation().path().empty())
    return rules::Invalid(prefix, "squad.validation.path",
                          "is required when squad.validation_questions > 0");
  if (x.encoder_path().empty())
    return rules::Invalid(prefix, "squad.encoder_path", "is required");
  if (x.merges_path().empty())
    return rules::Invalid(prefix, "squad.merges_path", "is required");
  if (t.optimizer().kind() != v1::ADAMW)
    return rules::Invalid(prefix, "optimizer.kind",
                          "the squad task trains with adamw only");
  if (t.optimizer().schedule() != v1::COSINE_WARMUP &&
      t.optimizer().schedule() != v1::ONE_CYCLE)
    return rules::Invalid(
        prefix, "optimizer.schedule",
        "the squad task trains with cosine_warmup or one_cycle");
  return absl::OkStatus();
}

// As for the text tasks (text_settings.cc), over GPT-2's vocabulary, with
// the next-token logits of a batch ([B, L, V]) and their gradient.
int64_t SquadBytes(const v1::Training& t) {
  const TransformerShape s = TransformerShapeOf(t.squad());
  const double d = s.d_model, h = s.heads;
  const double len = s.n_ctx, layers = s.layers, b = t.batch_size();
  const double params = TransformerWeights(s, 50257.0);
  return ClampedBytes(4 * (4 * params + layers * h * len * len * 8.0 * b +
                           2 * b * len * 50257.0 +
                           layers * b * len * (8 * d + s.d_mlp)));
}

std::string SquadSizes(const v1::Training& t) {
  return absl::StrFormat(
      "batch_size %d, squad.n_ctx %d, squad.d_model %d, squad.heads %d, "
      "squad.layers %d",
      t.batch_size(), t.squad().n_ctx(), t.squad().d_model(), t.squad().heads(),
      t.squad().layers());
}

}  // namespace

TaskSettings SquadSettings() {
  // name, apply_defaults, check, memory_bytes, memory_sizes,
  // stacked_trial_bytes (its trials train one at a time)
  return {"squad",     &ApplySquadDefaults, &CheckSquadSettings,
          &SquadBytes, &SquadSizes,         nullptr};
}

namespace {

const TaskSettingsRegistration kSquadSettings(SquadSettings());

}  // namespace

}  // namespace qkov::squad
