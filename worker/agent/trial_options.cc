#include "worker/agent/trial_options.h"

#include "absl/strings/str_cat.h"

namespace qkov::agent {

namespace {

absl::Status ToSource(const qkov::v1::TextData& d, const std::string& field,
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

absl::Status ToTextOptions(const qkov::v1::TextTask& x,
                           training::text::TextTaskOptions* t) {
  if (absl::Status s = ToSource(x.train(), "training.text.train", &t->train);
      !s.ok())
    return s;
  if (absl::Status s =
          ToSource(x.validation(), "training.text.validation", &t->validation);
      !s.ok())
    return s;
  if (absl::Status s = ToSource(x.test(), "training.text.test", &t->test);
      !s.ok())
    return s;
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
  m.n_ctx = x.n_ctx();
  m.d_model = x.d_model();
  m.heads = x.heads();
  m.d_head = x.d_head();
  m.d_mlp = x.d_mlp();
  m.layers = x.layers();
  m.residual = x.residual();
  m.layer_norm = x.layer_norm();
  m.causal = x.causal();
  m.padding_mask = x.padding_mask();
  m.readout = x.readout() == qkov::v1::READOUT_LAST_TOKEN
                  ? training::text::Readout::kLastToken
                  : training::text::Readout::kFirstPad;
  m.init_std = x.init_std();
  t->epochs = x.epochs();
  auto group = [](qkov::v1::ParamGroupKind g) {
    return g == qkov::v1::PARAM_GROUP_QK ? training::ParamGroup::kQk
                                         : training::ParamGroup::kOv;
  };
  t->embed_group = group(x.embed_group());
  t->pos_group = group(x.pos_group());
  t->mlp_lr_multiplier = x.mlp_lr_multiplier();
  t->weight_decay = {x.qk_weight_decay(), x.ov_weight_decay(),
                     x.mlp_weight_decay()};
  t->grad_clip = x.grad_clip();
  t->warmup_fraction = x.warmup_fraction();
  t->rollout_alpha = x.rollout_alpha();
  t->k_percent = x.k_percent();
  return absl::OkStatus();
}

training::squad::SquadSource ToSquadSource(const qkov::v1::SquadData& d) {
  training::squad::SquadSource s;
  s.path = d.path();
  s.article_begin = d.article_begin();
  s.article_end = d.article_end();
  s.max_questions = d.max_questions();
  s.sha256 = d.sha256();
  return s;
}

void ToSquadOptions(const qkov::v1::SquadTask& x,
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
  m.n_ctx = x.n_ctx();
  m.d_model = x.d_model();
  m.heads = x.heads();
  m.d_head = x.d_head();
  m.d_mlp = x.d_mlp();
  m.layers = x.layers();
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

}  // namespace

absl::StatusOr<training::TrialOptions> ToTrialOptions(
    const qkov::v1::TrialConfig& c) {
  training::TrialOptions o;
  const qkov::v1::Training& t = c.training();
  switch (t.task()) {
    case qkov::v1::TASK_SYNTHETIC:
      o.kind = training::TaskKind::kSynthetic;
      break;
    case qkov::v1::TASK_FIXED_ATTENTION:
      o.kind = training::TaskKind::kFixedAttention;
      break;
    case qkov::v1::TASK_THEORY:
      o.kind = training::TaskKind::kTheory;
      break;
    case qkov::v1::TASK_TEXT:
    case qkov::v1::TASK_HATEXPLAIN:
    case qkov::v1::TASK_SVA:
      o.kind = training::TaskKind::kText;
      if (absl::Status s = ToTextOptions(t.text(), &o.text); !s.ok()) return s;
      break;
    case qkov::v1::TASK_SQUAD:
      o.kind = training::TaskKind::kSquad;
      ToSquadOptions(t.squad(), &o.squad);
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("training.task: unknown value ", t.task()));
  }
  switch (c.parameterization()) {
    case qkov::v1::FAFO:
      o.parameterization = training::Parameterization::kFafo;
      break;
    case qkov::v1::FACO:
      o.parameterization = training::Parameterization::kFaco;
      break;
    case qkov::v1::CAFO:
      o.parameterization = training::Parameterization::kCafo;
      break;
    case qkov::v1::CACO:
      o.parameterization = training::Parameterization::kCaco;
      break;
    default:
      if (o.kind != training::TaskKind::kTheory) {
        return absl::InvalidArgumentError(absl::StrCat(
            "parameterization: unknown value ", c.parameterization()));
      }
  }
  o.alpha = c.alpha();
  const qkov::v1::Theory& th = t.theory();
  o.theory.m = th.m();
  o.theory.n = th.n();
  o.theory.b = th.b();
  o.theory.M = th.num_classes();
  o.theory.dtau = th.dtau();
  o.theory.relative_step = th.relative_step();
  o.theory.max_tau = th.max_tau();
  o.theory.target_loss = th.target_loss();
  o.theory.num_thresholds = th.num_thresholds();
  o.theory.num_samples = th.num_samples();
  o.lr_ratio = c.lr_ratio();
  o.eta_ov = c.eta_ov();
  o.seed = c.seed();
  o.synthetic.vocab_size = t.synthetic().vocab_size();
  o.synthetic.num_common = t.synthetic().num_common();
  o.synthetic.num_classes = t.synthetic().num_classes();
  o.synthetic.distinct_per_class = t.synthetic().distinct_per_class();
  o.synthetic.seq_len = t.synthetic().seq_len();
  const auto& opt = t.optimizer();
  switch (opt.kind()) {
    case qkov::v1::SGD:
      o.optimizer.kind = training::OptimizerKind::kSgd;
      break;
    case qkov::v1::ADAMW:
      o.optimizer.kind = training::OptimizerKind::kAdamW;
      break;
    default:
      return absl::InvalidArgumentError(
          "training.optimizer.kind: unknown value");
  }
  switch (opt.schedule()) {
    case qkov::v1::CONSTANT:
      o.optimizer.schedule = training::ScheduleKind::kConstant;
      break;
    case qkov::v1::COSINE_WARMUP:
      o.optimizer.schedule = training::ScheduleKind::kCosineWarmup;
      break;
    case qkov::v1::QK_RAMP:
      o.optimizer.schedule = training::ScheduleKind::kQkRamp;
      break;
    case qkov::v1::ONE_CYCLE:
      o.optimizer.schedule = training::ScheduleKind::kOneCycle;
      break;
    default:
      return absl::InvalidArgumentError(
          "training.optimizer.schedule: unknown value");
  }
  o.optimizer.momentum = opt.momentum();
  o.optimizer.weight_decay = opt.weight_decay();
  o.optimizer.adam_beta1 = opt.adam_beta1();
  o.optimizer.adam_beta2 = opt.adam_beta2();
  o.optimizer.adam_eps = opt.adam_eps();
  o.optimizer.warmup_steps = opt.warmup_steps();
  auto init = [](qkov::v1::InitKind k) -> absl::StatusOr<training::InitKind> {
    if (k == qkov::v1::INIT_IDENTITY) return training::InitKind::kIdentity;
    if (k == qkov::v1::INIT_DEFAULT_LINEAR)
      return training::InitKind::kDefaultLinear;
    return absl::InvalidArgumentError("training.init: unknown init kind");
  };
  auto qk = init(t.init().qk());
  if (!qk.ok()) return qk.status();
  auto ov = init(t.init().ov());
  if (!ov.ok()) return ov.status();
  o.init.qk = *qk;
  o.init.ov = *ov;
  o.init.identity_scale = t.init().identity_scale();
  o.max_steps = t.max_steps();
  o.batch_size = t.batch_size();
  o.report_every = t.report_every();
  o.target_loss = t.target_loss();
  o.loss_window = t.loss_window();
  const auto& e = t.evaluation();
  o.eval.num_examples = e.num_examples();
  o.eval.eval_seed = e.eval_seed();
  o.eval.tau_attention = e.tau_attention();
  o.eval.tau_probability = e.tau_probability();
  o.eval.eval_every = e.eval_every();
  if (e.eval_examples() > 0) o.eval.eval_examples = e.eval_examples();
  o.eval.dtap_attention_edges.assign(e.dtap_attention_edges().begin(),
                                     e.dtap_attention_edges().end());
  o.eval.dtap_probability_edges.assign(e.dtap_probability_edges().begin(),
                                       e.dtap_probability_edges().end());
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  return o;
}

}  // namespace qkov::agent
