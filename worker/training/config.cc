#include "worker/training/config.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/trial_rules.h"

namespace qkov::training {

namespace {

// The parameterizations by name, in the paper's order (one table for both
// directions and the refusal's list).
constexpr std::pair<Parameterization, const char*> kParameterizations[] = {
    {Parameterization::kFafo, "FAFO"},
    {Parameterization::kFaco, "FACO"},
    {Parameterization::kCafo, "CAFO"},
    {Parameterization::kCaco, "CACO"}};

}  // namespace

const char* ParameterizationName(Parameterization p) {
  for (const auto& [value, name] : kParameterizations) {
    if (value == p) return name;
  }
  return "?";
}

absl::StatusOr<Parameterization> ParseParameterization(
    const std::string& name) {
  std::string expected;
  const size_t n = std::size(kParameterizations);
  for (size_t i = 0; i < n; ++i) {
    if (name == kParameterizations[i].second)
      return kParameterizations[i].first;
    if (i > 0) expected += i + 1 == n ? " or " : ", ";
    expected += kParameterizations[i].second;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown parameterization '", name, "' (expected ", expected, ")"));
}

const char* TaskKindName(TaskKind kind) {
  switch (kind) {
    case TaskKind::kSynthetic:
      return "synthetic";
    case TaskKind::kFixedAttention:
      return "fixed_attention";
    case TaskKind::kTheory:
      return "theory";
    case TaskKind::kText:
      return "text";
    case TaskKind::kSquad:
      return "squad";
  }
  return "?";
}

absl::Status SyntheticTaskOptions::Validate() const {
  return rules::CheckSyntheticShape("", vocab_size, num_common, num_classes,
                                    distinct_per_class, seq_len);
}

absl::Status TrialOptions::Validate() const {
  if (absl::Status s = rules::Check("", rules::kEtaOv, eta_ov); !s.ok())
    return s;
  if (kind == TaskKind::kTheory) {
    // The ODE has no model, data or optimizer; eta_ov and lr_ratio are its
    // rates.
    if (absl::Status s = rules::Check("", rules::kLrRatio, lr_ratio); !s.ok())
      return s;
    const TheoryOptions& t = theory;
    return rules::CheckTheory("", t.m, t.n, t.b, t.M, t.dtau, t.relative_step,
                              t.max_tau, t.target_loss, t.num_thresholds,
                              t.num_samples);
  }
  if (kind == TaskKind::kFixedAttention) {
    if (absl::Status s = rules::Check("", rules::kAlpha, alpha); !s.ok())
      return s;
  } else if (absl::Status s = rules::Check("", rules::kLrRatio, lr_ratio);
             !s.ok()) {
    return s;
  }
  if (kind == TaskKind::kText) {
    const text::TextTaskOptions& t = text;
    const text::TextModelOptions& m = t.model;
    rules::TextSettings v;
    v.max_len = m.max_len;
    v.n_ctx = m.n_ctx;
    v.d_model = m.d_model;
    v.heads = m.heads;
    v.d_head = m.d_head;
    v.d_mlp = m.d_mlp;
    v.layers = m.layers;
    v.epochs = t.epochs;
    v.train_fraction = t.train_fraction;
    v.validation_fraction = t.validation_fraction;
    v.has_validation_path = !t.validation.path.empty();
    v.init_std = m.init_std;
    v.mlp_lr_multiplier = t.mlp_lr_multiplier;
    v.qk_weight_decay = t.weight_decay[0];
    v.ov_weight_decay = t.weight_decay[1];
    v.mlp_weight_decay = t.weight_decay[2];
    v.grad_clip = t.grad_clip;
    v.warmup_fraction = t.warmup_fraction;
    v.rollout_alpha = t.rollout_alpha;
    v.k_percent = t.k_percent;
    v.has_train_path = !t.train.path.empty();
    v.has_vocab_path = !t.tokenizer.vocab_path.empty();
    if (absl::Status s = rules::CheckText("", v); !s.ok()) return s;
  } else if (kind == TaskKind::kSquad) {
    const squad::SquadTaskOptions& q = squad;
    const squad::SquadModelOptions& m = q.model;
    rules::SquadSettings v;
    v.crop_chars = q.prompt.crop_chars;
    v.max_prompt_tokens = q.prompt.max_prompt_tokens;
    v.max_answer_tokens = q.prompt.max_answer_tokens;
    v.n_ctx = m.n_ctx;
    v.d_model = m.d_model;
    v.heads = m.heads;
    v.d_head = m.d_head;
    v.d_mlp = m.d_mlp;
    v.layers = m.layers;
    v.epochs = q.epochs;
    v.accumulation = q.accumulation;
    v.max_new_tokens = q.max_new_tokens;
    v.train_article_begin = q.train.article_begin;
    v.train_article_end = q.train.article_end;
    v.train_max_questions = q.train.max_questions;
    v.eval_article_begin = q.eval.article_begin;
    v.eval_article_end = q.eval.article_end;
    v.eval_max_questions = q.eval.max_questions;
    v.validation_article_begin = q.validation.article_begin;
    v.validation_article_end = q.validation.article_end;
    v.validation_max_questions = q.validation.max_questions;
    v.validation_questions = q.validation_questions;
    v.train_f1_questions = q.train_f1_questions;
    v.dropout = m.dropout;
    v.init_std = m.init_std;
    v.embed_init_std = m.embed_init_std;
    v.embed_lr_multiplier = q.embed_lr_multiplier;
    v.label_smoothing = q.label_smoothing;
    v.grad_clip = q.grad_clip;
    v.rollout_alpha = q.rollout_alpha;
    v.k_percent = q.k_percent;
    v.has_train_path = !q.train.path.empty();
    v.has_eval_path = !q.eval.path.empty();
    v.has_validation_path = !q.validation.path.empty();
    v.has_encoder_path = !q.tokenizer.encoder_path.empty();
    v.has_merges_path = !q.tokenizer.merges_path.empty();
    v.adamw = optimizer.kind == OptimizerKind::kAdamW;
    v.squad_schedule = optimizer.schedule == ScheduleKind::kCosineWarmup ||
                       optimizer.schedule == ScheduleKind::kOneCycle;
    if (absl::Status s = rules::CheckSquad("", v); !s.ok()) return s;
  } else if (absl::Status s = synthetic.Validate(); !s.ok()) {
    return s;
  }
  for (auto [rule, value] :
       {std::pair{rules::kMomentum, optimizer.momentum},
        std::pair{rules::kWeightDecay, optimizer.weight_decay},
        std::pair{rules::kAdamBeta1, optimizer.adam_beta1},
        std::pair{rules::kAdamBeta2, optimizer.adam_beta2},
        std::pair{rules::kAdamEps, optimizer.adam_eps},
        std::pair{rules::kIdentityScale, init.identity_scale},
        std::pair{rules::kTauAttention, eval.tau_attention},
        std::pair{rules::kTauProbability, eval.tau_probability}}) {
    if (absl::Status s = rules::Check("", rule, value); !s.ok()) return s;
  }
  if (absl::Status s = rules::CheckOneCycle(
          "", optimizer.schedule == ScheduleKind::kOneCycle,
          kind == TaskKind::kSquad);
      !s.ok())
    return s;
  if (absl::Status s =
          rules::CheckRun("", max_steps, batch_size, report_every, loss_window,
                          target_loss, optimizer.warmup_steps);
      !s.ok())
    return s;
  if (absl::Status s = rules::Check("", rules::kNumExamples, eval.num_examples);
      !s.ok())
    return s;
  if (absl::Status s = rules::Check("", rules::kEvalEvery, eval.eval_every);
      !s.ok())
    return s;
  if (absl::Status s =
          rules::Check("", rules::kEvalExamples, eval.eval_examples);
      !s.ok())
    return s;
  if (absl::Status s = rules::CheckEdges("", "evaluation.dtap_attention_edges",
                                         eval.dtap_attention_edges);
      !s.ok())
    return s;
  return rules::CheckEdges("", "evaluation.dtap_probability_edges",
                           eval.dtap_probability_edges);
}

}  // namespace qkov::training
