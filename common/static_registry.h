// A list of plug-in entries, each with a `name`, that grows only before
// main() (a registration object at namespace scope adds one) and is read
// without a lock from the first lookup on. The settings messages
// (common/task_settings.h) and the agent's settings readers
// (worker/agent/settings_reader.h) are such lists: this repository's entries
// first, then those registered from other folders.
#ifndef QKOV_COMMON_STATIC_REGISTRY_H_
#define QKOV_COMMON_STATIC_REGISTRY_H_

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace qkov {

template <class Entry>
class StaticRegistry {
 public:
  // `what` names the list in a refusal ("task settings").
  StaticRegistry(const char* what, std::vector<Entry> built_in)
      : what_(what), entries_(std::move(built_in)) {}

  // Every entry; from this call on the list may not grow.
  const std::vector<Entry>& Entries() {
    looked_up_.store(true, std::memory_order_relaxed);
    return entries_;
  }

  // The entry named `name`, or nullptr.
  const Entry* Find(absl::string_view name) {
    for (const Entry& e : Entries())
      if (e.name == name) return &e;
    return nullptr;
  }

  // Appends `entry`. Dies, naming it, on an empty name, on `refusal` (the
  // caller's own reason, e.g. "no check"; nullptr: none), on a taken name,
  // or after the first lookup.
  void Add(Entry entry, const char* refusal = nullptr) {
    if (entry.name.empty()) Die(entry.name, "no name");
    if (refusal != nullptr) Die(entry.name, refusal);
    for (const Entry& e : entries_)
      if (e.name == entry.name) Die(entry.name, "the name is taken");
    if (looked_up_.load(std::memory_order_relaxed))
      Die(entry.name,
          "registered after the first lookup (register at static "
          "initialization)");
    entries_.push_back(std::move(entry));
  }

 private:
  [[noreturn]] void Die(const std::string& name, const char* why) const {
    std::fprintf(stderr, "qkov: cannot register %s \"%s\": %s\n", what_,
                 name.c_str(), why);
    std::abort();
  }

  const char* what_;
  std::vector<Entry> entries_;
  std::atomic<bool> looked_up_{false};
};

}  // namespace qkov

#endif  // QKOV_COMMON_STATIC_REGISTRY_H_
