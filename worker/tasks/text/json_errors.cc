#include "worker/tasks/text/json_errors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace qkov::training::text {

absl::Status FileError(const std::string& path, int64_t line,
                       const std::string& what) {
  return absl::InvalidArgumentError(
      line > 0 ? absl::StrCat(path, ":", line, ": ", what)
               : absl::StrCat(path, ": ", what));
}

absl::StatusOr<nlohmann::json> ParseJsonAt(const std::string& text,
                                           const std::string& path,
                                           int64_t first_line) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const size_t at = std::min<size_t>(e.byte, text.size());
    const int64_t line =
        first_line + std::count(text.begin(), text.begin() + at, '\n');
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5:
    // syntax error ..." -> the part after the position.
    const size_t colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return FileError(path, line, absl::StrCat("not valid JSON (", what, ")"));
  } catch (const nlohmann::json::exception& e) {
    // A number past double's range ("2e557") is out_of_range 406, thrown
    // without a position.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return FileError(path, 0, absl::StrCat("not valid JSON (", what, ")"));
  }
}

}  // namespace qkov::training::text
