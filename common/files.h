// Reading the small files named by flags (tokens, certificates), with the
// error naming the flag.
#ifndef QKOV_COMMON_FILES_H_
#define QKOV_COMMON_FILES_H_

#include <string>

#include "absl/status/statusor.h"

namespace qkov {

// The whole file; NOT_FOUND "FLAG: cannot read PATH" when it cannot be read.
absl::StatusOr<std::string> ReadFlagFile(const std::string& flag,
                                         const std::string& path);

}  // namespace qkov

#endif  // QKOV_COMMON_FILES_H_
