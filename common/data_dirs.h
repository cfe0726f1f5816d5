// Where the real datasets are found (docs/data.md): one search path for the
// presets, `qkov-data fetch` and the tests. In order: $QKOV_DATA, then
// ~/.cache/qkov/data ($XDG_CACHE_HOME/qkov/data where that is set), then
// ../shared/data (the folder a checkout's tests have beside it).
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

// The first folder of the search path that holds every one of `files`
// (paths relative to a data folder, e.g. "hatexplain/test.jsonl").
std::optional<std::string> FindDataDir(const std::vector<std::string>& files);

}  // namespace qkov

#endif  // QKOV_COMMON_DATA_DIRS_H_
