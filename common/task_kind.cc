#include "common/task_kind.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace qkov {

std::string TaskName(qkov::v1::TaskKind kind) {
  if (kind == qkov::v1::TASK_KIND_UNSPECIFIED ||
      !qkov::v1::TaskKind_IsValid(kind))
    return "";
  std::string name = absl::AsciiStrToLower(qkov::v1::TaskKind_Name(kind));
  return absl::StartsWith(name, "task_") ? name.substr(5) : name;
}

const TaskInfo* FindTask(qkov::v1::TaskKind kind) {
  // By kind number, built once: aggregations look a task up per row.
  static const std::vector<const TaskInfo*>* const by_kind = [] {
    auto* v = new std::vector<const TaskInfo*>(qkov::v1::TaskKind_MAX + 1);
    for (int k = 0; k <= qkov::v1::TaskKind_MAX; ++k) {
      if (!qkov::v1::TaskKind_IsValid(k)) continue;
      const std::string name = TaskName(static_cast<qkov::v1::TaskKind>(k));
      if (!name.empty()) (*v)[k] = FindTask(name);
    }
    return v;
  }();
  const int k = static_cast<int>(kind);
  return k >= 0 && k < static_cast<int>(by_kind->size()) ? (*by_kind)[k]
                                                         : nullptr;
}

const TaskInfo& TaskOrSynthetic(qkov::v1::TaskKind kind) {
  const TaskInfo* t = FindTask(kind);
  return t != nullptr ? *t : *FindTask("synthetic");
}

}  // namespace qkov
