#include "worker/agent/trial_options.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/proto_enums.h"
#include "common/status_macros.h"
#include "common/task_kind.h"
#include "common/task_settings.h"
#include "worker/agent/settings_reader.h"
#include "worker/training/task_registry.h"

namespace qkov::agent {

namespace {

namespace v1 = ::qkov::v1;

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
  o.task = TaskName(t.task());
  if (training::TrainingTaskNamed(o.task) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "training.task: unknown value ", static_cast<int>(t.task()),
        " (expected ", training::TrainedTaskNames(), ")"));
  }
  // The task's settings message is checked here, on the proto, by the
  // server's own check (common/task_settings.h; field paths relative to the
  // training settings, as TrialOptions::Validate's); Validate checks the
  // rest.
  RETURN_IF_ERROR(TaskSettingsOf(t).check(t, ""));
  // The text and SQuAD tasks' settings are read for those tasks only (the
  // task table's `settings`); other settings keep their defaults.
  const TaskInfo& info = TaskOrDefault(t.task());
  const SettingsReader* reader = FindSettingsReader(info.settings);
  if (reader == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("training.", info.settings,
                                                   ": this worker cannot read "
                                                   "the settings of task ",
                                                   info.name));
  }
  RETURN_IF_ERROR(reader->read(t, &o));
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
  o.lr_ratio = c.lr_ratio();
  o.eta_ov = c.eta_ov();
  o.seed = c.seed();
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
