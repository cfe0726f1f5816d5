#include "common/files.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace qkov {

absl::StatusOr<std::string> ReadFlagFile(const std::string& flag,
                                         const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace qkov
