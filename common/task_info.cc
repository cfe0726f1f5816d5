#include "common/task_info.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace qkov {
namespace {

// Every registered task; sorted by kind at the first lookup.
std::vector<TaskInfo>* TaskList() {
  static std::vector<TaskInfo>* const tasks = new std::vector<TaskInfo>;
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
  // Registration order is the link's; the list's order is the kinds'.
  static const bool sorted = [] {
    looked_up.store(true, std::memory_order_relaxed);
    std::vector<TaskInfo>* tasks = TaskList();
    std::sort(
        tasks->begin(), tasks->end(),
        [](const TaskInfo& a, const TaskInfo& b) { return a.kind < b.kind; });
    if (tasks->empty()) {
      std::fprintf(stderr,
                   "qkov: no task is registered (link qkov_tasks; "
                   "worker/tasks/CMakeLists.txt)\n");
      std::abort();
    }
    return true;
  }();
  (void)sorted;
  return *TaskList();
}

const TaskInfo& DefaultTask() { return Tasks().front(); }

void RegisterTask(TaskInfo task) {
  if (task.name.empty()) DieRegistering(task.name, "no name");
  if (task.kind < 1)
    DieRegistering(task.name, absl::StrCat("kind ", task.kind, " is below 1"));
  for (const TaskInfo& t : *TaskList()) {
    if (t.name == task.name) DieRegistering(task.name, "the name is taken");
    if (t.kind == task.kind)
      DieRegistering(task.name, absl::StrCat("kind ", task.kind,
                                             " is the task ", t.name, "'s"));
  }
  for (const CurveFigure& f : task.curve_figures) {
    if (f.kind.empty() || f.name.empty() || f.x.empty() || f.panels.empty() ||
        f.columns < 1)
      DieRegistering(task.name,
                     absl::StrCat("curve figure '", f.name,
                                  "' needs a kind, a name, an x curve, a "
                                  "panel and at least one column"));
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
