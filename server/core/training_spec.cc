#include "server/core/training_spec.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "common/task_kind.h"
#include "common/task_settings.h"
#include "common/trial_defaults.h"
#include "common/trial_rules.h"

namespace qkov::core {
namespace {

using qkov::v1::Training;

absl::Status Invalid(const std::string& field, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", reason));
}

}  // namespace

void ApplyTrainingDefaults(Training* t) {
  namespace d = ::qkov::defaults;
  if (t->task() == qkov::v1::TASK_KIND_UNSPECIFIED)
    t->set_task(static_cast<qkov::v1::TaskKind>(DefaultTask().kind));
  auto* s = t->mutable_synthetic();
  if (s->vocab_size() == 0) s->set_vocab_size(d::kVocabSize);
  if (s->num_common() == 0) s->set_num_common(d::kNumCommon);
  if (s->num_classes() == 0) s->set_num_classes(d::kNumClasses);
  if (s->distinct_per_class() == 0)
    s->set_distinct_per_class(d::kDistinctPerClass);
  if (s->seq_len() == 0) s->set_seq_len(d::kSeqLen);
  auto* o = t->mutable_optimizer();
  if (o->kind() == qkov::v1::OPTIMIZER_KIND_UNSPECIFIED)
    o->set_kind(qkov::v1::SGD);
  if (o->adam_beta1() == 0) o->set_adam_beta1(d::kAdamBeta1);
  if (o->adam_beta2() == 0) o->set_adam_beta2(d::kAdamBeta2);
  if (o->adam_eps() == 0) o->set_adam_eps(d::kAdamEps);
  if (o->schedule() == qkov::v1::SCHEDULE_KIND_UNSPECIFIED)
    o->set_schedule(qkov::v1::CONSTANT);
  auto* i = t->mutable_init();
  if (i->qk() == qkov::v1::INIT_KIND_UNSPECIFIED)
    i->set_qk(qkov::v1::INIT_IDENTITY);
  if (i->ov() == qkov::v1::INIT_KIND_UNSPECIFIED)
    i->set_ov(qkov::v1::INIT_IDENTITY);
  if (i->identity_scale() == 0) i->set_identity_scale(d::kIdentityScale);
  if (t->max_steps() == 0) t->set_max_steps(d::kMaxSteps);
  if (t->batch_size() == 0) t->set_batch_size(d::kBatchSize);
  if (t->report_every() == 0) t->set_report_every(d::kReportEvery);
  if (t->target_loss() == 0) t->set_target_loss(d::kTargetLoss);
  if (t->loss_window() == 0) t->set_loss_window(d::kLossWindow);
  auto* e = t->mutable_evaluation();
  if (e->num_examples() == 0) e->set_num_examples(d::kNumExamples);
  if (e->eval_seed() == 0) e->set_eval_seed(d::kEvalSeed);
  if (e->tau_attention() == 0) e->set_tau_attention(d::kTauAttention);
  if (e->tau_probability() == 0) e->set_tau_probability(d::kTauProbability);
  if (e->dtap_attention_edges().empty()) {
    for (double x : d::kDtapEdges) e->add_dtap_attention_edges(x);
  }
  if (e->dtap_probability_edges().empty()) {
    for (double x : d::kDtapEdges) e->add_dtap_probability_edges(x);
  }
}

absl::Status ValidateTraining(const Training& t, absl::string_view prefix) {
  if (FindTask(t.task()) == nullptr) {
    return Invalid(absl::StrCat(prefix, "task"),
                   absl::StrCat("unknown task ", static_cast<int>(t.task()),
                                " (", TaskNameList(), ")"));
  }
  if (absl::Status st = TaskSettingsOf(t).check(t, prefix); !st.ok()) return st;
  const auto& o = t.optimizer();
  if (!qkov::v1::OptimizerKind_IsValid(o.kind()) || o.kind() == 0)
    return Invalid(absl::StrCat(prefix, "optimizer.kind"),
                   absl::StrCat("unknown optimizer ", o.kind(),
                                " (expected SGD or ADAMW)"));
  if (!qkov::v1::ScheduleKind_IsValid(o.schedule()) || o.schedule() == 0)
    return Invalid(
        absl::StrCat(prefix, "optimizer.schedule"),
        absl::StrCat("unknown schedule ", o.schedule(),
                     " (expected CONSTANT, COSINE_WARMUP, QK_RAMP or "
                     "ONE_CYCLE)"));
  if (absl::Status st =
          rules::CheckOneCycle(prefix, o.schedule() == qkov::v1::ONE_CYCLE,
                               TaskOrDefault(t.task()).allows_one_cycle);
      !st.ok())
    return st;
  const auto& in = t.init();
  for (auto [field, kind] : {std::pair<const char*, int>{"init.qk", in.qk()},
                             std::pair<const char*, int>{"init.ov", in.ov()}}) {
    if (!qkov::v1::InitKind_IsValid(kind) || kind == 0)
      return Invalid(
          absl::StrCat(prefix, field),
          absl::StrCat("unknown init ", kind,
                       " (expected INIT_IDENTITY or INIT_DEFAULT_LINEAR)"));
  }
  for (auto [rule, value] :
       {std::pair{rules::kMomentum, o.momentum()},
        std::pair{rules::kWeightDecay, o.weight_decay()},
        std::pair{rules::kAdamBeta1, o.adam_beta1()},
        std::pair{rules::kAdamBeta2, o.adam_beta2()},
        std::pair{rules::kAdamEps, o.adam_eps()},
        std::pair{rules::kIdentityScale, in.identity_scale()}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  if (absl::Status st = rules::CheckRun(prefix, t.max_steps(), t.batch_size(),
                                        t.report_every(), t.loss_window(),
                                        t.target_loss(), o.warmup_steps());
      !st.ok())
    return st;
  const auto& e = t.evaluation();
  if (absl::Status st =
          rules::Check(prefix, rules::kNumExamples, e.num_examples());
      !st.ok())
    return st;
  if (e.eval_every() > 0) {
    for (auto [rule, value] :
         {std::pair{rules::kEvalEvery, e.eval_every()},
          std::pair{rules::kEvalExamples, e.eval_examples()}}) {
      if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
        return st;
    }
  } else if (e.eval_every() < 0) {
    return rules::Check(prefix, rules::kEvalEvery, e.eval_every());
  }
  for (auto [rule, value] :
       {std::pair{rules::kTauAttention, e.tau_attention()},
        std::pair{rules::kTauProbability, e.tau_probability()}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  for (auto [field, edges] :
       {std::pair{"evaluation.dtap_attention_edges", &e.dtap_attention_edges()},
        std::pair{"evaluation.dtap_probability_edges",
                  &e.dtap_probability_edges()}}) {
    if (absl::Status st = rules::CheckEdges(
            prefix, field, absl::MakeConstSpan(edges->data(), edges->size()));
        !st.ok())
      return st;
  }
  return absl::OkStatus();
}

}  // namespace qkov::core
