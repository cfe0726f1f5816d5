// The CUDA path of worker/training, run where LibTorch sees a GPU and skipped
// elsewhere (bench/cuda_check.sh runs it on a GPU machine): the analytic
// engine trains on the GPU as it does on the CPU, within the tolerances it
// keeps against autograd; a trial alone and in a batch of 32 agree bit for
// bit there too; a text trial trains as on the CPU; and the worker reads the
// GPU's free memory from the driver.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cmath>

#include "tests/unit/tasks/synthetic/synthetic_runs.h"
#include "tests/unit/training/shared_data.h"
#include "worker/tasks/synthetic/synthetic_trainer.h"
#include "worker/training/device_memory.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

#define SKIP_WITHOUT_CUDA()                              \
  if (!torch::cuda::is_available()) {                    \
    GTEST_SKIP() << "LibTorch sees no CUDA device here"; \
  }

using testing::CheckpointParams;
using testing::HandBackAt;

using testing::RunResult;

// One trial on `device`, handed back at step 200.
RunResult TrainOn(const TrialOptions& o, const torch::Device& device) {
  HandBackAt observer(200);
  auto out = TrainSynthetic({o}, {&observer}, device, {""},
                            SyntheticEngine::kAnalytic);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].steps, 200);
  return {CheckpointParams((*out)[0].checkpoint, o.parameterization),
          observer.points};
}

// The tolerances analytic_gradients_test states for the analytic engine
// against autograd after 200 steps (SGD 1e-5, AdamW 5e-3 on parameters;
// 1e-5 and 1e-3 on reported values): the GPU sums its products in yet
// another order, and is held to the same.
TEST(CudaTest, AnalyticEngineTrainsOnTheGpuAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  for (Parameterization p :
       {Parameterization::kFafo, Parameterization::kFaco,
        Parameterization::kCafo, Parameterization::kCaco}) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
      TrialOptions o;
      o.parameterization = p;
      o.init.qk = InitKind::kDefaultLinear;
      o.init.ov = InitKind::kDefaultLinear;
      o.optimizer.kind = kind;
      o.optimizer.schedule = ScheduleKind::kCosineWarmup;
      o.optimizer.warmup_steps = 50;
      const bool adam = kind == OptimizerKind::kAdamW;
      o.optimizer.momentum = adam ? 0.0 : 0.9;
      o.optimizer.weight_decay = adam ? 0.05 : 0.01;
      o.eta_ov = adam ? 0.005 : 0.05;
      testing::SetRunLength(o);
      const std::string what =
          std::string(ParameterizationName(p)) + (adam ? " adamw" : " sgd");
      const RunResult gpu = TrainOn(o, torch::Device(torch::kCUDA, 0));
      const RunResult cpu = TrainOn(o, torch::kCPU);
      ASSERT_FALSE(cpu.params.empty()) << what;
      ASSERT_EQ(gpu.params.size(), cpu.params.size()) << what;
      for (const auto& [name, w] : cpu.params) {
        const double scale = std::max(1.0, w.abs().max().item<double>());
        const double gap =
            (gpu.params.at(name) - w).abs().max().item<double>() / scale;
        EXPECT_LT(gap, adam ? 5e-3 : 1e-5) << what << " " << name;
      }
      ASSERT_EQ(gpu.points.size(), cpu.points.size()) << what;
      for (size_t k = 0; k < cpu.points.size(); ++k) {
        const MetricPoint &x = gpu.points[k], &y = cpu.points[k];
        ASSERT_EQ(x.name, y.name);
        EXPECT_NEAR(x.value, y.value,
                    (adam ? 1e-3 : 1e-5) * (std::fabs(y.value) + 1e-2))
            << what << " " << y.name << " at " << y.step;
      }
    }
  }
}

// A trial's numbers do not depend on its batch-mates, on the GPU too.
TEST(CudaTest, TrialAloneAndInBatchOf32AreBitIdenticalOnTheGpu) {
  SKIP_WITHOUT_CUDA();
  for (Parameterization p : {Parameterization::kFafo, Parameterization::kCaco})
    testing::ExpectAloneAsInBatchOf32(p, torch::Device(torch::kCUDA, 0),
                                      /*every=*/7);
}

// The HateXplain block for 16 steps on 512 shipped posts, on each device.
TEST(CudaTest, TextTrialTrainsOnTheGpuAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  TrialOptions o = testing::HateXplainOptions("test.jsonl", "validation.jsonl");
  o.lr_ratio = 30;
  o.eta_ov = 5e-5;
  o.report_every = 4;
  o.max_steps = 16;
  o.eval.num_examples = 128;
  o.MutableTaskOptions<text::TextTaskOptions>().train.max_examples = 512;
  o.MutableTaskOptions<text::TextTaskOptions>().epochs = 1;
  auto cpu = RunTrial(o, nullptr, torch::kCPU);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto gpu = RunTrial(o, nullptr, torch::Device(torch::kCUDA, 0));
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  for (const char* name :
       {"test_accuracy", "test_rationale_mass", "test_rationale_mass_rollout",
        "test_comprehensiveness", "test_sufficiency"}) {
    const double want = cpu->results.at(name);
    EXPECT_NEAR(gpu->results.at(name), want, 1e-3 * (std::fabs(want) + 0.01))
        << name;
  }
}

// The driver's figure falls by what LibTorch allocates.
TEST(CudaTest, AvailableMemoryComesFromTheDriver) {
  SKIP_WITHOUT_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  absl::StatusOr<int64_t> before = AvailableMemoryBytes(gpu);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(*before, int64_t{1} << 30);
  const int64_t gib = int64_t{1} << 30;
  torch::Tensor block = torch::empty(
      {gib / 4}, torch::TensorOptions().dtype(torch::kFloat).device(gpu));
  absl::StatusOr<int64_t> after = AvailableMemoryBytes(gpu);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(*before - *after, gib * 9 / 10)
      << "before " << *before << ", after " << *after;
}

}  // namespace
}  // namespace qkov::training
