// LibTorch's exceptions as a Status: a failed allocation is
// RESOURCE_EXHAUSTED (the worker fails such a trial permanently).
#include "worker/training/torch_status.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace qkov::training {
namespace {

TEST(TorchStatusTest, AFailedAllocationIsResourceExhausted) {
  absl::Status s;
  try {
    // 4.5 PB: past any machine's address space, so it fails under every
    // overcommit setting, without touching memory.
    torch::Tensor t = torch::empty({int64_t{1} << 50}, torch::kFloat32);
    FAIL() << "allocated " << t.numel() << " floats";
  } catch (const c10::Error& e) {
    s = TorchErrorStatus(e);
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("libtorch: "), std::string::npos) << s;
}

TEST(TorchStatusTest, OtherErrorsAreInternal) {
  absl::Status s;
  try {
    torch::Tensor a = torch::zeros({2, 3});
    torch::Tensor b = torch::zeros({4, 5});
    (void)torch::matmul(a, b);
  } catch (const c10::Error& e) {
    s = TorchErrorStatus(e);
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
}

}  // namespace
}  // namespace qkov::training
