// The error form every data and tokenizer file reader in worker/training
// uses: INVALID_ARGUMENT "PATH:LINE: what is wrong" ("PATH: ..." when no
// line applies), and JSON parsing that reports the line of a syntax error
// instead of throwing.
#ifndef QKOV_WORKER_TASKS_TEXT_JSON_ERRORS_H_
#define QKOV_WORKER_TASKS_TEXT_JSON_ERRORS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qkov::training::text {

// INVALID_ARGUMENT "PATH:LINE: WHAT", or "PATH: WHAT" when line <= 0.
absl::Status FileError(const std::string& path, int64_t line,
                       const std::string& what);

// The JSON value of `text` (one line, or a whole file), or "PATH:LINE: not
// valid JSON (...)". `first_line` is the line `text` starts on.
absl::StatusOr<nlohmann::json> ParseJsonAt(const std::string& text,
                                           const std::string& path,
                                           int64_t first_line);

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_JSON_ERRORS_H_
