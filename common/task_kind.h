// The proto's TaskKind to the tasks of common/task_info.h.
#ifndef QKOV_COMMON_TASK_KIND_H_
#define QKOV_COMMON_TASK_KIND_H_

#include <string>

#include "common/task_info.h"
#include "qkov/v1/config.pb.h"

namespace qkov {

// The task as sweep files spell it: TASK_FIXED_ATTENTION ->
// "fixed_attention", a registered task's number -> its name; "" for
// TASK_KIND_UNSPECIFIED and unknown numbers.
std::string TaskName(qkov::v1::TaskKind kind);

// The task of `kind` (config.proto's or a registered number), or nullptr.
const TaskInfo* FindTask(qkov::v1::TaskKind kind);

// The task of `kind`, or the default task (DefaultTask(), config.proto's
// first) for an unknown or unspecified kind (the views of a sweep whose rows
// carry none).
const TaskInfo& TaskOrDefault(qkov::v1::TaskKind kind);

}  // namespace qkov

#endif  // QKOV_COMMON_TASK_KIND_H_
