// Schedules and the per-trial optimizers of the batched engine, over the
// rate groups of config.h (ParamGroup).
#ifndef QKOV_WORKER_TRAINING_OPTIMIZER_H_
#define QKOV_WORKER_TRAINING_OPTIMIZER_H_

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/training/config.h"

namespace qkov::training {

// Learning rates in effect at `step` (0-based) for the QK and OV groups.
struct LearningRates {
  double qk;
  double ov;
};
LearningRates ScheduledLearningRates(const TrialOptions& options, int64_t step);

// The cosine_warmup schedule's factor at `step` (0-based) of `total`: linear
// from 1/warmup to 1 over the first `warmup` steps, then a cosine to 0.
double CosineWarmupFactor(int64_t step, int64_t total, int64_t warmup);

// torch.optim.lr_scheduler.OneCycleLR's factor (of the peak rate) at `step`
// (0-based) of `total`, with pct_start = warmup / total and its defaults
// (cosine annealing, div_factor 25, final_div_factor 1e4): from 1/25 up to 1
// at step warmup - 1, then down to 1/250,000 at step total - 1. `beta1`
// (may be null) receives the cycled momentum: 0.95 down to 0.85, then back.
double OneCycleFactor(int64_t step, int64_t total, int64_t warmup,
                      double* beta1);

// One step's rate per group and trial: rates[group][trial].
using GroupRates = std::array<std::vector<double>, kNumParamGroups>;

// SGD (momentum, weight decay) and AdamW exactly as torch.optim defines them,
// applied per trial to parameters stacked along a leading trial dimension
// [T, ...]: trial t's slice moves by its own rates and its own Adam step
// count, whatever its batch-mates do. optimizer_test checks both kernels
// against torch::optim.
class StackedOptimizer {
 public:
  // How a step is computed. kAuto: one fused pass over each trial's slice
  // for contiguous float or double tensors on the CPU, tensor ops
  // otherwise (CUDA); kTensorOps: always tensor ops.
  enum class Kernel { kAuto, kTensorOps };

  // `params[i]` ([T, ...]) belongs to `groups[i]`. Every group decays by
  // options.weight_decay unless set_weight_decay says otherwise.
  StackedOptimizer(const OptimizerOptions& options,
                   std::vector<torch::Tensor> params,
                   std::vector<ParamGroup> groups,
                   Kernel kernel = Kernel::kAuto);

  // Weight decay per group (torch.optim's per-param-group weight_decay).
  void set_weight_decay(const std::array<double, kNumParamGroups>& decay) {
    weight_decay_ = decay;
  }

  // One step from the gradients `grads[i]` of params[i] (same shapes); an
  // undefined grads[i] leaves params[i] and its buffers as they are, as
  // torch.optim skips a parameter without a gradient. `live[t]` false: trial t
  // has ended; its rates must be 0, and its slices and Adam step count stay
  // (the fused kernel also leaves its buffers).
  void Step(const GroupRates& rates, const std::vector<bool>& live,
            const std::vector<torch::Tensor>& grads);
  // Step from the parameters' .grad().
  void Step(const GroupRates& rates, const std::vector<bool>& live);

  // Trial t's buffers and step count, under `names[i]` for params[i]
  // ("buf1/NAME", "buf2/NAME", "adam_steps").
  void Save(int64_t t, const std::vector<std::string>& names,
            torch::serialize::OutputArchive& archive) const;
  // Throws c10::Error for a missing key (the checkpoint loader's guard).
  void Load(int64_t t, const std::vector<std::string>& names,
            torch::serialize::InputArchive& archive);

 private:
  void FusedStep(const GroupRates& rates, const std::vector<bool>& live,
                 const std::vector<torch::Tensor>& grads);
  void TensorStep(const GroupRates& rates, const std::vector<bool>& live,
                  const std::vector<torch::Tensor>& grads);

  OptimizerOptions options_;
  Kernel kernel_;
  std::vector<torch::Tensor> params_;
  std::vector<ParamGroup> groups_;
  std::vector<torch::Tensor> buf1_, buf2_;  // momentum | Adam m, v
  std::vector<int64_t> adam_steps_;         // per trial
  std::array<double, kNumParamGroups> weight_decay_;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_OPTIMIZER_H_
