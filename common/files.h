// Reading the small files named by flags (tokens, certificates), with the
// error naming the flag.
#ifndef QKOV_COMMON_FILES_H_
#define QKOV_COMMON_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace qkov {

inline constexpr int64_t kMaxFlagFileBytes = 1 << 20;

// The whole file. Errors name the flag and the path: NOT_FOUND when it does
// not exist, PERMISSION_DENIED when it cannot be read, INVALID_ARGUMENT for
// a directory or a file over kMaxFlagFileBytes.
absl::StatusOr<std::string> ReadFlagFile(const std::string& flag,
                                         const std::string& path);

}  // namespace qkov

#endif  // QKOV_COMMON_FILES_H_
