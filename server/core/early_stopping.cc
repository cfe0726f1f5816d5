#include "server/core/early_stopping.h"

#include <algorithm>
#include <cmath>

namespace qkov::core {
namespace {

std::vector<double> Finite(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (!std::isnan(v)) out.push_back(v);
  std::sort(out.begin(), out.end());
  return out;
}

// numpy.percentile's default (linear) of sorted, non-empty `v` at q in
// [0, 1].
double Quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (pos - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

bool Worse(Direction d, double a, double b) {
  return d == Direction::kHigherIsBetter ? a < b : a > b;
}

}  // namespace

bool MedianStops(const MedianRule& rule, int64_t step, double best_so_far,
                 const std::vector<double>& peers) {
  if (step < rule.min_steps) return false;
  const std::vector<double> v = Finite(peers);
  if (static_cast<int>(v.size()) < std::max(1, rule.min_peers)) return false;
  if (std::isnan(best_so_far)) return true;
  return Worse(rule.direction, best_so_far, Quantile(v, 0.5));
}

std::vector<int64_t> AshaRungs(const AshaRule& rule) {
  std::vector<int64_t> rungs;
  if (rule.min_steps < 1 || !(rule.reduction > 1)) return rungs;
  for (double r = static_cast<double>(rule.min_steps);
       r < static_cast<double>(rule.max_steps); r *= rule.reduction) {
    const int64_t step = static_cast<int64_t>(std::floor(r));
    if (rungs.empty() || step > rungs.back()) rungs.push_back(step);
  }
  return rungs;
}

bool AshaStops(const AshaRule& rule, double value,
               const std::vector<double>& earlier) {
  if (std::isnan(value)) return true;
  const std::vector<double> v = Finite(earlier);
  if (v.empty()) return false;
  // The cut of the best 1/eta: for higher-is-better the (1 - 1/eta)
  // quantile from below, for lower-is-better the 1/eta quantile.
  const double keep = 1.0 / rule.reduction;
  const double cut = rule.direction == Direction::kHigherIsBetter
                         ? Quantile(v, 1.0 - keep)
                         : Quantile(v, keep);
  return Worse(rule.direction, value, cut);
}

}  // namespace qkov::core
