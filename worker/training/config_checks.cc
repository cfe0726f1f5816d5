// TrialOptions::Validate (config.h): the checks of common/trial_rules.h on
// a trial's options, after those of the trainer the task registry has for
// its task. Apart from config.cc because it looks the trainer up: the
// registry's entries hold TrialOptions, so config.cc stays below it.
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "common/trial_rules.h"
#include "worker/training/config.h"
#include "worker/training/task_registry.h"

namespace qkov::training {

absl::Status TrialOptions::Validate() const {
  if (absl::Status s = rules::Check("", rules::kEtaOv, eta_ov); !s.ok())
    return s;
  const TrainingTask* trainer = TrainingTaskNamed(TaskName());
  if (trainer == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("task: this worker does not train '", TaskName(),
                     "' (expected ", TrainedTaskNames(), ")"));
  }
  if (absl::Status s = trainer->check(*this); !s.ok()) return s;
  if (!trainer->trains_a_model) return absl::OkStatus();
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
          FindTask(TaskName())->allows_one_cycle);
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
