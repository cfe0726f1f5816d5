#include "worker/agent/settings_reader.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "worker/training/squad/squad_settings_reader.h"
#include "worker/training/synthetic/synthetic_settings_reader.h"
#include "worker/training/text/text_settings_reader.h"
#include "worker/training/theory/theory_settings_reader.h"

namespace qkov::agent {
namespace {

// This repository's readers, one line each, declared in their folders under
// worker/training/; RegisterSettingsReader appends the others.
std::vector<SettingsReader>* ReaderList() {
  static std::vector<SettingsReader>* const list =
      new std::vector<SettingsReader>{
          // clang-format off
          training::SyntheticSettingsReader(),
          training::TheorySettingsReader(),
          training::text::TextSettingsReader(),
          training::squad::SquadSettingsReader(),
          // clang-format on
      };
  return list;
}

// Set by the first lookup, as common/task_info.cc's task list.
std::atomic<bool> looked_up{false};

[[noreturn]] void DieRegistering(const std::string& name, const char* why) {
  std::fprintf(stderr, "qkov: cannot register settings reader \"%s\": %s\n",
               name.c_str(), why);
  std::abort();
}

}  // namespace

const SettingsReader* FindSettingsReader(absl::string_view name) {
  looked_up.store(true, std::memory_order_relaxed);
  for (const SettingsReader& r : *ReaderList())
    if (r.name == name) return &r;
  return nullptr;
}

void RegisterSettingsReader(SettingsReader reader) {
  if (reader.name.empty()) DieRegistering(reader.name, "no name");
  if (reader.read == nullptr) DieRegistering(reader.name, "no read");
  for (const SettingsReader& r : *ReaderList())
    if (r.name == reader.name) DieRegistering(reader.name, "the name is taken");
  if (looked_up.load(std::memory_order_relaxed))
    DieRegistering(reader.name,
                   "registered after the first lookup (register at static "
                   "initialization)");
  ReaderList()->push_back(std::move(reader));
}

}  // namespace qkov::agent
