#include "worker/training/task_registry.h"

#include "common/trial_rules.h"
#include "worker/training/squad/squad_task_trainer.h"
#include "worker/training/synthetic/fixed_attention.h"
#include "worker/training/synthetic/synthetic_trainer.h"
#include "worker/training/text/text_trainer.h"
#include "worker/training/theory/theory_trainer.h"

namespace qkov::training {
namespace {

absl::Status CheckLrRatio(const TrialOptions& o) {
  return rules::Check("", rules::kLrRatio, o.lr_ratio);
}

absl::Status CheckSynthetic(const TrialOptions& o) {
  if (absl::Status s = CheckLrRatio(o); !s.ok()) return s;
  return o.synthetic.Validate();
}

// Fixed attention has no QK circuit, so no ratio: alpha instead.
absl::Status CheckFixedAttention(const TrialOptions& o) {
  if (absl::Status s = rules::Check("", rules::kAlpha, o.alpha); !s.ok())
    return s;
  return o.synthetic.Validate();
}

// The ODE has no model, data or optimizer; eta_ov and lr_ratio are its
// rates.
absl::Status CheckTheory(const TrialOptions& o) {
  if (absl::Status s = CheckLrRatio(o); !s.ok()) return s;
  const TheoryOptions& t = o.theory;
  return rules::CheckTheory("", t.m, t.n, t.b, t.M, t.dtau, t.relative_step,
                            t.max_tau, t.target_loss, t.num_thresholds,
                            t.num_samples);
}

}  // namespace

const std::vector<TrainingTask>& TrainingTasks() {
  static const SyntheticTrainer synthetic;
  static const FixedAttentionTrainer fixed_attention;
  static const TheoryTrainer theory;
  static const text::TextTrainer text;
  static const squad::SquadTaskTrainer squad;
  // One entry per task. The text and SQuAD settings are checked on the
  // proto before conversion (common/task_checks.h), not again here.
  static const std::vector<TrainingTask>* const tasks =
      new std::vector<TrainingTask>{
          // clang-format off
          // kind, name, the task table's names, trainer, checks[, model]
          {TaskKind::kSynthetic, "synthetic", {"synthetic"}, &synthetic, &CheckSynthetic},
          {TaskKind::kFixedAttention, "fixed_attention", {"fixed_attention"}, &fixed_attention, &CheckFixedAttention},
          {TaskKind::kTheory, "theory", {"theory"}, &theory, &CheckTheory, /*trains_a_model=*/false},
          {TaskKind::kText, "text", {"text", "hatexplain", "sva"}, &text, &CheckLrRatio},
          {TaskKind::kSquad, "squad", {"squad"}, &squad, &CheckLrRatio},
          // clang-format on
      };
  return *tasks;
}

const TrainingTask& TrainingTaskFor(TaskKind kind) {
  return TrainingTasks()[static_cast<size_t>(kind)];
}

const TrainingTask* TrainingTaskNamed(absl::string_view task_name) {
  for (const TrainingTask& t : TrainingTasks()) {
    for (const std::string& name : t.task_names)
      if (name == task_name) return &t;
  }
  return nullptr;
}

std::string TrainedTaskNames() {
  std::vector<std::string> names;
  for (const TrainingTask& t : TrainingTasks())
    names.insert(names.end(), t.task_names.begin(), t.task_names.end());
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace qkov::training
