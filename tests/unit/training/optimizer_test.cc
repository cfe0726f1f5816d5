// StackedOptimizer against torch::optim: each trial's slice of a stacked
// parameter moves exactly as torch.optim's SGD or AdamW moves the same
// parameter alone, at that trial's rate for the parameter's group; with the
// fused CPU kernel and with tensor ops (the CUDA kernel) alike.
#include "worker/training/optimizer.h"

#include <gtest/gtest.h>

#include <array>

namespace qkov::training {
namespace {

// Two trials, two parameters (one QK, one OV), rates differing per trial
// and per group, gradients from a fixed quadratic loss. `decay`, if given,
// is the weight decay per group (set_weight_decay) in place of
// opt.weight_decay.
void CompareWithTorchOptim(
    const OptimizerOptions& opt, StackedOptimizer::Kernel kernel,
    const std::array<double, kNumParamGroups>* decay = nullptr) {
  torch::manual_seed(7);
  const int64_t trials = 2, steps = 25;
  const std::vector<torch::Tensor> init = {torch::randn({trials, 3, 4}),
                                           torch::randn({trials, 4, 4})};
  const std::vector<ParamGroup> groups = {ParamGroup::kQk, ParamGroup::kOv};
  const std::vector<torch::Tensor> target = {torch::randn({3, 4}),
                                             torch::randn({4, 4})};
  GroupRates rates;
  rates[static_cast<int>(ParamGroup::kQk)] = {0.05, 0.2};
  rates[static_cast<int>(ParamGroup::kOv)] = {0.01, 0.03};
  rates[static_cast<int>(ParamGroup::kMlp)] = {0, 0};

  std::vector<torch::Tensor> stacked;
  for (const auto& t : init) stacked.push_back(t.clone().requires_grad_(true));
  StackedOptimizer ours(opt, stacked, groups, kernel);
  if (decay != nullptr) ours.set_weight_decay(*decay);
  auto decay_of = [&](ParamGroup g) {
    return decay != nullptr ? (*decay)[static_cast<int>(g)] : opt.weight_decay;
  };
  for (int64_t step = 0; step < steps; ++step) {
    for (auto& p : stacked) p.mutable_grad() = torch::Tensor();
    torch::Tensor loss = torch::zeros({});
    for (size_t i = 0; i < stacked.size(); ++i)
      loss = loss + (stacked[i] - target[i]).pow(2).sum();
    loss.backward();
    ours.Step(rates, {true, true});
  }

  for (int64_t t = 0; t < trials; ++t) {
    std::vector<torch::Tensor> alone;
    std::vector<torch::optim::OptimizerParamGroup> torch_groups;
    for (size_t i = 0; i < init.size(); ++i) {
      alone.push_back(init[i][t].clone().requires_grad_(true));
      const double lr = rates[static_cast<int>(groups[i])][t];
      if (opt.kind == OptimizerKind::kSgd) {
        auto o = std::make_unique<torch::optim::SGDOptions>(lr);
        o->momentum(opt.momentum).weight_decay(decay_of(groups[i]));
        torch_groups.emplace_back(std::vector<torch::Tensor>{alone[i]},
                                  std::move(o));
      } else {
        auto o = std::make_unique<torch::optim::AdamWOptions>(lr);
        o->betas({opt.adam_beta1, opt.adam_beta2})
            .eps(opt.adam_eps)
            .weight_decay(decay_of(groups[i]));
        torch_groups.emplace_back(std::vector<torch::Tensor>{alone[i]},
                                  std::move(o));
      }
    }
    std::unique_ptr<torch::optim::Optimizer> reference;
    if (opt.kind == OptimizerKind::kSgd) {
      reference = std::make_unique<torch::optim::SGD>(
          std::move(torch_groups), torch::optim::SGDOptions(1));
    } else {
      reference = std::make_unique<torch::optim::AdamW>(
          std::move(torch_groups), torch::optim::AdamWOptions(1));
    }
    for (int64_t step = 0; step < steps; ++step) {
      reference->zero_grad();
      torch::Tensor loss = torch::zeros({});
      for (size_t i = 0; i < alone.size(); ++i)
        loss = loss + (alone[i] - target[i]).pow(2).sum();
      loss.backward();
      reference->step();
    }
    for (size_t i = 0; i < alone.size(); ++i) {
      EXPECT_TRUE(torch::allclose(stacked[i][t].detach(), alone[i].detach(),
                                  1e-5, 1e-6))
          << "trial " << t << " param " << i << " kernel "
          << (kernel == StackedOptimizer::Kernel::kAuto ? "fused" : "tensor")
          << " group " << ParamGroupName(groups[i]);
    }
  }
}

TEST(OptimizerTest, SgdWithMomentumAndWeightDecayMatchesTorchOptim) {
  OptimizerOptions opt;
  opt.kind = OptimizerKind::kSgd;
  opt.momentum = 0.9;
  opt.weight_decay = 0.01;
  for (auto kernel : {StackedOptimizer::Kernel::kAuto,
                      StackedOptimizer::Kernel::kTensorOps}) {
    CompareWithTorchOptim(opt, kernel);
  }
}

TEST(OptimizerTest, PlainSgdMatchesTorchOptim) {
  OptimizerOptions opt;
  opt.kind = OptimizerKind::kSgd;
  for (auto kernel : {StackedOptimizer::Kernel::kAuto,
                      StackedOptimizer::Kernel::kTensorOps}) {
    CompareWithTorchOptim(opt, kernel);
  }
}

TEST(OptimizerTest, AdamWMatchesTorchOptim) {
  OptimizerOptions opt;
  opt.kind = OptimizerKind::kAdamW;
  opt.weight_decay = 0.05;
  for (auto kernel : {StackedOptimizer::Kernel::kAuto,
                      StackedOptimizer::Kernel::kTensorOps}) {
    CompareWithTorchOptim(opt, kernel);
  }
}

// Each group decays by its own weight decay, as torch.optim's param groups
// do (the text trainer's qk/ov/mlp_weight_decay).
TEST(OptimizerTest, WeightDecayPerGroupMatchesTorchOptimGroups) {
  const std::array<double, kNumParamGroups> decay = {0.1, 0.002, 0.5};
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    OptimizerOptions opt;
    opt.kind = kind;
    opt.momentum = kind == OptimizerKind::kSgd ? 0.9 : 0;
    opt.weight_decay = 0.03;  // overridden by every group
    for (auto kernel : {StackedOptimizer::Kernel::kAuto,
                        StackedOptimizer::Kernel::kTensorOps}) {
      CompareWithTorchOptim(opt, kernel, &decay);
    }
  }
}

// A parameter without a gradient is skipped, as torch.optim skips it: not
// decayed, its momentum not applied; the others step as usual.
TEST(OptimizerTest, AParameterWithoutGradientDoesNotMove) {
  for (auto kernel : {StackedOptimizer::Kernel::kAuto,
                      StackedOptimizer::Kernel::kTensorOps}) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
      OptimizerOptions opt;
      opt.kind = kind;
      opt.momentum = kind == OptimizerKind::kSgd ? 0.9 : 0;
      opt.weight_decay = 0.01;
      torch::Tensor a = torch::ones({1, 3}), b = torch::ones({1, 2});
      StackedOptimizer ours(opt, {a, b}, {ParamGroup::kQk, ParamGroup::kOv},
                            kernel);
      GroupRates rates;
      for (auto& r : rates) r = {0.1};
      ours.Step(rates, {true}, {torch::ones({1, 3}), torch::ones({1, 2})});
      const torch::Tensor b_after_one = b.clone();
      ours.Step(rates, {true}, {torch::ones({1, 3}), torch::Tensor()});
      EXPECT_TRUE(torch::equal(b, b_after_one))
          << ParamGroupName(ParamGroup::kOv);
      EXPECT_LT(a[0][0].item<float>(), b[0][0].item<float>());
    }
  }
}

// An ended trial (live false, rates 0) keeps its slice and its Adam step
// count while its batch-mate trains on.
TEST(OptimizerTest, AnEndedTrialDoesNotMove) {
  for (auto kernel : {StackedOptimizer::Kernel::kAuto,
                      StackedOptimizer::Kernel::kTensorOps}) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
      OptimizerOptions opt;
      opt.kind = kind;
      opt.momentum = kind == OptimizerKind::kSgd ? 0.9 : 0;
      opt.weight_decay = 0.01;
      torch::Tensor w = torch::ones({2, 3}).requires_grad_(true);
      StackedOptimizer ours(opt, {w}, {ParamGroup::kMlp}, kernel);
      GroupRates rates;
      for (auto& r : rates) r = {0.1, 0.0};
      for (int step = 0; step < 3; ++step) {
        w.mutable_grad() = torch::Tensor();
        w.sum().backward();
        ours.Step(rates, {true, false});
      }
      EXPECT_TRUE(torch::equal(w[1].detach(), torch::ones({3})));
      EXPECT_FALSE(torch::equal(w[0].detach(), torch::ones({3})));
    }
  }
}

}  // namespace
}  // namespace qkov::training

namespace qkov::training {
namespace {

// torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1, total_steps=10,
// pct_start=0.3) with AdamW, read from opt.param_groups[0] before each
// step (Debian's python3-torch 1.13): the rate and beta1 at steps 0-9.
TEST(ScheduleTest, OneCycleMatchesTorchOneCycleLr) {
  const double lr[10] = {
      0.040000000000000036,  0.52000000000000002, 1,
      0.95048463201347366,   0.81174565394976306, 0.61126202193628931,
      0.38874197806371075,   0.18825834605023697, 0.049519367986526286,
      3.9999999999999998e-06};
  const double beta1[10] = {0.94999999999999996, 0.89999999999999991,
                            0.84999999999999998, 0.85495155660487898,
                            0.86882550990706331, 0.88887395330218422,
                            0.91112604669781572, 0.93117449009293662,
                            0.94504844339512095, 0.94999999999999996};
  for (int step = 0; step < 10; ++step) {
    double b = 0;
    EXPECT_NEAR(OneCycleFactor(step, 10, 3, &b), lr[step], 1e-12) << step;
    EXPECT_NEAR(b, beta1[step], 1e-12) << step;
  }
  // The trial schedule: both rates follow it, the QK one lr_ratio times.
  TrialOptions o;
  o.optimizer.schedule = ScheduleKind::kOneCycle;
  o.max_steps = 10;
  o.optimizer.warmup_steps = 3;
  o.eta_ov = 0.5;
  o.lr_ratio = 20;
  const LearningRates r = ScheduledLearningRates(o, 4);
  EXPECT_NEAR(r.ov, 0.5 * lr[4], 1e-12);
  EXPECT_NEAR(r.qk, 10 * lr[4], 1e-12);
}

}  // namespace
}  // namespace qkov::training
