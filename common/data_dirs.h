// Where the real datasets are found (docs/data.md): one search path for the
// presets, `qkov-data fetch`, the workers and the tests. In order:
// $QKOV_DATA, then ~/.cache/qkov/data ($XDG_CACHE_HOME/qkov/data where that
// is set), then ../shared/data (the folder a checkout's tests have beside
// it). The worker's systemd unit sets QKOV_DATA=/var/lib/qkov/data.
#ifndef QKOV_COMMON_DATA_DIRS_H_
#define QKOV_COMMON_DATA_DIRS_H_

#include <optional>
#include <string>
#include <vector>

namespace qkov {

// The search path, as it stands in the environment now; entries whose
// variable is unset are left out.
std::vector<std::string> DataSearchPath();

// Where `qkov-data fetch` writes by default: $QKOV_DATA, else the cache.
std::string DefaultDataDir();

// How a sweep names a file of the shipped datasets, wherever they are
// (presets write it so): "../shared/data/" then the path inside a data
// folder ("sva/subj_agr_filtered.text").
inline constexpr char kShippedDataPrefix[] = "../shared/data/";

// A data path as this process finds it: one that starts with
// kShippedDataPrefix, as the first folder of this process's search path that
// holds the file (an absolute path), so that a worker finds a dataset from
// any working directory (`/` under systemd, the log folder under Slurm) and
// in its own data folders; any other path, and one no folder holds, as
// given. The config keeps the path as written (its hash is the same on
// every machine); the file's SHA-256, where the config gives one, is
// checked on the file found.
std::string ResolveDataPath(const std::string& path);

// The first folder of the search path that holds every one of `files`
// (paths relative to a data folder, e.g. "hatexplain/test.jsonl").
std::optional<std::string> FindDataDir(const std::vector<std::string>& files);

}  // namespace qkov

#endif  // QKOV_COMMON_DATA_DIRS_H_
