// Sweep presets that reproduce the paper's experiments (docs/paper.md),
// each declared by its task (common/task_info.h, TaskInfo::presets).
// `qkov presets` lists them, `qkov presets NAME` shows one; `qkov submit
// --preset NAME` submits one, with `--quick` for a budget of minutes on 2
// cores (for the synthetic task every rate x10 and 30k steps;
// docs/metrics.md explains why it keeps the ordering).
#ifndef QKOV_COMMON_PRESETS_H_
#define QKOV_COMMON_PRESETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/task_info.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov {

// Every task's presets, in the task table's order (Tasks()).
const std::vector<Preset>& Presets();
// NOT_FOUND naming the known presets.
absl::StatusOr<Preset> FindPreset(const std::string& name);
// The preset's YAML with its data files (written ../shared/data/...) in the
// first data folder of the search path that holds them all
// (common/data_dirs.h). Where none does, the YAML as written and, in
// `missing`, FAILED_PRECONDITION naming the folders searched and the
// `qkov-data fetch` command that gets them: the caller reports it unless
// its overrides point every data path elsewhere (`StillReadsShippedData`).
struct PresetText {
  std::string yaml;
  absl::Status missing;
};
PresetText WithDataPaths(const Preset& preset);
// Whether a sweep still names a file under ../shared/data/ (a path that
// starts so).
bool StillReadsShippedData(const qkov::v1::SweepSpec& spec);

}  // namespace qkov

#endif  // QKOV_COMMON_PRESETS_H_
