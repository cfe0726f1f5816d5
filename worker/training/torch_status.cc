#include "worker/training/torch_status.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace qkov::training {

absl::Status TorchErrorStatus(const c10::Error& e) {
  const std::string what = e.what_without_backtrace();
  if (absl::StrContains(what, "can't allocate memory") ||
      absl::StrContains(what, "out of memory") ||
      absl::StrContains(what, "Out of memory")) {
    return absl::ResourceExhaustedError(absl::StrCat("libtorch: ", what));
  }
  return absl::InternalError(absl::StrCat("libtorch: ", what));
}

}  // namespace qkov::training
