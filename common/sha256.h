// SHA-256 (OpenSSL) as lower-case hex: config hashes, worker keys, and the
// checksums of data and vocabulary files.
#ifndef QKOV_COMMON_SHA256_H_
#define QKOV_COMMON_SHA256_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace qkov {

std::string Sha256Hex(absl::string_view data);

// The sha256 of the file at `path`, read in blocks. NOT_FOUND when it does
// not open, DATA_LOSS when a read fails.
absl::StatusOr<std::string> Sha256HexOfFile(const std::string& path);

}  // namespace qkov

#endif  // QKOV_COMMON_SHA256_H_
