// SetTrainingThreads reaches both pools: LibTorch's intra-op threads and,
// where LibTorch's BLAS is OpenBLAS (Debian's libtorch-dev), OpenBLAS's own;
// BlasDescription names the BLAS; SetFlushDenormal flushes subnormal floats
// on the training thread and in BLAS products split over helper threads.
#include "worker/training/cpu_runtime.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cfloat>
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

// x * y computed at run time (volatile keeps the compiler from folding it).
float Multiply(float x, float y) {
  volatile float a = x, b = y;
  return a * b;
}

TEST(CpuRuntimeTest, FlushDenormalOnTheCallingThread) {
  if (!SetFlushDenormal(false)) GTEST_SKIP() << "no flush-to-zero mode";
  EXPECT_FALSE(FlushDenormalActive());
  const float subnormal = Multiply(1e-20f, 1e-20f);  // 1e-40 < FLT_MIN
  EXPECT_GT(subnormal, 0.0f);
  EXPECT_LT(subnormal, FLT_MIN);

  const float normal = Multiply(2e-19f, 1e-19f);  // 2e-38 > FLT_MIN

  ASSERT_TRUE(SetFlushDenormal(true));
  EXPECT_TRUE(FlushDenormalActive());
  EXPECT_EQ(Multiply(1e-20f, 1e-20f), 0.0f);    // result flushed
  EXPECT_EQ(Multiply(subnormal, 1e30f), 0.0f);  // operand read as 0
  EXPECT_EQ(Multiply(2e-19f, 1e-19f), normal);  // normal: unchanged

  ASSERT_TRUE(SetFlushDenormal(false));
  EXPECT_FALSE(FlushDenormalActive());
  EXPECT_GT(Multiply(1e-20f, 1e-20f), 0.0f);
}

// A product large enough that the BLAS splits it over two threads, whose
// every entry is subnormal (64 terms of 1e-40): all zero under the mode,
// none zero without it.
TEST(CpuRuntimeTest, FlushDenormalReachesTheBlasAndIntraOpThreads) {
  if (!SetFlushDenormal(false)) GTEST_SKIP() << "no flush-to-zero mode";
  SetTrainingThreads(2);
  const torch::Tensor a = torch::full({512, 64}, 1e-20f);
  const torch::Tensor b = torch::full({64, 512}, 1e-20f);
  // Intra-op threads started before the mode is set (a parallel sum).
  EXPECT_GT(torch::full({1 << 20}, 1.0f).sum().item<float>(), 0.0f);
  const torch::Tensor gradual = torch::mm(a, b);
  EXPECT_EQ(gradual.eq(0).sum().item<int64_t>(), 0);
  EXPECT_LT(gradual.max().item<float>(), FLT_MIN);

  ASSERT_TRUE(SetFlushDenormal(true));
  EXPECT_EQ(torch::mm(a, b).ne(0).sum().item<int64_t>(), 0);
  // An elementwise op over LibTorch's intra-op threads.
  const torch::Tensor x = torch::full({1 << 20}, 1e-20f);
  EXPECT_EQ(torch::mul(x, x).ne(0).sum().item<int64_t>(), 0);

  ASSERT_TRUE(SetFlushDenormal(false));
  EXPECT_EQ(torch::mm(a, b).eq(0).sum().item<int64_t>(), 0);
  SetTrainingThreads(1);
}

}  // namespace
}  // namespace qkov::training
