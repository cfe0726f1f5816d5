#include "common/task_info.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"

namespace qkov {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Bounded results: fractions and probabilities in [0, 1]; differences of
// probabilities in [-1, 1]; counts and norms >= 0; losses >= 0.
void Add(std::vector<ResultName>* out, const std::string& name, double lo,
         double hi) {
  out->push_back({name, lo, hi});
}

TaskInfo Synthetic() {
  TaskInfo t;
  t.name = "synthetic";
  t.settings = "synthetic";
  t.stacks = true;
  for (const char* n : {"accuracy", "gold_probability", "distinct_attention",
                        "ac", "acmc", "converged"})
    Add(&t.results, n, 0, 1);
  for (const char* n : {"separability", "comprehensiveness", "sufficiency"})
    Add(&t.results, n, -1, 1);
  for (const char* n : {"loss", "train_loss", "top_k", "steps", "qk_norm",
                        "ov_norm", "qk_balancedness", "ov_balancedness"})
    Add(&t.results, n, 0, kInf);
  t.curves = {
      "train_loss", "train_accuracy", "distinct_attention", "separability",
      "qk_norm",    "ov_norm",        "qk_balancedness",    "ov_balancedness",
      "lr_qk",      "lr_ov"};
  // The paper's §3 numbers.
  t.views = {{"steps", "accuracy", "loss", "distinct_attention", "ac", "acmc",
              "separability"},
             {"accuracy", "distinct_attention", "ac", "acmc"},
             {"distinct_attention", "ac", "accuracy"},
             {"train_loss", "distinct_attention"},
             {"train_loss", "train_accuracy", "distinct_attention"},
             {"ratio", "search", "dtap", "curves"}};
  return t;
}

TaskInfo Theory() {
  TaskInfo t;
  t.name = "theory";
  t.settings = "theory";
  t.parameterized = false;
  Add(&t.results, "alpha", 0, 1);
  Add(&t.results, "converged", 0, 1);
  Add(&t.results, "mu_ov", -kInf, kInf);
  Add(&t.results, "mu_qk", -kInf, kInf);
  Add(&t.results, "loss", 0, kInf);
  Add(&t.results, "tau", 0, kInf);
  // The ODE's end point; its curves are series over time (theory_*), not
  // reports at training steps. Its figures are the paper's Fig. 4.
  t.views = {{"alpha", "mu_ov", "mu_qk", "loss", "tau", "converged"},
             {"alpha", "mu_ov", "mu_qk", "loss"},
             {"alpha"},
             {"theory_loss", "theory_alpha"},
             {"theory_loss", "theory_alpha"},
             {"theory"}};
  return t;
}

TaskInfo FixedAttention() {
  TaskInfo t;
  t.name = "fixed_attention";
  t.settings = "synthetic";
  t.takes_alphas = true;
  t.searchable = false;  // attention is fixed: no QK circuit
  Add(&t.results, "accuracy", 0, 1);
  Add(&t.results, "alpha", 0, 1);
  Add(&t.results, "loss", 0, kInf);
  Add(&t.results, "steps", 0, kInf);
  t.curves = {"train_loss", "train_accuracy"};
  // The final loss against alpha: the paper's Fig. 3.
  t.views = {{"steps", "alpha", "loss", "accuracy"},
             {"loss", "accuracy"},
             {"loss"},
             {"train_loss"},
             {"train_loss", "train_accuracy"},
             {"fixed"}};
  return t;
}

// Text classification (docs/text-tasks.md): text (JSON lines of your own),
// hatexplain and sva differ in their data and defaults only.
TaskInfo Text(const char* name, const defaults::TextDefaults& defaults,
              const char* format) {
  TaskInfo t;
  t.name = name;
  t.settings = "text";
  t.text_defaults = &defaults;
  t.text_format = format;
  for (const char* split : {"validation", "test"}) {
    for (const char* n :
         {"accuracy", "gold_probability", "rationale_mass_head0",
          "rationale_mass", "rationale_mass_layer_max",
          "rationale_mass_rollout", "rationale_mass_readout", "ac", "acmc"})
      Add(&t.results, absl::StrCat(split, "_", n), 0, 1);
    for (const char* n : {"comprehensiveness", "sufficiency"})
      Add(&t.results, absl::StrCat(split, "_", n), -1, 1);
    for (const char* n : {"loss", "top_k", "examples"})
      Add(&t.results, absl::StrCat(split, "_", n), 0, kInf);
  }
  Add(&t.results, "train_accuracy", 0, 1);
  Add(&t.results, "train_truncated_fraction", 0, 1);
  Add(&t.results, "converged", 0, 1);
  for (const char* n :
       {"steps", "epochs", "train_examples", "dropped_examples", "vocab_rows"})
    Add(&t.results, n, 0, kInf);
  t.curves = {"train_loss",
              "train_accuracy",
              "lr_qk",
              "lr_ov",
              "epoch",
              "val_loss",
              "val_accuracy",
              "val_gold_probability",
              "val_rationale_mass_head0",
              "val_rationale_mass",
              "val_rationale_mass_rollout",
              "val_ac"};
  // The test split's numbers.
  t.views = {{"steps", "test_accuracy", "test_rationale_mass_head0",
              "test_rationale_mass_rollout", "test_comprehensiveness",
              "test_sufficiency", "test_ac"},
             {"test_accuracy", "test_rationale_mass_head0",
              "test_comprehensiveness", "test_sufficiency"},
             {"test_rationale_mass_head0", "test_ac", "test_accuracy"},
             {"train_loss", "train_accuracy"},
             {"train_loss", "train_accuracy", "epoch"},
             {"ratio", "search", "dtap", "curves"}};
  return t;
}

TaskInfo Squad() {
  TaskInfo t;
  t.name = "squad";
  t.settings = "squad";
  t.allows_one_cycle = true;
  for (const char* n :
       {"f1", "em", "answer_mass_rollout", "answer_mass_layer_mean",
        "answer_mass_layer_max", "gold_probability", "ac", "acmc"})
    Add(&t.results, absl::StrCat("eval_", n), 0, 1);
  for (const char* n : {"comprehensiveness", "sufficiency"})
    Add(&t.results, absl::StrCat("eval_", n), -1, 1);
  Add(&t.results, "eval_examples", 0, kInf);
  Add(&t.results, "converged", 0, 1);
  for (const char* n :
       {"steps", "epochs", "train_questions", "train_skipped",
        "train_unanswerable", "eval_skipped", "glove_matched", "selected_step"})
    Add(&t.results, n, 0, kInf);
  Add(&t.results, "selected_val_f1", 0, 1);
  Add(&t.results, "train_f1", 0, 1);
  t.curves = {"train_loss",
              "lr_qk",
              "lr_ov",
              "epoch",
              "selection_f1",
              "val_f1",
              "val_em",
              "val_answer_mass_rollout",
              "val_answer_mass_layer_mean",
              "val_answer_mass_layer_max",
              "val_ac",
              "val_gold_probability"};
  // The evaluation questions' numbers.
  t.views = {{"steps", "eval_f1", "eval_em", "eval_answer_mass_rollout",
              "eval_answer_mass_layer_max", "eval_ac", "eval_comprehensiveness",
              "eval_sufficiency"},
             {"eval_f1", "eval_em", "eval_answer_mass_rollout", "eval_ac"},
             {"eval_answer_mass_rollout", "eval_ac", "eval_f1"},
             {"train_loss"},
             {"train_loss", "epoch"},
             {"ratio", "search", "dtap", "curves"}};
  return t;
}

// This repository's tasks, one line each; RegisterTask appends the others.
std::vector<TaskInfo>* TaskList() {
  static std::vector<TaskInfo>* const tasks = new std::vector<TaskInfo>{
      // clang-format off
      Synthetic(),
      Theory(),
      FixedAttention(),
      Text("text", defaults::kHateXplainText, "jsonl"),
      Text("hatexplain", defaults::kHateXplainText, "hatexplain"),
      Text("sva", defaults::kSvaText, "sva_filtered"),
      Squad(),
      // clang-format on
  };
  return tasks;
}

// Set by the first lookup: from then on the list is read without a lock,
// so it may no longer grow.
std::atomic<bool> looked_up{false};

[[noreturn]] void DieRegistering(const std::string& name,
                                 const std::string& why) {
  std::fprintf(stderr, "qkov: cannot register task \"%s\": %s\n", name.c_str(),
               why.c_str());
  std::abort();
}

}  // namespace

const std::vector<TaskInfo>& Tasks() {
  looked_up.store(true, std::memory_order_relaxed);
  return *TaskList();
}

void RegisterTask(TaskInfo task) {
  if (task.name.empty()) DieRegistering(task.name, "no name");
  if (task.kind < kFirstRegisteredTaskKind)
    DieRegistering(task.name, absl::StrCat("kind ", task.kind, " is below ",
                                           kFirstRegisteredTaskKind));
  for (const TaskInfo& t : *TaskList()) {
    if (t.name == task.name) DieRegistering(task.name, "the name is taken");
    if (t.kind == task.kind)
      DieRegistering(task.name, absl::StrCat("kind ", task.kind,
                                             " is the task ", t.name, "'s"));
  }
  if (looked_up.load(std::memory_order_relaxed))
    DieRegistering(task.name,
                   "registered after the first lookup (register "
                   "at static initialization)");
  TaskList()->push_back(std::move(task));
}

const TaskInfo* FindTask(absl::string_view name) {
  for (const TaskInfo& t : Tasks())
    if (t.name == name) return &t;
  return nullptr;
}

std::string TaskNameList() {
  const std::vector<TaskInfo>& tasks = Tasks();
  std::string out;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i > 0) out += i + 1 == tasks.size() ? " or " : ", ";
    out += tasks[i].name;
  }
  return out;
}

std::vector<ResultName> FinalResultNames(absl::string_view task) {
  const TaskInfo* t = FindTask(task);
  return t == nullptr ? std::vector<ResultName>{} : t->results;
}

std::vector<std::string> ReportedCurveNames(absl::string_view task) {
  const TaskInfo* t = FindTask(task);
  return t == nullptr ? std::vector<std::string>{} : t->curves;
}

}  // namespace qkov
