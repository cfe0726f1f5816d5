#include "common/task_info.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "worker/training/squad/squad_task_info.h"
#include "worker/training/synthetic/synthetic_task_info.h"
#include "worker/training/text/text_task_info.h"
#include "worker/training/theory/theory_task_info.h"

namespace qkov {
namespace {

// This repository's tasks, one line each, declared in their folders under
// worker/training/; RegisterTask appends the others.
std::vector<TaskInfo>* TaskList() {
  static std::vector<TaskInfo>* const tasks = new std::vector<TaskInfo>{
      // clang-format off
      SyntheticTaskInfo(),
      TheoryTaskInfo(),
      FixedAttentionTaskInfo(),
      text::TextTaskInfo("text", defaults::kHateXplainText, "jsonl"),
      text::HateXplainTaskInfo(),
      text::SvaTaskInfo(),
      squad::SquadTaskInfo(),
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
