#include "worker/tasks/theory/theory.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"

namespace qkov::training {
namespace {

constexpr double kExpClip = 60;

double ClippedExp(double x) {
  return std::exp(std::clamp(x, -kExpClip, kExpClip));
}

struct Deriv {
  double d_ov;
  double d_qk;
};

// Derivatives with respect to normalized time tau.
Deriv Derivatives(const TheoryOptions& o, const TheoryRates& rates,
                  double mu_ov, double mu_qk) {
  const double eta_qk = rates.lr_ratio * rates.eta_ov;
  const double time_scale = std::min(rates.eta_ov, eta_qk);
  const double alpha = TheoryAlpha(o, mu_qk);
  const double denom = ClippedExp(alpha * mu_ov) + o.M - 1;
  const double d_ov = rates.eta_ov * alpha / (o.b * denom);
  const double d_qk = eta_qk * (o.M - 1) * alpha * (1 - alpha) * mu_ov /
                      (o.M * o.b * o.b * denom);
  return {d_ov / time_scale, d_qk / time_scale};
}

}  // namespace

double TheoryAlpha(const TheoryOptions& o, double mu_qk) {
  const double e = ClippedExp(mu_qk);
  return o.m * e / (o.m * e + o.n);
}

double TheoryLoss(const TheoryOptions& o, double mu_ov, double mu_qk) {
  return std::log1p((o.M - 1) * ClippedExp(-TheoryAlpha(o, mu_qk) * mu_ov));
}

absl::StatusOr<TheoryResult> IntegrateTheory(const TheoryOptions& o,
                                             const TheoryRates& rates) {
  for (double x : {o.m, o.n, o.b, o.M - 1, rates.eta_ov, rates.lr_ratio, o.dtau,
                   o.max_tau, o.target_loss}) {
    if (!std::isfinite(x) || x <= 0)
      return absl::InvalidArgumentError(
          "theory: m, n, b, eta_ov, lr_ratio, dtau, max_tau, target_loss must "
          "be > 0 and M > 1");
  }
  if (o.num_thresholds < 1 || o.num_samples < 2)
    return absl::InvalidArgumentError(
        "theory: num_thresholds >= 1 and num_samples >= 2");

  TheoryResult result;
  for (int i = 0; i < o.num_thresholds; ++i) {
    const double f = o.num_thresholds == 1
                         ? 1.0
                         : static_cast<double>(i) / (o.num_thresholds - 1);
    result.thresholds.push_back(std::pow(10.0, f * std::log10(o.target_loss)));
  }
  double tau = 0, mu_ov = 0, mu_qk = 0;
  auto point = [&]() {
    return TheoryPoint{tau, mu_ov, mu_qk, TheoryAlpha(o, mu_qk),
                       TheoryLoss(o, mu_ov, mu_qk)};
  };
  size_t next_threshold = 0;
  int next_sample = 0;
  const double log_max = std::log10(1 + o.max_tau);
  auto record = [&]() {
    const TheoryPoint p = point();
    while (next_threshold < result.thresholds.size() &&
           p.loss <= result.thresholds[next_threshold]) {
      result.at_thresholds.push_back(p);
      ++next_threshold;
    }
    while (next_sample < o.num_samples &&
           std::log10(1 + tau) >= log_max * next_sample / (o.num_samples - 1)) {
      result.trajectory.push_back(p);
      ++next_sample;
    }
    return p;
  };
  TheoryPoint p = record();
  while (tau < o.max_tau && p.loss > o.target_loss) {
    const double h =
        std::min(std::max(o.dtau, o.relative_step * tau), o.max_tau - tau);
    const Deriv k1 = Derivatives(o, rates, mu_ov, mu_qk);
    const Deriv k2 = Derivatives(o, rates, mu_ov + 0.5 * h * k1.d_ov,
                                 mu_qk + 0.5 * h * k1.d_qk);
    const Deriv k3 = Derivatives(o, rates, mu_ov + 0.5 * h * k2.d_ov,
                                 mu_qk + 0.5 * h * k2.d_qk);
    const Deriv k4 =
        Derivatives(o, rates, mu_ov + h * k3.d_ov, mu_qk + h * k3.d_qk);
    mu_ov = std::max(
        0.0, mu_ov + h / 6 * (k1.d_ov + 2 * k2.d_ov + 2 * k3.d_ov + k4.d_ov));
    mu_qk = std::max(
        0.0, mu_qk + h / 6 * (k1.d_qk + 2 * k2.d_qk + 2 * k3.d_qk + k4.d_qk));
    tau += h;
    p = record();
  }
  if (result.trajectory.empty() || result.trajectory.back().tau != p.tau)
    result.trajectory.push_back(p);
  result.final_point = p;
  result.reached_target = p.loss <= o.target_loss;
  return result;
}

}  // namespace qkov::training
