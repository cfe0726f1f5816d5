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

namespace qkov::training {

absl::StatusOr<torch::Device> ParseDevice(const std::string& name,
                                          const std::string& flag) {
  absl::StatusOr<torch::Device> device = CatchTorchErrors(
      [&]() -> absl::StatusOr<torch::Device> { return torch::Device(name); },
      flag);
  if (!device.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", name, "' is not cpu or cuda[:N]"));
  }
  return device;
}

}  // namespace qkov::training
