#include "common/data_dirs.h"

#include <sys/stat.h>

#include <cstdlib>

namespace qkov {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string CacheDir() {
  if (const std::string xdg = Env("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/qkov/data";
  if (const std::string home = Env("HOME"); !home.empty())
    return home + "/.cache/qkov/data";
  return "";
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<std::string> DataSearchPath() {
  std::vector<std::string> path;
  if (const std::string d = Env("QKOV_DATA"); !d.empty()) path.push_back(d);
  if (const std::string d = CacheDir(); !d.empty()) path.push_back(d);
  path.push_back("../shared/data");
  return path;
}

std::string DefaultDataDir() {
  if (const std::string d = Env("QKOV_DATA"); !d.empty()) return d;
  return CacheDir();
}

std::string ResolveDataPath(const std::string& path) {
  constexpr size_t kPrefix = sizeof(kShippedDataPrefix) - 1;
  if (path.compare(0, kPrefix, kShippedDataPrefix) != 0) return path;
  const std::string inside = path.substr(kPrefix);
  for (const std::string& dir : DataSearchPath()) {
    const std::string candidate = dir + "/" + inside;
    if (!IsFile(candidate)) continue;
    if (!candidate.empty() && candidate[0] == '/') return candidate;
    char* real = realpath(candidate.c_str(), nullptr);
    if (real == nullptr) return candidate;
    std::string absolute(real);
    std::free(real);
    return absolute;
  }
  return path;
}

std::optional<std::string> FindDataDir(const std::vector<std::string>& files) {
  for (const std::string& dir : DataSearchPath()) {
    bool all = true;
    for (const std::string& f : files) all = all && IsFile(dir + "/" + f);
    if (all) return dir;
  }
  return std::nullopt;
}

}  // namespace qkov
