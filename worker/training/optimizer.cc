#include "worker/training/optimizer.h"

#include <algorithm>
#include <cmath>

namespace qkov::training {
namespace {

constexpr double kPi = 3.14159265358979323846;

// values [T] as a tensor shaped to broadcast over `like` [T, ...].
torch::Tensor PerTrial(const std::vector<double>& values,
                       const torch::Tensor& like) {
  std::vector<int64_t> shape(like.dim(), 1);
  shape[0] = static_cast<int64_t>(values.size());
  return torch::tensor(values, torch::kFloat64)
      .to(like.device())
      .to(like.dtype())
      .view(shape);
}

}  // namespace

const char* ParamGroupName(ParamGroup group) {
  switch (group) {
    case ParamGroup::kQk:
      return "qk";
    case ParamGroup::kOv:
      return "ov";
    case ParamGroup::kMlp:
      return "mlp";
  }
  return "?";
}

double CosineWarmupFactor(int64_t step, int64_t total, int64_t warmup) {
  if (step < warmup)
    return static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double span = std::max<int64_t>(1, total - warmup);
  return 0.5 *
         (1.0 + std::cos(kPi * static_cast<double>(step - warmup) / span));
}

double OneCycleFactor(int64_t step, int64_t total, int64_t warmup,
                      double* beta1) {
  constexpr double kInitial = 1.0 / 25, kMin = kInitial / 1e4;
  constexpr double kMaxMomentum = 0.95, kBaseMomentum = 0.85;
  auto anneal = [](double from, double to, double pct) {
    return to + (from - to) / 2.0 * (std::cos(kPi * pct) + 1.0);
  };
  const double s = static_cast<double>(step);
  const double end1 = static_cast<double>(warmup) - 1.0;
  const double end2 = static_cast<double>(total) - 1.0;
  double factor, momentum;
  if (s <= end1) {
    const double pct = end1 > 0 ? s / end1 : 1.0;
    factor = anneal(kInitial, 1.0, pct);
    momentum = anneal(kMaxMomentum, kBaseMomentum, pct);
  } else {
    const double pct = end2 > end1 ? (s - end1) / (end2 - end1) : 1.0;
    factor = anneal(1.0, kMin, pct);
    momentum = anneal(kBaseMomentum, kMaxMomentum, pct);
  }
  if (beta1 != nullptr) *beta1 = momentum;
  return factor;
}

LearningRates ScheduledLearningRates(const TrialOptions& o, int64_t step) {
  const double eta_ov = o.eta_ov;
  switch (o.optimizer.schedule) {
    case ScheduleKind::kConstant:
      return {eta_ov * o.lr_ratio, eta_ov};
    case ScheduleKind::kCosineWarmup: {
      const double m =
          CosineWarmupFactor(step, o.max_steps, o.optimizer.warmup_steps);
      return {eta_ov * o.lr_ratio * m, eta_ov * m};
    }
    case ScheduleKind::kQkRamp: {
      // eta_QK(step) = eta_OV * (1 + (R - 1) * step / max_steps).
      const double frac =
          static_cast<double>(step) / static_cast<double>(o.max_steps);
      return {eta_ov * (1.0 + (o.lr_ratio - 1.0) * frac), eta_ov};
    }
    case ScheduleKind::kOneCycle: {
      const double m =
          OneCycleFactor(step, o.max_steps, o.optimizer.warmup_steps, nullptr);
      return {eta_ov * o.lr_ratio * m, eta_ov * m};
    }
  }
  return {eta_ov * o.lr_ratio, eta_ov};
}

StackedOptimizer::StackedOptimizer(const OptimizerOptions& options,
                                   std::vector<torch::Tensor> params,
                                   std::vector<ParamGroup> groups,
                                   Kernel kernel)
    : options_(options),
      kernel_(kernel),
      params_(std::move(params)),
      groups_(std::move(groups)),
      adam_steps_(params_.empty() ? 0 : params_[0].size(0), 0) {
  weight_decay_.fill(options_.weight_decay);
  const bool adam = options_.kind == OptimizerKind::kAdamW;
  const bool momentum = !adam && options_.momentum > 0;
  for (const torch::Tensor& p : params_) {
    buf1_.push_back(adam || momentum ? torch::zeros_like(p).detach()
                                     : torch::Tensor());
    buf2_.push_back(adam ? torch::zeros_like(p).detach() : torch::Tensor());
  }
}

void StackedOptimizer::Step(const GroupRates& rates,
                            const std::vector<bool>& live) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& w : params_) grads.push_back(w.grad());
  Step(rates, live, grads);
}

void StackedOptimizer::Step(const GroupRates& rates,
                            const std::vector<bool>& live,
                            const std::vector<torch::Tensor>& grads) {
  torch::NoGradGuard no_grad;
  if (options_.kind == OptimizerKind::kAdamW) {
    for (size_t t = 0; t < adam_steps_.size(); ++t) {
      if (live[t]) ++adam_steps_[t];
    }
  }
  bool fused = kernel_ == Kernel::kAuto;
  for (size_t i = 0; i < params_.size() && fused; ++i) {
    const torch::Tensor* operands[] = {&params_[i], &grads[i], &buf1_[i],
                                       &buf2_[i]};
    for (const torch::Tensor* x : operands) {
      if (!x->defined()) continue;
      fused = x->is_cpu() && x->is_contiguous() &&
              x->scalar_type() == params_[i].scalar_type() &&
              (x->scalar_type() == torch::kFloat ||
               x->scalar_type() == torch::kDouble);
      if (!fused) break;
    }
  }
  if (fused) {
    FusedStep(rates, live, grads);
  } else {
    TensorStep(rates, live, grads);
  }
}

namespace {

// One trial's slice of one parameter, in one pass: torch.optim.SGD
// (momentum, dampening 0, weight decay added to the gradient). One loop per
// case, over non-aliasing pointers, so each vectorises.
template <typename F>
void SgdSlice(F* __restrict w, const F* __restrict g, F* __restrict buf,
              int64_t count, F rate, F decay, F momentum) {
  if (buf == nullptr && decay == 0) {
    for (int64_t k = 0; k < count; ++k) w[k] -= rate * g[k];
  } else if (buf == nullptr) {
    for (int64_t k = 0; k < count; ++k) w[k] -= rate * (g[k] + decay * w[k]);
  } else {
    for (int64_t k = 0; k < count; ++k) {
      const F d = decay != 0 ? g[k] + decay * w[k] : g[k];
      buf[k] = buf[k] * momentum + d;
      w[k] -= rate * buf[k];
    }
  }
}

// torch.optim.AdamW on one slice; `step_size` = rate / (1 - beta1^k),
// `sqrt_c2` = sqrt(1 - beta2^k). 1 - beta is rounded from double, as
// torch's alpha is (1 - 0.999f in float is 1.3e-5 off).
template <typename F>
void AdamWSlice(F* __restrict w, const F* __restrict g, F* __restrict m,
                F* __restrict v, int64_t count, F shrink, double beta1_d,
                double beta2_d, F step_size, F sqrt_c2, F eps) {
  const F beta1 = static_cast<F>(beta1_d), beta2 = static_cast<F>(beta2_d);
  const F one_minus_beta1 = static_cast<F>(1 - beta1_d);
  const F one_minus_beta2 = static_cast<F>(1 - beta2_d);
  for (int64_t k = 0; k < count; ++k) {
    w[k] *= shrink;
    m[k] = m[k] * beta1 + one_minus_beta1 * g[k];
    v[k] = v[k] * beta2 + one_minus_beta2 * g[k] * g[k];
    w[k] -= step_size * m[k] / (std::sqrt(v[k]) / sqrt_c2 + eps);
  }
}

template <typename F>
F* Slice(const torch::Tensor& x, int64_t t, int64_t count) {
  return x.defined() ? x.data_ptr<F>() + t * count : nullptr;
}

template <typename F>
void FusedStepOf(const OptimizerOptions& opt,
                 const std::array<double, kNumParamGroups>& weight_decay,
                 const GroupRates& rates, const std::vector<bool>& live,
                 const std::vector<int64_t>& adam_steps,
                 const std::vector<torch::Tensor>& params,
                 const std::vector<ParamGroup>& groups,
                 const std::vector<torch::Tensor>& grads,
                 const std::vector<torch::Tensor>& buf1,
                 const std::vector<torch::Tensor>& buf2) {
  const bool adam = opt.kind == OptimizerKind::kAdamW;
  const int64_t trials = static_cast<int64_t>(live.size());
  for (int64_t t = 0; t < trials; ++t) {
    if (!live[t]) continue;
    const double k = static_cast<double>(std::max<int64_t>(adam_steps[t], 1));
    const double c1 = 1 - std::pow(opt.adam_beta1, k);
    const double c2 = 1 - std::pow(opt.adam_beta2, k);
    for (size_t i = 0; i < params.size(); ++i) {
      if (!grads[i].defined()) continue;
      const int64_t count = params[i].numel() / trials;
      const int group = static_cast<int>(groups[i]);
      const double rate = rates[group][t];
      const double decay = weight_decay[group];
      F* w = Slice<F>(params[i], t, count);
      const F* g = Slice<F>(grads[i], t, count);
      if (adam) {
        AdamWSlice<F>(
            w, g, Slice<F>(buf1[i], t, count), Slice<F>(buf2[i], t, count),
            count, static_cast<F>(1 - rate * decay), opt.adam_beta1,
            opt.adam_beta2, static_cast<F>(rate / c1),
            static_cast<F>(std::sqrt(c2)), static_cast<F>(opt.adam_eps));
      } else {
        SgdSlice<F>(w, g, Slice<F>(buf1[i], t, count), count,
                    static_cast<F>(rate), static_cast<F>(decay),
                    static_cast<F>(opt.momentum));
      }
    }
  }
}

}  // namespace

void StackedOptimizer::FusedStep(const GroupRates& rates,
                                 const std::vector<bool>& live,
                                 const std::vector<torch::Tensor>& grads) {
  if (params_.empty()) return;
  if (params_[0].scalar_type() == torch::kDouble) {
    FusedStepOf<double>(options_, weight_decay_, rates, live, adam_steps_,
                        params_, groups_, grads, buf1_, buf2_);
  } else {
    FusedStepOf<float>(options_, weight_decay_, rates, live, adam_steps_,
                       params_, groups_, grads, buf1_, buf2_);
  }
}

void StackedOptimizer::TensorStep(const GroupRates& rates,
                                  const std::vector<bool>& /*live*/,
                                  const std::vector<torch::Tensor>& grads) {
  const OptimizerOptions& opt = options_;
  const bool adam = opt.kind == OptimizerKind::kAdamW;
  std::array<torch::Tensor, kNumParamGroups> lr;
  std::vector<double> c1, c2;
  if (adam) {
    for (size_t t = 0; t < adam_steps_.size(); ++t) {
      const double k =
          static_cast<double>(std::max<int64_t>(adam_steps_[t], 1));
      c1.push_back(1 - std::pow(opt.adam_beta1, k));
      c2.push_back(1 - std::pow(opt.adam_beta2, k));
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!grads[i].defined()) continue;
    torch::Tensor& w = params_[i];
    const torch::Tensor& g = grads[i];
    const int group = static_cast<int>(groups_[i]);
    const double decay = weight_decay_[group];
    if (!lr[group].defined()) lr[group] = PerTrial(rates[group], w);
    const torch::Tensor& rate = lr[group];
    if (adam) {
      // torch.optim.AdamW, per trial.
      const torch::Tensor bc1 = PerTrial(c1, w), bc2 = PerTrial(c2, w);
      w.mul_(1 - rate * decay);
      buf1_[i].mul_(opt.adam_beta1).add_(g, 1 - opt.adam_beta1);
      buf2_[i].mul_(opt.adam_beta2).addcmul_(g, g, 1 - opt.adam_beta2);
      auto denom = (buf2_[i].sqrt() / bc2.sqrt()).add_(opt.adam_eps);
      w.sub_(rate / bc1 * buf1_[i] / denom);
    } else {
      // torch.optim.SGD, per trial.
      torch::Tensor d = decay != 0 ? g + decay * w : g;
      if (buf1_[i].defined()) {
        buf1_[i].mul_(opt.momentum).add_(d);
        d = buf1_[i];
      }
      w.sub_(rate * d);
    }
  }
}

void StackedOptimizer::Save(int64_t t, const std::vector<std::string>& names,
                            torch::serialize::OutputArchive& archive) const {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (buf1_[i].defined())
      archive.write("buf1/" + names[i], buf1_[i][t].cpu());
    if (buf2_[i].defined())
      archive.write("buf2/" + names[i], buf2_[i][t].cpu());
  }
  archive.write("adam_steps", c10::IValue(adam_steps_[t]));
}

void StackedOptimizer::Load(int64_t t, const std::vector<std::string>& names,
                            torch::serialize::InputArchive& archive) {
  torch::NoGradGuard no_grad;
  torch::Tensor x;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (buf1_[i].defined()) {
      archive.read("buf1/" + names[i], x);
      buf1_[i][t].copy_(x);
    }
    if (buf2_[i].defined()) {
      archive.read("buf2/" + names[i], x);
      buf2_[i][t].copy_(x);
    }
  }
  c10::IValue v;
  archive.read("adam_steps", v);
  adam_steps_[t] = v.toInt();
}

}  // namespace qkov::training
