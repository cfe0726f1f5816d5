#include "common/trial_rules.h"

#include <cmath>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qkov::rules {
namespace {

std::string Num(double x) { return absl::StrFormat("%g", x); }

absl::Status Invalid(absl::string_view prefix, absl::string_view field,
                     absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, field, ": ", reason));
}

}  // namespace

absl::Status Check(absl::string_view prefix, const IntRule& rule,
                   int64_t value) {
  if (value < rule.lo || value > rule.hi) {
    return Invalid(prefix, rule.field,
                   absl::StrCat("must be in [", rule.lo, ", ", rule.hi,
                                "] (got ", value, ")"));
  }
  return absl::OkStatus();
}

absl::Status Check(absl::string_view prefix, const RealRule& rule,
                   double value) {
  if (rule.rate && !(std::isfinite(value) && value > 0)) {
    return Invalid(
        prefix, rule.field,
        absl::StrCat("must be finite and > 0 (got ", Num(value), ")"));
  }
  if (rule.rate && value > rule.hi) {
    return Invalid(
        prefix, rule.field,
        absl::StrCat("must be <= ", Num(rule.hi), " (got ", Num(value), ")"));
  }
  if (!std::isfinite(value) || value < rule.lo || value > rule.hi ||
      (rule.lo_open && value == rule.lo)) {
    return Invalid(
        prefix, rule.field,
        absl::StrCat("must be in ", rule.lo_open ? "(" : "[", Num(rule.lo),
                     ", ", Num(rule.hi), "] (got ", Num(value), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckSyntheticShape(absl::string_view prefix, int64_t vocab_size,
                                 int64_t num_common, int64_t num_classes,
                                 int64_t distinct_per_class, int64_t seq_len) {
  for (auto [rule, value] :
       {std::pair{kVocabSize, vocab_size}, std::pair{kNumClasses, num_classes},
        std::pair{kDistinctPerClass, distinct_per_class},
        std::pair{kSeqLen, seq_len}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (num_common < 2 * (num_classes + 1)) {
    return Invalid(
        prefix, "synthetic.num_common",
        absl::StrCat(
            "must be >= 2 * (num_classes + 1) = ", 2 * (num_classes + 1),
            " (labels and query tokens are common tokens)"));
  }
  if (num_common + num_classes * distinct_per_class > vocab_size) {
    return Invalid(prefix, "synthetic.vocab_size",
                   "must be >= num_common + num_classes * distinct_per_class");
  }
  return absl::OkStatus();
}

absl::Status CheckRun(absl::string_view prefix, int64_t max_steps,
                      int64_t batch_size, int64_t report_every,
                      int64_t loss_window, double target_loss,
                      int64_t warmup_steps) {
  for (auto [rule, value] :
       {std::pair{kMaxSteps, max_steps}, std::pair{kBatchSize, batch_size},
        std::pair{kReportEvery, report_every},
        std::pair{kLossWindow, loss_window}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (!std::isfinite(target_loss)) {
    return Invalid(prefix, "target_loss",
                   absl::StrCat("must be finite (got ", Num(target_loss),
                                "; negative: never stop early)"));
  }
  return Check(prefix, IntRule{"optimizer.warmup_steps", 0, max_steps},
               warmup_steps);
}

absl::StatusOr<int> TextFormatIndex(absl::string_view prefix,
                                    absl::string_view field,
                                    absl::string_view name) {
  constexpr int n = sizeof(kTextFormats) / sizeof(kTextFormats[0]);
  for (int i = 0; i < n; ++i) {
    if (name == kTextFormats[i]) return i;
  }
  std::string known;
  for (int i = 0; i < n; ++i)
    absl::StrAppend(&known,
                    i == 0       ? ""
                    : i + 1 == n ? " or "
                                 : ", ",
                    kTextFormats[i]);
  return Invalid(prefix, field,
                 absl::StrCat("unknown format '", name, "' (", known, ")"));
}

absl::Status CheckText(absl::string_view prefix, const TextSettings& t) {
  for (auto [rule, value] :
       {std::pair{kTextMaxLen, t.max_len}, std::pair{kTextNCtx, t.shape.n_ctx},
        std::pair{kTextDModel, t.shape.d_model},
        std::pair{kTextHeads, t.shape.heads},
        std::pair{kTextDHead, t.shape.d_head},
        std::pair{kTextDMlp, t.shape.d_mlp},
        std::pair{kTextLayers, t.shape.layers},
        std::pair{kTextEpochs, t.epochs}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (t.shape.n_ctx < t.max_len) {
    return Invalid(prefix, "text.n_ctx",
                   absl::StrCat("must be >= text.max_len = ", t.max_len,
                                " (got ", t.shape.n_ctx, ")"));
  }
  for (auto [rule, value] :
       {std::pair{kTextTrainFraction, t.train_fraction},
        std::pair{kTextValidationFraction, t.validation_fraction},
        std::pair{kTextInitStd, t.init_std},
        std::pair{kTextMlpLrMultiplier, t.mlp_lr_multiplier},
        std::pair{kTextQkWeightDecay, t.qk_weight_decay},
        std::pair{kTextOvWeightDecay, t.ov_weight_decay},
        std::pair{kTextMlpWeightDecay, t.mlp_weight_decay},
        std::pair{kTextGradClip, t.grad_clip},
        std::pair{kTextWarmupFraction, t.warmup_fraction},
        std::pair{kTextRolloutAlpha, t.rollout_alpha},
        std::pair{kTextKPercent, t.k_percent}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (t.validation_fraction > 0) {
    if (t.train_fraction == 0 ||
        t.train_fraction + t.validation_fraction >= 1) {
      return Invalid(
          prefix, "text.validation_fraction",
          absl::StrCat("needs text.train_fraction > 0 and the two below 1 "
                       "(got ",
                       t.train_fraction, " + ", t.validation_fraction, ")"));
    }
    if (t.has_validation_path) {
      return Invalid(prefix, "text.validation_fraction",
                     "cannot go with text.validation.path (both name the "
                     "validation split)");
    }
  }
  if (!t.has_train_path)
    return Invalid(prefix, "text.train.path", "is required");
  if (!t.has_vocab_path)
    return Invalid(prefix, "text.vocab_path", "is required");
  return absl::OkStatus();
}

absl::Status CheckSquad(absl::string_view prefix, const SquadSettings& s) {
  for (auto [rule, value] :
       {std::pair{kSquadCropChars, s.crop_chars},
        std::pair{kSquadMaxPromptTokens, s.max_prompt_tokens},
        std::pair{kSquadMaxAnswerTokens, s.max_answer_tokens},
        std::pair{kSquadNCtx, s.shape.n_ctx},
        std::pair{kSquadDModel, s.shape.d_model},
        std::pair{kSquadHeads, s.shape.heads},
        std::pair{kSquadDHead, s.shape.d_head},
        std::pair{kSquadDMlp, s.shape.d_mlp},
        std::pair{kSquadLayers, s.shape.layers},
        std::pair{kSquadEpochs, s.epochs},
        std::pair{kSquadAccumulation, s.accumulation},
        std::pair{kSquadMaxNewTokens, s.max_new_tokens},
        std::pair{kSquadValidationQuestions, s.validation_questions},
        std::pair{kSquadTrainF1Questions, s.train_f1_questions}}) {
    if (absl::Status st = Check(prefix, rule, value); !st.ok()) return st;
  }
  for (auto [rule, value] :
       {std::pair{kSquadDropout, s.dropout},
        std::pair{kSquadInitStd, s.init_std},
        std::pair{kSquadEmbedInitStd, s.embed_init_std},
        std::pair{kSquadEmbedLrMultiplier, s.embed_lr_multiplier},
        std::pair{kSquadLabelSmoothing, s.label_smoothing},
        std::pair{kSquadGradClip, s.grad_clip},
        std::pair{kSquadRolloutAlpha, s.rollout_alpha},
        std::pair{kSquadKPercent, s.k_percent}}) {
    if (absl::Status st = Check(prefix, rule, value); !st.ok()) return st;
  }
  const int64_t longest = s.max_prompt_tokens + s.max_answer_tokens + 1;
  if (s.shape.n_ctx < longest) {
    return Invalid(prefix, "squad.n_ctx",
                   absl::StrCat("must be >= squad.max_prompt_tokens + "
                                "squad.max_answer_tokens + 1 = ",
                                longest, " (got ", s.shape.n_ctx, ")"));
  }
  for (auto [split, begin, end, max] :
       {std::tuple{"train", s.train_article_begin, s.train_article_end,
                   s.train_max_questions},
        std::tuple{"eval", s.eval_article_begin, s.eval_article_end,
                   s.eval_max_questions},
        std::tuple{"validation", s.validation_article_begin,
                   s.validation_article_end, s.validation_max_questions}}) {
    const std::string field = absl::StrCat("squad.", split, ".");
    if (begin < 0 || begin > kSquadArticle.hi)
      return Invalid(prefix, field + "article_begin",
                     absl::StrCat("must be in [0, ", kSquadArticle.hi,
                                  "] (got ", begin, ")"));
    if (end != 0 && end <= begin)
      return Invalid(
          prefix, field + "article_end",
          absl::StrCat("must be 0 (to the end) or > article_begin = ", begin,
                       " (got ", end, ")"));
    if (max < 0 || max > kSquadMaxQuestions.hi)
      return Invalid(prefix, field + "max_questions",
                     absl::StrCat("must be in [0, ", kSquadMaxQuestions.hi,
                                  "] (got ", max, ")"));
  }
  if (!s.has_train_path)
    return Invalid(prefix, "squad.train.path", "is required");
  if (!s.has_eval_path)
    return Invalid(prefix, "squad.eval.path", "is required");
  if (s.validation_questions > 0 && !s.has_validation_path)
    return Invalid(prefix, "squad.validation.path",
                   "is required when squad.validation_questions > 0");
  if (!s.has_encoder_path)
    return Invalid(prefix, "squad.encoder_path", "is required");
  if (!s.has_merges_path)
    return Invalid(prefix, "squad.merges_path", "is required");
  if (!s.adamw)
    return Invalid(prefix, "optimizer.kind",
                   "the squad task trains with adamw only");
  if (!s.squad_schedule)
    return Invalid(prefix, "optimizer.schedule",
                   "the squad task trains with cosine_warmup or one_cycle");
  return absl::OkStatus();
}

absl::Status CheckOneCycle(absl::string_view prefix, bool one_cycle,
                           bool squad_task) {
  if (one_cycle && !squad_task)
    return Invalid(prefix, "optimizer.schedule",
                   "one_cycle is for task squad only");
  return absl::OkStatus();
}

absl::Status CheckEdges(absl::string_view prefix, const char* field,
                        absl::Span<const double> e) {
  if (e.size() < 2) return Invalid(prefix, field, "needs at least 2 edges");
  for (size_t i = 0; i < e.size(); ++i) {
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (!std::isfinite(e[i])) return Invalid(prefix, at, "must be finite");
    if (i > 0 && !(e[i - 1] < e[i]))
      return Invalid(prefix, at, "edges must be strictly increasing");
  }
  return absl::OkStatus();
}

absl::Status CheckTheory(absl::string_view prefix, double m, double n, double b,
                         double num_classes, double dtau, double relative_step,
                         double max_tau, double target_loss,
                         int64_t num_thresholds, int64_t num_samples) {
  for (auto [rule, value] :
       {std::pair{kTheoryM, m}, std::pair{kTheoryN, n}, std::pair{kTheoryB, b},
        std::pair{kTheoryDtau, dtau}, std::pair{kTheoryMaxTau, max_tau},
        std::pair{kTheoryTargetLoss, target_loss},
        std::pair{kTheoryNumClasses, num_classes},
        std::pair{kTheoryRelativeStep, relative_step}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (absl::Status s = Check(prefix, kTheoryNumThresholds, num_thresholds);
      !s.ok())
    return s;
  if (absl::Status s = Check(prefix, kTheoryNumSamples, num_samples); !s.ok())
    return s;
  if (relative_step == 0 && max_tau / dtau > 1e9) {
    return Invalid(prefix, "theory.max_tau",
                   "more than 1e9 fixed steps; set relative_step");
  }
  return absl::OkStatus();
}

}  // namespace qkov::rules
