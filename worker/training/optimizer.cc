#include "worker/training/optimizer.h"

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
                                   std::vector<ParamGroup> groups)
    : options_(options),
      params_(std::move(params)),
      groups_(std::move(groups)),
      adam_steps_(params_.empty() ? 0 : params_[0].size(0), 0) {
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
  torch::NoGradGuard no_grad;
  const OptimizerOptions& opt = options_;
  const bool adam = opt.kind == OptimizerKind::kAdamW;
  std::array<torch::Tensor, kNumParamGroups> lr;
  std::vector<double> c1, c2;
  if (adam) {
    for (size_t t = 0; t < adam_steps_.size(); ++t) {
      if (live[t]) ++adam_steps_[t];
      const double k =
          static_cast<double>(std::max<int64_t>(adam_steps_[t], 1));
      c1.push_back(1 - std::pow(opt.adam_beta1, k));
      c2.push_back(1 - std::pow(opt.adam_beta2, k));
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor& w = params_[i];
    const torch::Tensor g = w.grad();
    const int group = static_cast<int>(groups_[i]);
    if (!lr[group].defined()) lr[group] = PerTrial(rates[group], w);
    const torch::Tensor& rate = lr[group];
    if (adam) {
      // torch.optim.AdamW, per trial.
      const torch::Tensor bc1 = PerTrial(c1, w), bc2 = PerTrial(c2, w);
      w.mul_(1 - rate * opt.weight_decay);
      buf1_[i].mul_(opt.adam_beta1).add_(g, 1 - opt.adam_beta1);
      buf2_[i].mul_(opt.adam_beta2).addcmul_(g, g, 1 - opt.adam_beta2);
      auto denom = (buf2_[i].sqrt() / bc2.sqrt()).add_(opt.adam_eps);
      w.sub_(rate / bc1 * buf1_[i] / denom);
    } else {
      // torch.optim.SGD, per trial.
      torch::Tensor d = opt.weight_decay != 0 ? g + opt.weight_decay * w : g;
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
