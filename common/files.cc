#include "common/files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace qkov {

absl::StatusOr<std::string> ReadFlagFile(const std::string& flag,
                                         const std::string& path) {
  if (path.empty())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": empty path"));
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    const std::string why = absl::StrCat(flag, ": cannot read ", path, " (",
                                         std::strerror(err), ")");
    return err == ENOENT || err == ENOTDIR ? absl::NotFoundError(why)
                                           : absl::PermissionDeniedError(why);
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is a directory, not a file"));
  }
  if (st.st_size > kMaxFlagFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is ", st.st_size,
                     " bytes; the limit is ", kMaxFlagFileBytes));
  }
  std::ifstream in(path);
  if (!in) {
    return absl::PermissionDeniedError(absl::StrCat(
        flag, ": cannot read ", path, " (", std::strerror(errno), ")"));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace qkov
