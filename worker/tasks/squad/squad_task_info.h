// The SQuAD task's entry in the task table (common/task_info.h),
// registered by squad_task_info.cc. No LibTorch, no proto: every program
// links it.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_TASK_INFO_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_TASK_INFO_H_

#include "common/task_info.h"

namespace qkov::squad {

// SQuAD as answer generation (docs/squad.md): the evaluation questions'
// F1, EM and attention on the answer span; OneCycleLR allowed.
TaskInfo SquadTaskInfo();

}  // namespace qkov::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_TASK_INFO_H_
