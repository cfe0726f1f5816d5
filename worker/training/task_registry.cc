#include "worker/training/task_registry.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"

namespace qkov::training {
namespace {

// Every registered trainer; sorted at the first lookup.
std::vector<TrainingTask>* TrainingTaskList() {
  static std::vector<TrainingTask>* const tasks = new std::vector<TrainingTask>;
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
  // The first lookup seals the list, checks each entry against the task
  // table (registered at static initialization too, in an order C++ leaves
  // open, so not checkable when each registers) and sorts it by the kind of
  // the first task each trains.
  static const bool checked = [] {
    looked_up.store(true, std::memory_order_relaxed);
    std::vector<TrainingTask>& tasks = *TrainingTaskList();
    for (const TrainingTask& t : tasks) {
      for (const std::string& name : t.task_names)
        if (FindTask(name) == nullptr)
          DieRegistering(t.name,
                         absl::StrCat("the task table has no task ", name,
                                      " (register its TaskInfo)"));
    }
    std::sort(tasks.begin(), tasks.end(),
              [](const TrainingTask& a, const TrainingTask& b) {
                return FindTask(a.task_names.front())->kind <
                       FindTask(b.task_names.front())->kind;
              });
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
  tasks->push_back(std::move(task));
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
