// The theory task's entry in the task table (common/task_info.h),
// registered by theory_task_info.cc. No LibTorch, no proto: every program
// links it.
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_TASK_INFO_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_TASK_INFO_H_

#include "common/task_info.h"

namespace qkov {

// The reduced ODE's entry (paper Fig. 4, theory): no parameterization, an
// end point and series over time instead of training curves.
TaskInfo TheoryTaskInfo();

}  // namespace qkov

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_TASK_INFO_H_
