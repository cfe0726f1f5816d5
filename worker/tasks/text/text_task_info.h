// The text classification tasks' entries in the task table
// (common/task_info.h), registered by text_task_info.cc. No LibTorch, no
// proto: every program links it.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_TASK_INFO_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_TASK_INFO_H_

#include "absl/strings/string_view.h"
#include "common/task_info.h"
#include "worker/tasks/text/text_defaults.h"

namespace qkov::text {

// One text classification task (docs/text-tasks.md): text (JSON lines of
// your own), hatexplain and sva differ in their name, model and training
// defaults, and the data files' format when the sweep names none.
struct TextTaskDefaults {
  const char* name;
  const defaults::TextDefaults* defaults;
  const char* format;
};
inline constexpr TextTaskDefaults kTextTasks[] = {
    {"text", &defaults::kHateXplainText, "jsonl"},
    {"hatexplain", &defaults::kHateXplainText, "hatexplain"},
    {"sva", &defaults::kSvaText, "sva_filtered"}};
// The entry of kTextTasks named `task`; null for a task not of this package.
inline const TextTaskDefaults* TextTaskDefaultsOf(absl::string_view task) {
  for (const TextTaskDefaults& d : kTextTasks)
    if (task == d.name) return &d;
  return nullptr;
}

// The task table's entry of the text task named `name` (one of kTextTasks).
TaskInfo TextTaskInfo(const char* name);

// HateXplain and subject-verb agreement: TextTaskInfo with the authors'
// defaults and file formats, and the presets of the paper's runs.
TaskInfo HateXplainTaskInfo();
TaskInfo SvaTaskInfo();

}  // namespace qkov::text

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_TASK_INFO_H_
