// LibTorch's exceptions as a Status: a failed allocation is
// RESOURCE_EXHAUSTED (the worker fails such a trial permanently), unless it
// happened while reading an input, whose sizes it took.
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

// LibTorch's archive reader reserves a length read from the checkpoint
// before reading it (checkpoint_fuzzer: 4 GB asked for by a 600-byte
// input). Such a failure while reading an input blames the input, not the
// machine: INVALID_ARGUMENT, so the trial is not failed for good as a trial
// too big for its worker would be.
TEST(TorchStatusTest, AllocationFailuresWhileReadingAnInputBlameTheInput) {
  const absl::Status reading =
      CatchTorchErrors([]() -> absl::Status { throw std::bad_alloc(); },
                       "checkpoint does not parse");
  EXPECT_EQ(reading.code(), absl::StatusCode::kInvalidArgument) << reading;
  EXPECT_EQ(reading.message().rfind("checkpoint does not parse: ", 0), 0u)
      << reading;
  const absl::Status too_long = CatchTorchErrors(
      []() -> absl::Status { throw std::length_error("basic_string"); },
      "checkpoint does not parse");
  EXPECT_EQ(too_long.code(), absl::StatusCode::kInvalidArgument) << too_long;
  const absl::Status training =
      CatchTorchErrors([]() -> absl::Status { throw std::bad_alloc(); });
  EXPECT_EQ(training.code(), absl::StatusCode::kResourceExhausted) << training;
}

}  // namespace
}  // namespace qkov::training
