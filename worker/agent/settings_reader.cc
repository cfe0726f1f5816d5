#include "worker/agent/settings_reader.h"

#include <vector>

#include "common/static_registry.h"

namespace qkov::agent {
namespace {

// Every registered reader (each task package registers its own).
StaticRegistry<SettingsReader>& Registry() {
  static auto* const registry =
      new StaticRegistry<SettingsReader>("settings reader", {});
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
