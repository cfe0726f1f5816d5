#include "common/task_settings.h"

#include <vector>

#include "common/static_registry.h"
#include "common/task_kind.h"

namespace qkov {
namespace {

// Every registered settings message (each task package registers its own).
StaticRegistry<TaskSettings>& Registry() {
  static auto* const registry =
      new StaticRegistry<TaskSettings>("task settings", {});
  return *registry;
}

}  // namespace

const TaskSettings* FindTaskSettings(absl::string_view name) {
  return Registry().Find(name);
}

const TaskSettings& TaskSettingsOf(const qkov::v1::Training& training) {
  const TaskSettings* s =
      FindTaskSettings(TaskOrDefault(training.task()).settings);
  return s != nullptr ? *s : *FindTaskSettings(DefaultTask().settings);
}

void RegisterTaskSettings(TaskSettings settings) {
  const bool no_check = settings.check == nullptr;
  Registry().Add(std::move(settings), no_check ? "no check" : nullptr);
}

}  // namespace qkov
