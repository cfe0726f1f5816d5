#include "common/task_settings.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/task_kind.h"
#include "worker/training/squad/squad_settings.h"
#include "worker/training/synthetic/synthetic_settings.h"
#include "worker/training/text/text_settings.h"
#include "worker/training/theory/theory_settings.h"

namespace qkov {
namespace {

// This repository's settings messages, one line each, declared in their
// folders under worker/training/; RegisterTaskSettings appends the others.
std::vector<TaskSettings>* SettingsList() {
  static std::vector<TaskSettings>* const list = new std::vector<TaskSettings>{
      // clang-format off
      SyntheticSettings(),
      TheorySettings(),
      text::TextSettings(),
      squad::SquadSettings(),
      // clang-format on
  };
  return list;
}

// Set by the first lookup, as common/task_info.cc's task list.
std::atomic<bool> looked_up{false};

[[noreturn]] void DieRegistering(const std::string& name, const char* why) {
  std::fprintf(stderr, "qkov: cannot register task settings \"%s\": %s\n",
               name.c_str(), why);
  std::abort();
}

}  // namespace

const TaskSettings* FindTaskSettings(absl::string_view name) {
  looked_up.store(true, std::memory_order_relaxed);
  for (const TaskSettings& s : *SettingsList())
    if (s.name == name) return &s;
  return nullptr;
}

const TaskSettings& TaskSettingsOf(const qkov::v1::Training& training) {
  const TaskSettings* s =
      FindTaskSettings(TaskOrSynthetic(training.task()).settings);
  return s != nullptr ? *s : SettingsList()->front();
}

void RegisterTaskSettings(TaskSettings settings) {
  if (settings.name.empty()) DieRegistering(settings.name, "no name");
  if (settings.check == nullptr) DieRegistering(settings.name, "no check");
  for (const TaskSettings& s : *SettingsList())
    if (s.name == settings.name)
      DieRegistering(settings.name, "the name is taken");
  if (looked_up.load(std::memory_order_relaxed))
    DieRegistering(settings.name,
                   "registered after the first lookup (register at static "
                   "initialization)");
  SettingsList()->push_back(std::move(settings));
}

}  // namespace qkov
