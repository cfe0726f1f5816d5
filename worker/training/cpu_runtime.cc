#include "worker/training/cpu_runtime.h"

#include <torch/torch.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

// OpenBLAS's own controls, resolved at run time from the loaded BLAS (weak:
// null where LibTorch was built against another BLAS, such as MKL).
extern "C" {
void openblas_set_num_threads(int n) __attribute__((weak));
int openblas_get_num_threads() __attribute__((weak));
char* openblas_get_config() __attribute__((weak));
}

namespace qkov::training {

int SetTrainingThreads(int n) {
  torch::set_num_threads(n);
  if (openblas_set_num_threads == nullptr ||
      openblas_get_num_threads == nullptr) {
    return -1;
  }
  openblas_set_num_threads(n);
  return openblas_get_num_threads();
}

std::string BlasDescription() {
  for (absl::string_view line : absl::StrSplit(at::show_config(), '\n')) {
    for (absl::string_view part : absl::StrSplit(line, ',')) {
      part = absl::StripAsciiWhitespace(part);
      if (absl::StartsWith(part, "BLAS_INFO="))
        return std::string(part.substr(10));
    }
  }
  if (openblas_get_config != nullptr) {
    const char* config = openblas_get_config();
    if (config != nullptr)
      return std::string(absl::StripAsciiWhitespace(config));
  }
  return "unknown";
}

}  // namespace qkov::training
