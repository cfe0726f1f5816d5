#include "worker/training/task_registry.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
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

// This repository's trainers, one line each; RegisterTrainingTask appends
// the others.
std::vector<TrainingTask>* TrainingTaskList() {
  static const SyntheticTrainer synthetic;
  static const FixedAttentionTrainer fixed_attention;
  static const TheoryTrainer theory;
  static const text::TextTrainer text;
  static const squad::SquadTaskTrainer squad;
  // The text and SQuAD settings are checked on the proto before conversion
  // (common/task_checks.h), not again here.
  static std::vector<TrainingTask>* const tasks = new std::vector<TrainingTask>{
      // clang-format off
      // kind, name, the task table's names, trainer, checks[, model]
      {TaskKind::kSynthetic, "synthetic", {"synthetic"}, &synthetic, &CheckSynthetic},
      {TaskKind::kFixedAttention, "fixed_attention", {"fixed_attention"}, &fixed_attention, &CheckFixedAttention},
      {TaskKind::kTheory, "theory", {"theory"}, &theory, &CheckTheory, /*trains_a_model=*/false},
      {TaskKind::kText, "text", {"text", "hatexplain", "sva"}, &text, &CheckLrRatio},
      {TaskKind::kSquad, "squad", {"squad"}, &squad, &CheckLrRatio},
      // clang-format on
  };
  return tasks;
}

// Set by the first lookup; the list is read without a lock from then on.
std::atomic<bool> looked_up{false};

[[noreturn]] void DieRegistering(const char* name, const std::string& why) {
  std::fprintf(stderr, "qkov-worker: cannot register trainer \"%s\": %s\n",
               name == nullptr ? "" : name, why.c_str());
  std::abort();
}

}  // namespace

const std::vector<TrainingTask>& TrainingTasks() {
  // The first lookup seals the list and checks the registered entries
  // against the task table (registered at static initialization too, in an
  // order C++ leaves open, so not checkable when each registers).
  static const bool checked = [] {
    looked_up.store(true, std::memory_order_relaxed);
    for (const TrainingTask& t : *TrainingTaskList()) {
      for (const std::string& name : t.task_names)
        if (FindTask(name) == nullptr)
          DieRegistering(t.name,
                         absl::StrCat("the task table has no task ", name,
                                      " (register its TaskInfo)"));
    }
    return true;
  }();
  (void)checked;
  return *TrainingTaskList();
}

void RegisterTrainingTask(TrainingTask task) {
  if (task.name == nullptr || task.trainer == nullptr || task.check == nullptr)
    DieRegistering(task.name, "no name, trainer or check");
  if (task.task_names.empty()) DieRegistering(task.name, "trains no task");
  std::vector<TrainingTask>* tasks = TrainingTaskList();
  for (const TrainingTask& t : *tasks) {
    for (const std::string& name : task.task_names) {
      for (const std::string& n : t.task_names)
        if (n == name)
          DieRegistering(task.name,
                         absl::StrCat(name, " is trained by ", t.name));
    }
  }
  if (looked_up.load(std::memory_order_relaxed))
    DieRegistering(task.name,
                   "registered after the first lookup (register "
                   "at static initialization)");
  task.kind = static_cast<TaskKind>(tasks->size());
  tasks->push_back(std::move(task));
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
