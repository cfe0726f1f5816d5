#include "worker/agent/settings_reader.h"

#include <vector>

#include "common/static_registry.h"
#include "worker/training/squad/squad_settings_reader.h"
#include "worker/training/synthetic/synthetic_settings_reader.h"
#include "worker/training/text/text_settings_reader.h"
#include "worker/training/theory/theory_settings_reader.h"

namespace qkov::agent {
namespace {

// This repository's readers, an entry each, declared in their folders under
// worker/training/; RegisterSettingsReader appends the others.
std::vector<SettingsReader> BuiltIn() {
  return {training::SyntheticSettingsReader(), training::TheorySettingsReader(),
          training::text::TextSettingsReader(),
          training::squad::SquadSettingsReader()};
}

StaticRegistry<SettingsReader>& Registry() {
  static auto* const registry =
      new StaticRegistry<SettingsReader>("settings reader", BuiltIn());
  return *registry;
}

}  // namespace

const SettingsReader* FindSettingsReader(absl::string_view name) {
  return Registry().Find(name);
}

void RegisterSettingsReader(SettingsReader reader) {
  const bool no_read = reader.read == nullptr;
  Registry().Add(std::move(reader), no_read ? "no read" : nullptr);
}

}  // namespace qkov::agent
