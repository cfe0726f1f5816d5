// Sweep presets that reproduce the paper's synthetic experiments
// (docs/paper.md §3). `qkov presets` lists them; `qkov submit --preset NAME`
// submits one, with `--quick` for the smallest faithful budget (every rate
// x10, 30k steps; docs/metrics.md explains why it keeps the ordering).
#ifndef QKOV_CLIENT_PRESETS_H_
#define QKOV_CLIENT_PRESETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qkov::client {

struct Preset {
  std::string name;
  std::string summary;
  std::string yaml;                // the paper's settings
  std::vector<std::string> quick;  // --set overrides for --quick
};

const std::vector<Preset>& Presets();
// NOT_FOUND naming the known presets.
absl::StatusOr<Preset> FindPreset(const std::string& name);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_PRESETS_H_
