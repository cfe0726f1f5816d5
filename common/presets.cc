#include "common/presets.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/data_dirs.h"

namespace qkov {

const std::vector<Preset>& Presets() {
  static const auto* presets = [] {
    auto* all = new std::vector<Preset>;
    for (const TaskInfo& task : Tasks())
      all->insert(all->end(), task.presets.begin(), task.presets.end());
    return all;
  }();
  return *presets;
}

constexpr const char* kShipped = kShippedDataPrefix;

bool StillReadsShippedData(const v1::SweepSpec& spec) {
  // A path that starts with it (DebugString quotes each string).
  return spec.DebugString().find(absl::StrCat("\"", kShipped)) !=
         std::string::npos;
}

PresetText WithDataPaths(const Preset& preset) {
  const std::string shipped = kShipped;
  std::vector<std::string> files;
  std::set<std::string> datasets;
  for (size_t at = preset.yaml.find(shipped); at != std::string::npos;
       at = preset.yaml.find(shipped, at + 1)) {
    const size_t begin = at + shipped.size();
    const size_t end = preset.yaml.find_first_of(" ,}\n", begin);
    files.push_back(preset.yaml.substr(begin, end - begin));
    datasets.insert(files.back().substr(0, files.back().find('/')));
  }
  if (files.empty()) return {preset.yaml, absl::OkStatus()};
  const std::optional<std::string> dir = FindDataDir(files);
  if (!dir.has_value()) {
    return {
        preset.yaml,
        absl::FailedPreconditionError(absl::StrCat(
            "preset ", preset.name, " reads data that is in no data folder (",
            absl::StrJoin(DataSearchPath(), ", "),
            "); fetch it: qkov-data fetch ", absl::StrJoin(datasets, " ")))};
  }
  return {absl::StrReplaceAll(preset.yaml, {{shipped, *dir + "/"}}),
          absl::OkStatus()};
}

absl::StatusOr<Preset> FindPreset(const std::string& name) {
  std::string known;
  for (const Preset& p : Presets()) {
    if (p.name == name) return p;
    absl::StrAppend(&known, known.empty() ? "" : ", ", p.name);
  }
  return absl::NotFoundError(
      absl::StrCat("no preset named '", name, "' (known: ", known, ")"));
}

}  // namespace qkov
