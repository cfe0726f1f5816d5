#include "worker/training/config.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "common/trial_rules.h"
#include "worker/training/task_registry.h"

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

const char* TaskKindName(TaskKind kind) { return TrainingTaskFor(kind).name; }

absl::Status SyntheticTaskOptions::Validate() const {
  return rules::CheckSyntheticShape("", vocab_size, num_common, num_classes,
                                    distinct_per_class, seq_len);
}

absl::Status TrialOptions::Validate() const {
  if (absl::Status s = rules::Check("", rules::kEtaOv, eta_ov); !s.ok())
    return s;
  const TrainingTask& task = TrainingTaskFor(kind);
  if (absl::Status s = task.check(*this); !s.ok()) return s;
  if (!task.trains_a_model) return absl::OkStatus();
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
          FindTask(task.task_names.front())->allows_one_cycle);
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
