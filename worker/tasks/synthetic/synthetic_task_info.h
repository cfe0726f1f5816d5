// The synthetic and fixed-attention tasks' entries in the task table
// (common/task_info.h): what the server, the CLI and the dashboard know of
// them without training them, registered by synthetic_task_info.cc. No
// LibTorch, no proto: every program links it.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TASK_INFO_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TASK_INFO_H_

#include "common/task_info.h"

namespace qkov {

// The synthetic task's entry (paper §3): four parameterizations, stacked
// training, the distinct-token attention metrics.
TaskInfo SyntheticTaskInfo();

// Fixed attention (paper Fig. 3): attention held at alpha on the distinct
// tokens, only the OV circuit trained.
TaskInfo FixedAttentionTaskInfo();

}  // namespace qkov

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TASK_INFO_H_
