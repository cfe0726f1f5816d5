#include "common/task_kind.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace qkov {
namespace {

// config.proto's name of the value `kind`, without TASK_ and lower case;
// "" for 0 and numbers config.proto does not name.
std::string ProtoTaskName(int kind) {
  if (kind == qkov::v1::TASK_KIND_UNSPECIFIED ||
      !qkov::v1::TaskKind_IsValid(kind))
    return "";
  std::string name = absl::AsciiStrToLower(
      qkov::v1::TaskKind_Name(static_cast<qkov::v1::TaskKind>(kind)));
  return absl::StartsWith(name, "task_") ? name.substr(5) : name;
}

}  // namespace

std::string TaskName(qkov::v1::TaskKind kind) {
  const TaskInfo* t = FindTask(kind);
  return t != nullptr ? t->name : ProtoTaskName(kind);
}

const TaskInfo* FindTask(qkov::v1::TaskKind kind) {
  // By kind number, built once: aggregations look a task up per row.
  // config.proto's numbers index a vector; registered tasks (a few, from
  // kFirstRegisteredTaskKind) are searched.
  struct Index {
    std::vector<const TaskInfo*> in_proto;
    std::vector<const TaskInfo*> registered;
  };
  static const Index* const index = [] {
    auto* x = new Index;
    x->in_proto.resize(qkov::v1::TaskKind_MAX + 1);
    for (const TaskInfo& t : Tasks()) {
      if (t.kind >= 0 && t.kind < static_cast<int>(x->in_proto.size()))
        x->in_proto[t.kind] = &t;
      else
        x->registered.push_back(&t);
    }
    return x;
  }();
  const int k = static_cast<int>(kind);
  if (k >= 0 && k < static_cast<int>(index->in_proto.size()))
    return index->in_proto[k];
  for (const TaskInfo* t : index->registered)
    if (t->kind == k) return t;
  return nullptr;
}

const TaskInfo& TaskOrDefault(qkov::v1::TaskKind kind) {
  const TaskInfo* t = FindTask(kind);
  return t != nullptr ? *t : DefaultTask();
}

}  // namespace qkov
