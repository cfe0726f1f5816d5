#include "worker/agent/trial_options.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/proto_enums.h"
#include "common/status_macros.h"
#include "common/task_kind.h"
#include "common/task_settings.h"
#include "common/transformer_shape.h"
#include "worker/training/task_registry.h"

namespace qkov::agent {

namespace {

namespace v1 = ::qkov::v1;

absl::Status ToSource(const v1::TextData& d, const std::string& field,
                      training::text::TextSource* out) {
  if (d.path().empty()) return absl::OkStatus();  // no such split
  absl::StatusOr<training::text::TextFormat> format =
      training::text::ParseTextFormat(absl::StrCat(field, ".format"),
                                      d.format());
  if (!format.ok()) return format.status();
  out->format = *format;
  out->path = d.path();
  out->divisions_path = d.divisions_path();
  out->split = d.split();
  out->max_examples = d.max_examples();
  out->sha256 = d.sha256();
  return absl::OkStatus();
}

absl::Status ToTextOptions(const v1::TextTask& x,
                           training::text::TextTaskOptions* t) {
  RETURN_IF_ERROR(ToSource(x.train(), "training.text.train", &t->train));
  RETURN_IF_ERROR(
      ToSource(x.validation(), "training.text.validation", &t->validation));
  RETURN_IF_ERROR(ToSource(x.test(), "training.text.test", &t->test));
  t->train_fraction = x.train_fraction();
  t->validation_fraction = x.validation_fraction();
  t->split_seed = x.split_seed();
  t->tokenizer.vocab_path = x.vocab_path();
  t->tokenizer.vocab_sha256 =
      x.vocab_sha256() == "none" ? "" : x.vocab_sha256();
  t->tokenizer.lowercase = x.lowercase();
  t->tokenizer.strip_accents = x.lowercase();  // as Hugging Face's default
  training::text::TextModelOptions& m = t->model;
  m.max_len = x.max_len();
  m.shape = TransformerShapeOf(x);
  m.residual = x.residual();
  m.layer_norm = x.layer_norm();
  m.causal = x.causal();
  m.padding_mask = x.padding_mask();
  ASSIGN_OR_RETURN(
      m.readout,
      FromProtoEnum<training::text::Readout>(
          x.readout(), "training.text.readout",
          {{v1::READOUT_LAST_TOKEN, training::text::Readout::kLastToken},
           {v1::READOUT_FIRST_PAD, training::text::Readout::kFirstPad}}));
  m.init_std = x.init_std();
  t->epochs = x.epochs();
  for (auto [group, field, out] :
       {std::tuple{x.embed_group(), "training.text.embed_group",
                   &t->embed_group},
        std::tuple{x.pos_group(), "training.text.pos_group", &t->pos_group}}) {
    ASSIGN_OR_RETURN(*out,
                     FromProtoEnum<training::ParamGroup>(
                         group, field,
                         {{v1::PARAM_GROUP_QK, training::ParamGroup::kQk},
                          {v1::PARAM_GROUP_OV, training::ParamGroup::kOv}}));
  }
  t->mlp_lr_multiplier = x.mlp_lr_multiplier();
  t->weight_decay = {x.qk_weight_decay(), x.ov_weight_decay(),
                     x.mlp_weight_decay()};
  t->grad_clip = x.grad_clip();
  t->warmup_fraction = x.warmup_fraction();
  t->rollout_alpha = x.rollout_alpha();
  t->k_percent = x.k_percent();
  return absl::OkStatus();
}

training::squad::SquadSource ToSquadSource(const v1::SquadData& d) {
  training::squad::SquadSource s;
  s.path = d.path();
  s.article_begin = d.article_begin();
  s.article_end = d.article_end();
  s.max_questions = d.max_questions();
  s.sha256 = d.sha256();
  return s;
}

void ToSquadOptions(const v1::SquadTask& x,
                    training::squad::SquadTaskOptions* q) {
  q->train = ToSquadSource(x.train());
  q->eval = ToSquadSource(x.eval());
  q->validation = ToSquadSource(x.validation());
  q->validation_questions = x.validation_questions();
  q->train_f1_questions = x.train_f1_questions();
  q->tokenizer.encoder_path = x.encoder_path();
  q->tokenizer.merges_path = x.merges_path();
  q->tokenizer.encoder_sha256 =
      x.encoder_sha256() == "none" ? "" : x.encoder_sha256();
  q->tokenizer.merges_sha256 =
      x.merges_sha256() == "none" ? "" : x.merges_sha256();
  q->glove_path = x.glove_path();
  q->prompt.crop_chars = x.crop_chars();
  q->prompt.max_prompt_tokens = x.max_prompt_tokens();
  q->prompt.max_answer_tokens = x.max_answer_tokens();
  training::squad::SquadModelOptions& m = q->model;
  m.shape = TransformerShapeOf(x);
  m.dropout = x.dropout();
  m.init_std = x.init_std();
  m.embed_init_std = x.embed_init_std();
  q->epochs = x.epochs();
  q->embed_lr_multiplier = x.embed_lr_multiplier();
  q->label_smoothing = x.label_smoothing();
  q->accumulation = x.accumulation();
  q->grad_clip = x.grad_clip();
  q->rollout_alpha = x.rollout_alpha();
  q->k_percent = x.k_percent();
  q->max_new_tokens = x.max_new_tokens();
}

void ToTheoryOptions(const v1::Theory& th, training::TheoryOptions* o) {
  o->m = th.m();
  o->n = th.n();
  o->b = th.b();
  o->M = th.num_classes();
  o->dtau = th.dtau();
  o->relative_step = th.relative_step();
  o->max_tau = th.max_tau();
  o->target_loss = th.target_loss();
  o->num_thresholds = th.num_thresholds();
  o->num_samples = th.num_samples();
}

void ToSyntheticOptions(const v1::SyntheticTask& s,
                        training::SyntheticTaskOptions* o) {
  o->vocab_size = s.vocab_size();
  o->num_common = s.num_common();
  o->num_classes = s.num_classes();
  o->distinct_per_class = s.distinct_per_class();
  o->seq_len = s.seq_len();
}

absl::Status ToOptimizerOptions(const v1::Optimizer& opt,
                                training::OptimizerOptions* o) {
  ASSIGN_OR_RETURN(o->kind,
                   FromProtoEnum<training::OptimizerKind>(
                       opt.kind(), "training.optimizer.kind",
                       {{v1::SGD, training::OptimizerKind::kSgd},
                        {v1::ADAMW, training::OptimizerKind::kAdamW}}));
  ASSIGN_OR_RETURN(
      o->schedule,
      FromProtoEnum<training::ScheduleKind>(
          opt.schedule(), "training.optimizer.schedule",
          {{v1::CONSTANT, training::ScheduleKind::kConstant},
           {v1::COSINE_WARMUP, training::ScheduleKind::kCosineWarmup},
           {v1::QK_RAMP, training::ScheduleKind::kQkRamp},
           {v1::ONE_CYCLE, training::ScheduleKind::kOneCycle}}));
  o->momentum = opt.momentum();
  o->weight_decay = opt.weight_decay();
  o->adam_beta1 = opt.adam_beta1();
  o->adam_beta2 = opt.adam_beta2();
  o->adam_eps = opt.adam_eps();
  o->warmup_steps = opt.warmup_steps();
  return absl::OkStatus();
}

absl::Status ToInitOptions(const v1::Init& init, training::InitOptions* o) {
  for (auto [kind, field, out] :
       {std::tuple{init.qk(), "training.init.qk", &o->qk},
        std::tuple{init.ov(), "training.init.ov", &o->ov}}) {
    ASSIGN_OR_RETURN(
        *out,
        FromProtoEnum<training::InitKind>(
            kind, field,
            {{v1::INIT_IDENTITY, training::InitKind::kIdentity},
             {v1::INIT_DEFAULT_LINEAR, training::InitKind::kDefaultLinear}}));
  }
  o->identity_scale = init.identity_scale();
  return absl::OkStatus();
}

void ToEvalOptions(const v1::Evaluation& e, training::EvalOptions* o) {
  o->num_examples = e.num_examples();
  o->eval_seed = e.eval_seed();
  o->tau_attention = e.tau_attention();
  o->tau_probability = e.tau_probability();
  o->eval_every = e.eval_every();
  if (e.eval_examples() > 0) o->eval_examples = e.eval_examples();
  o->dtap_attention_edges.assign(e.dtap_attention_edges().begin(),
                                 e.dtap_attention_edges().end());
  o->dtap_probability_edges.assign(e.dtap_probability_edges().begin(),
                                   e.dtap_probability_edges().end());
}

}  // namespace

absl::StatusOr<training::TrialOptions> ToTrialOptions(
    const v1::TrialConfig& c) {
  training::TrialOptions o;
  const v1::Training& t = c.training();
  const training::TrainingTask* task =
      training::TrainingTaskNamed(TaskName(t.task()));
  if (task == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.task: unknown value ", static_cast<int>(t.task()),
        " (expected ", training::TrainedTaskNames(), ")"));
  }
  o.kind = task->kind;
  // The task's settings message is checked here, on the proto, by the
  // server's own check (common/task_settings.h; field paths relative to the
  // training settings, as TrialOptions::Validate's); Validate checks the
  // rest.
  RETURN_IF_ERROR(TaskSettingsOf(t).check(t, ""));
  // The text and SQuAD tasks' settings are read for those tasks only (the
  // task table's `settings`); other settings keep their defaults.
  const TaskInfo& info = TaskOrSynthetic(t.task());
  if (info.settings == "text")
    RETURN_IF_ERROR(ToTextOptions(t.text(), &o.text));
  if (info.settings == "squad") ToSquadOptions(t.squad(), &o.squad);
  if (info.parameterized) {  // the ODE has none
    ASSIGN_OR_RETURN(o.parameterization,
                     FromProtoEnum<training::Parameterization>(
                         c.parameterization(), "parameterization",
                         {{v1::FAFO, training::Parameterization::kFafo},
                          {v1::FACO, training::Parameterization::kFaco},
                          {v1::CAFO, training::Parameterization::kCafo},
                          {v1::CACO, training::Parameterization::kCaco}}));
  }
  o.alpha = c.alpha();
  ToTheoryOptions(t.theory(), &o.theory);
  o.lr_ratio = c.lr_ratio();
  o.eta_ov = c.eta_ov();
  o.seed = c.seed();
  ToSyntheticOptions(t.synthetic(), &o.synthetic);
  RETURN_IF_ERROR(ToOptimizerOptions(t.optimizer(), &o.optimizer));
  RETURN_IF_ERROR(ToInitOptions(t.init(), &o.init));
  o.max_steps = t.max_steps();
  o.batch_size = t.batch_size();
  o.report_every = t.report_every();
  o.target_loss = t.target_loss();
  o.loss_window = t.loss_window();
  ToEvalOptions(t.evaluation(), &o.eval);
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  return o;
}

}  // namespace qkov::agent
