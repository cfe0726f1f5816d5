// Test helpers for synthetic runs compared across engines and devices: an
// observer that hands a trial back before a given step (so its checkpoint
// holds the weights at that step) and records every report, the stacked
// weights read back from such a checkpoint, and the check that a trial
// trains alone as it does in a batch of 32.
#ifndef QKOV_TESTS_UNIT_TRAINING_SYNTHETIC_SYNTHETIC_RUNS_H_
#define QKOV_TESTS_UNIT_TRAINING_SYNTHETIC_SYNTHETIC_RUNS_H_

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "worker/tasks/synthetic/model.h"
#include "worker/tasks/synthetic/synthetic_trainer.h"
#include "worker/training/trial.h"

namespace qkov::training::testing {

// Hands the trial back before step `at` (never, for a negative `at`) and
// records every report.
class HandBackAt : public TrainingObserver {
 public:
  explicit HandBackAt(int64_t at) : at_(at) {}
  StopRequest PollStop() override {
    return polls_++ == at_ ? StopRequest::kHandBack : StopRequest::kNone;
  }
  bool OnReport(int64_t, const std::vector<MetricPoint>& points) override {
    for (const auto& p : points) this->points.push_back(p);
    return true;
  }
  std::vector<MetricPoint> points;

 private:
  int64_t at_;
  int64_t polls_ = 0;
};

// The weights of parameterization `p` in a synthetic trial's checkpoint, on
// the CPU.
inline std::map<std::string, torch::Tensor> CheckpointParams(
    const std::string& bytes, Parameterization p) {
  torch::serialize::InputArchive archive;
  std::istringstream in(bytes);
  archive.load_from(in, torch::Device(torch::kCPU));
  std::map<std::string, torch::Tensor> out;
  for (const std::string& name : StackedParamNames(p))
    archive.read("param/" + name, out[name]);
  return out;
}

// A synthetic run's weights at its hand-back and what it reported before.
struct RunResult {
  std::map<std::string, torch::Tensor> params;
  std::vector<MetricPoint> points;
};

// The length of the runs compared across engines and devices: ratio 4, a
// 400-step budget (handed back at 200), a report every 50 steps over a
// 50-step window, no convergence stop.
inline void SetRunLength(TrialOptions& o) {
  o.lr_ratio = 4;
  o.max_steps = 400;
  o.report_every = 50;
  o.loss_window = 50;
  o.target_loss = -1;
  o.eval.num_examples = 64;
}

// Trains 32 trials of parameterization `p` (own seed, ratio and length) in
// one batch on `device`, then every `every`-th of them alone, and expects
// each alone to give bit for bit what it gave in the batch: its results and
// every reported value.
inline void ExpectAloneAsInBatchOf32(Parameterization p,
                                     const torch::Device& device,
                                     size_t every) {
  std::vector<TrialOptions> batch;
  for (int i = 0; i < 32; ++i) {
    TrialOptions o;
    o.parameterization = p;
    o.init.qk = InitKind::kDefaultLinear;
    o.init.ov = InitKind::kDefaultLinear;
    o.optimizer.momentum = 0.9;
    o.eta_ov = 0.1;
    o.seed = 300 + i;
    o.lr_ratio = 1 + i;
    o.max_steps = 40 + 2 * i;
    o.report_every = 20;
    o.loss_window = 20;
    o.target_loss = -1;
    o.eval.num_examples = 64;
    batch.push_back(o);
  }
  std::vector<HandBackAt> together(batch.size(), HandBackAt(-1));
  std::vector<TrainingObserver*> ptrs;
  for (auto& r : together) ptrs.push_back(&r);
  auto out = TrainSynthetic(batch, ptrs, device,
                            std::vector<std::string>(batch.size()),
                            SyntheticEngine::kAnalytic);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < batch.size(); i += every) {
    HandBackAt alone(-1);
    auto single = TrainSynthetic({batch[i]}, {&alone}, device, {""},
                                 SyntheticEngine::kAnalytic);
    ASSERT_TRUE(single.ok()) << single.status();
    EXPECT_EQ((*out)[i].results, (*single)[0].results) << i;
    ASSERT_EQ(together[i].points.size(), alone.points.size()) << i;
    ASSERT_FALSE(alone.points.empty());
    for (size_t k = 0; k < alone.points.size(); ++k) {
      EXPECT_EQ(std::memcmp(&together[i].points[k].value,
                            &alone.points[k].value, sizeof(double)),
                0)
          << ParameterizationName(p) << " trial " << i << " "
          << alone.points[k].name << " at " << alone.points[k].step;
    }
  }
}

}  // namespace qkov::training::testing

#endif  // QKOV_TESTS_UNIT_TRAINING_SYNTHETIC_SYNTHETIC_RUNS_H_
