// SetTrainingThreads reaches both pools: LibTorch's intra-op threads and,
// where LibTorch's BLAS is OpenBLAS (Debian's libtorch-dev), OpenBLAS's own;
// BlasDescription names the BLAS.
#include "worker/training/cpu_runtime.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

// Non-null when this process's BLAS is OpenBLAS.
extern "C" int openblas_get_num_threads() __attribute__((weak));

namespace qkov::training {
namespace {

TEST(CpuRuntimeTest, SetsLibTorchAndOpenBlasThreads) {
  for (int n : {2, 1}) {
    const int blas = SetTrainingThreads(n);
    EXPECT_EQ(torch::get_num_threads(), n);
    if (openblas_get_num_threads == nullptr) {
      EXPECT_EQ(blas, -1);
      continue;
    }
    EXPECT_EQ(openblas_get_num_threads(), n);
    EXPECT_EQ(blas, n);
  }
}

TEST(CpuRuntimeTest, DescribesTheBlas) {
  const std::string blas = BlasDescription();
  EXPECT_NE(blas, "");
  const bool build_says =
      at::show_config().find("BLAS_INFO=") != std::string::npos;
  if (!build_says && openblas_get_num_threads != nullptr) {
    EXPECT_EQ(blas.rfind("OpenBLAS ", 0), 0u) << blas;
  }
}

}  // namespace
}  // namespace qkov::training
