#include "common/aggregate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/task_kind.h"
#include "common/text.h"

namespace qkov {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Continued fraction for the regularized incomplete beta (Lentz).
double BetaContinuedFraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return h;
}

double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
               a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double StudentTCdf(double t, double df) {
  const double tail = 0.5 * RegularizedBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

std::string FormatKeyNumber(double v) { return absl::StrFormat("%.10g", v); }

}  // namespace

std::string ParameterizationLabel(qkov::v1::Parameterization p) {
  return p == qkov::v1::PARAMETERIZATION_UNSPECIFIED
             ? "-"
             : qkov::v1::Parameterization_Name(p);
}

double StudentTQuantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return kNaN;
  if (p == 0.5) return 0;
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 400; ++i) {
    const double mid = 0.5 * (lo + hi);
    (StudentTCdf(mid, df) < p ? lo : hi) = mid;
    if (hi - lo <= 1e-15 * std::max(1.0, std::fabs(mid))) break;
  }
  return 0.5 * (lo + hi);
}

Summary Summarize(const std::vector<double>& values) {
  Summary s;
  double sum = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    ++s.n;
    sum += v;
  }
  if (s.n == 0) {
    s.mean = s.std = s.ci95 = kNaN;
    return s;
  }
  s.mean = sum / s.n;
  if (s.n < 2) {
    s.std = s.ci95 = kNaN;
    return s;
  }
  double ss = 0;
  for (double v : values) {
    if (!std::isnan(v)) ss += (v - s.mean) * (v - s.mean);
  }
  s.std = std::sqrt(ss / (s.n - 1));
  s.ci95 = StudentTQuantile(0.975, s.n - 1) * s.std /
           std::sqrt(static_cast<double>(s.n));
  return s;
}

std::string KeyOf(const qkov::v1::ResultRow& row, const std::string& key) {
  const auto& c = row.config();
  if (key == "parameterization")
    return ParameterizationLabel(c.parameterization());
  if (key == "lr_ratio") return FormatKeyNumber(c.lr_ratio());
  if (key == "eta_ov") return FormatKeyNumber(c.eta_ov());
  if (key == "alpha")
    return TaskOrDefault(c.training().task()).takes_alphas || c.alpha() != 0
               ? FormatKeyNumber(c.alpha())
               : "";
  if (key == "seed") return absl::StrCat(c.seed());
  if (key == "arm") return c.arm();
  if (key == "state")
    return absl::AsciiStrToLower(qkov::v1::TrialState_Name(row.state()));
  if (key == "trial") return row.trial_id();
  auto it = row.values().find(key);
  if (it != row.values().end()) return FormatKeyNumber(it->second);
  return "";
}

double NumberOf(const qkov::v1::ResultRow& row, const std::string& key) {
  double v;
  if (absl::SimpleAtod(KeyOf(row, key), &v)) return v;
  return kNaN;
}

bool IsAxisKey(const std::string& key) {
  static const char* const kKeys[] = {"parameterization",
                                      "lr_ratio",
                                      "eta_ov",
                                      "seed",
                                      "alpha",
                                      "arm",
                                      "state",
                                      "trial"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

absl::StatusOr<std::vector<Filter>> ParseWhere(
    const std::vector<std::string>& where) {
  std::vector<Filter> filters;
  for (const std::string& w : where) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0)
      return absl::InvalidArgumentError(
          absl::StrCat("where ", TerminalSafe(w), ": expected key=value"));
    filters.push_back(Filter{w.substr(0, eq), w.substr(eq + 1)});
  }
  return filters;
}

bool Matches(const qkov::v1::ResultRow& row,
             const std::vector<Filter>& filters) {
  for (const Filter& f : filters) {
    const std::string have = KeyOf(row, f.key);
    double a, b;
    if (!(have == f.value ||
          (absl::SimpleAtod(have, &a) && absl::SimpleAtod(f.value, &b) &&
           a == b) ||
          absl::AsciiStrToLower(have) == absl::AsciiStrToLower(f.value))) {
      return false;
    }
  }
  return true;
}

namespace {

template <typename Rows>
absl::StatusOr<std::vector<Group>> AggregateRows(
    const Rows& rows, const std::vector<std::string>& by,
    const std::vector<std::string>& metrics,
    const std::vector<std::string>& where) {
  for (const std::string& k : by) {
    if (!IsAxisKey(k)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "by: unknown key '", TerminalSafe(k),
          "' (parameterization, lr_ratio, eta_ov, seed, alpha, arm, "
          "state, trial)"));
    }
  }
  ASSIGN_OR_RETURN(std::vector<Filter> filters, ParseWhere(where));
  // Keys in first-seen order, then sorted: numbers numerically.
  std::map<std::vector<std::string>, std::map<std::string, std::vector<double>>>
      groups;
  for (const auto& row : rows) {
    if (!Matches(row, filters)) continue;
    std::vector<std::string> key;
    for (const std::string& k : by) key.push_back(KeyOf(row, k));
    auto& m = groups[key];
    for (const std::string& metric : metrics) {
      auto it = row.values().find(metric);
      m[metric].push_back(it == row.values().end() ? kNaN : it->second);
    }
  }
  std::vector<Group> out;
  for (auto& [key, values] : groups) {
    Group g;
    g.keys = key;
    for (auto& [metric, v] : values) g.metrics[metric] = Summarize(v);
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const Group& a, const Group& b) {
    for (size_t i = 0; i < a.keys.size(); ++i) {
      double x, y;
      const bool nx = absl::SimpleAtod(a.keys[i], &x),
                 ny = absl::SimpleAtod(b.keys[i], &y);
      if (nx && ny && x != y) return x < y;
      if (!(nx && ny) && a.keys[i] != b.keys[i]) return a.keys[i] < b.keys[i];
    }
    return false;
  });
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Group>> Aggregate(
    const std::vector<qkov::v1::ResultRow>& rows,
    const std::vector<std::string>& by, const std::vector<std::string>& metrics,
    const std::vector<std::string>& where) {
  return AggregateRows(rows, by, metrics, where);
}

absl::StatusOr<std::vector<Group>> Aggregate(
    const google::protobuf::RepeatedPtrField<qkov::v1::ResultRow>& rows,
    const std::vector<std::string>& by, const std::vector<std::string>& metrics,
    const std::vector<std::string>& where) {
  return AggregateRows(rows, by, metrics, where);
}

}  // namespace qkov
