#include "common/task_settings.h"

#include <vector>

#include "common/static_registry.h"
#include "common/task_kind.h"
#include "worker/training/squad/squad_settings.h"
#include "worker/training/synthetic/synthetic_settings.h"
#include "worker/training/text/text_settings.h"
#include "worker/training/theory/theory_settings.h"

namespace qkov {
namespace {

// This repository's settings messages, an entry each, declared in their
// folders under worker/training/; RegisterTaskSettings appends the others.
std::vector<TaskSettings> BuiltIn() {
  return {SyntheticSettings(), TheorySettings(), text::TextSettings(),
          squad::SquadSettings()};
}

StaticRegistry<TaskSettings>& Registry() {
  static auto* const registry =
      new StaticRegistry<TaskSettings>("task settings", BuiltIn());
  return *registry;
}

}  // namespace

const TaskSettings* FindTaskSettings(absl::string_view name) {
  return Registry().Find(name);
}

const TaskSettings& TaskSettingsOf(const qkov::v1::Training& training) {
  const TaskSettings* s =
      FindTaskSettings(TaskOrSynthetic(training.task()).settings);
  return s != nullptr ? *s : Registry().Entries().front();
}

void RegisterTaskSettings(TaskSettings settings) {
  const bool no_check = settings.check == nullptr;
  Registry().Add(std::move(settings), no_check ? "no check" : nullptr);
}

}  // namespace qkov
