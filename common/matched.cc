#include "common/matched.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace qkov {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

absl::StatusOr<MatchedSpec> ParseMatchedSpec(absl::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--matched: '", spec,
        "' is not CURVE=LEVEL[,LEVEL...] (for example train_loss=0.5,0.3)"));
  }
  MatchedSpec out;
  out.reference = std::string(absl::StripAsciiWhitespace(spec.substr(0, eq)));
  for (absl::string_view part : absl::StrSplit(spec.substr(eq + 1), ',')) {
    double level = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(part), &level) ||
        !std::isfinite(level)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--matched: level '", part, "' of ", out.reference,
                       " is not a finite number"));
    }
    out.levels.push_back(level);
  }
  return out;
}

std::vector<CurvePoint> SmoothTrailing(const std::vector<CurvePoint>& curve,
                                       int window) {
  std::vector<CurvePoint> out;
  if (window < 1) return out;
  for (size_t i = static_cast<size_t>(window) - 1; i < curve.size(); ++i) {
    double sum = 0;
    for (size_t j = i + 1 - window; j <= i; ++j) sum += curve[j].value;
    out.push_back({curve[i].step, sum / window});
  }
  return out;
}

double FirstCrossing(const std::vector<CurvePoint>& smoothed, double level,
                     bool downwards) {
  const CurvePoint* previous = nullptr;
  for (const CurvePoint& p : smoothed) {
    if (std::isnan(p.value)) continue;
    const bool reached = downwards ? p.value <= level : p.value >= level;
    if (reached) {
      if (previous == nullptr) return static_cast<double>(p.step);
      const double span = p.value - previous->value;
      const double t = span == 0 ? 1 : (level - previous->value) / span;
      return previous->step + t * static_cast<double>(p.step - previous->step);
    }
    previous = &p;
  }
  return -1;
}

bool FallsOverall(const std::vector<std::vector<CurvePoint>>& smoothed) {
  double change = 0;
  for (const auto& curve : smoothed) {
    const CurvePoint* first = nullptr;
    const CurvePoint* last = nullptr;
    for (const CurvePoint& p : curve) {
      if (std::isnan(p.value)) continue;
      if (first == nullptr) first = &p;
      last = &p;
    }
    if (first != nullptr) change += last->value - first->value;
  }
  return change < 0;
}

double ValueAt(const std::vector<CurvePoint>& curve, double step) {
  for (size_t i = 0; i < curve.size(); ++i) {
    const double s = static_cast<double>(curve[i].step);
    if (s == step) return curve[i].value;
    if (s > step) {
      if (i == 0) return kNaN;
      const double s0 = static_cast<double>(curve[i - 1].step);
      const double t = (step - s0) / (s - s0);
      return curve[i - 1].value + t * (curve[i].value - curve[i - 1].value);
    }
  }
  return kNaN;
}

MatchedValue MatchAt(const std::vector<CurvePoint>& reference, int window,
                     double level, bool downwards,
                     const std::vector<std::vector<CurvePoint>>& metrics) {
  MatchedValue out;
  out.step = FirstCrossing(SmoothTrailing(reference, window), level, downwards);
  out.reached = out.step >= 0;
  for (const auto& m : metrics)
    out.values.push_back(out.reached ? ValueAt(m, out.step) : kNaN);
  return out;
}

const std::vector<CurvePoint>& CurveOf(const MatchedTrial& t,
                                       const std::string& name) {
  static const std::vector<CurvePoint>* const kNone =
      new std::vector<CurvePoint>();
  auto it = t.curves.find(name);
  return it == t.curves.end() ? *kNone : it->second;
}

namespace {

// INVALID_ARGUMENT naming the first of `names` that no trial reports.
absl::Status CheckCurvesReported(
    const std::vector<MatchedTrial>& trials,
    const std::vector<std::string>& names,
    const std::function<std::string()>& curve_names) {
  for (const std::string& name : names) {
    bool seen = false;
    for (const MatchedTrial& t : trials) seen |= !CurveOf(t, name).empty();
    if (!seen) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--matched: no trial reports a curve named '", name, "'",
          curve_names ? absl::StrCat(" (its curves: ", curve_names(), ")")
                      : ""));
    }
  }
  return absl::OkStatus();
}

// The reference of every trial as its trailing mean, with the range it
// spans and whether any trial has `window` reports.
struct SmoothedReference {
  std::vector<std::vector<CurvePoint>> curves;  // by trial
  double lowest = INFINITY, highest = -INFINITY;
  bool long_enough = false;
};

SmoothedReference SmoothReference(const std::vector<MatchedTrial>& trials,
                                  const std::string& reference, int window) {
  SmoothedReference out;
  for (const MatchedTrial& t : trials) {
    const std::vector<CurvePoint>& ref = CurveOf(t, reference);
    out.long_enough |= static_cast<int>(ref.size()) >= window;
    out.curves.push_back(SmoothTrailing(ref, window));
    for (const CurvePoint& p : out.curves.back()) {
      if (std::isnan(p.value)) continue;
      out.lowest = std::min(out.lowest, p.value);
      out.highest = std::max(out.highest, p.value);
    }
  }
  return out;
}

// The arms (distinct keys) in the order of their keys, numbers by value.
std::vector<std::vector<std::string>> SortedArms(
    const std::vector<MatchedTrial>& trials) {
  std::vector<std::vector<std::string>> arms;
  for (const MatchedTrial& t : trials) {
    if (std::find(arms.begin(), arms.end(), t.keys) == arms.end())
      arms.push_back(t.keys);
  }
  std::stable_sort(arms.begin(), arms.end(), [](const auto& a, const auto& b) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      double x = 0, y = 0;
      const bool numbers =
          absl::SimpleAtod(a[i], &x) && absl::SimpleAtod(b[i], &y);
      if (numbers && x != y) return x < y;
      if (!numbers && a[i] != b[i]) return a[i] < b[i];
    }
    return false;
  });
  return arms;
}

// One arm at level `l`: its trials, those that reached the level, and the
// summaries of their steps and metrics there.
MatchedGroup GroupAt(const std::vector<MatchedTrial>& trials,
                     const std::vector<std::vector<MatchedValue>>& at,
                     const std::vector<std::string>& arm, size_t l,
                     double level, size_t metric_count) {
  MatchedGroup g;
  g.keys = arm;
  g.level = level;
  std::vector<double> steps;
  std::vector<std::vector<double>> values(metric_count);
  for (size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].keys != arm) continue;
    ++g.trials;
    const MatchedValue& v = at[i][l];
    if (!v.reached) continue;
    ++g.reached;
    steps.push_back(v.step);
    for (size_t m = 0; m < values.size(); ++m) values[m].push_back(v.values[m]);
  }
  g.step = Summarize(steps);
  for (const auto& v : values) g.metrics.push_back(Summarize(v));
  return g;
}

}  // namespace

absl::StatusOr<MatchedTable> MatchTrials(
    const std::vector<MatchedTrial>& trials, const MatchedSpec& spec,
    int window, const std::vector<std::string>& metrics,
    const std::vector<std::string>& by,
    const std::function<std::string()>& curve_names) {
  if (window < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--window: must be >= 1 (got ", window, ")"));
  }
  if (trials.empty())
    return absl::InvalidArgumentError("--matched: no trials to compare");
  if (metrics.empty())
    return absl::InvalidArgumentError("--matched: no metrics to compare");
  std::vector<std::string> names = metrics;
  names.push_back(spec.reference);
  if (absl::Status s = CheckCurvesReported(trials, names, curve_names); !s.ok())
    return s;
  const SmoothedReference ref = SmoothReference(trials, spec.reference, window);
  const bool downwards = FallsOverall(ref.curves);
  std::vector<std::vector<MatchedValue>> at(trials.size());  // trial, level
  for (size_t i = 0; i < trials.size(); ++i) {
    std::vector<std::vector<CurvePoint>> metric_curves;
    for (const auto& m : metrics)
      metric_curves.push_back(CurveOf(trials[i], m));
    for (double level : spec.levels) {
      at[i].push_back(MatchAt(CurveOf(trials[i], spec.reference), window, level,
                              downwards, metric_curves));
    }
  }
  if (!ref.long_enough) {
    return absl::InvalidArgumentError(
        absl::StrCat("--matched: ", spec.reference, " has fewer than ", window,
                     " reports (--window) in every trial"));
  }
  for (size_t l = 0; l < spec.levels.size(); ++l) {
    bool any = false;
    for (const auto& trial : at) any |= trial[l].reached;
    if (!any) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--matched: no trial reaches ", spec.reference, " = ", spec.levels[l],
          " (trailing mean of ", window, " reports; the trials' curves span ",
          ref.lowest, " to ", ref.highest, ")"));
    }
  }
  MatchedTable table;
  table.reference = spec.reference;
  table.window = window;
  table.downwards = downwards;
  table.by = by;
  table.metrics = metrics;
  for (const auto& arm : SortedArms(trials)) {
    for (size_t l = 0; l < spec.levels.size(); ++l) {
      table.groups.push_back(
          GroupAt(trials, at, arm, l, spec.levels[l], metrics.size()));
    }
  }
  return table;
}

std::vector<double> DefaultLevels(const std::vector<MatchedTrial>& trials,
                                  const std::string& reference, int window,
                                  int count) {
  std::vector<std::vector<CurvePoint>> smoothed;
  for (const MatchedTrial& t : trials) {
    auto it = t.curves.find(reference);
    if (it == t.curves.end()) continue;
    std::vector<CurvePoint> s;
    for (const CurvePoint& p : SmoothTrailing(it->second, std::max(window, 1)))
      if (!std::isnan(p.value)) s.push_back(p);
    if (!s.empty()) smoothed.push_back(std::move(s));
  }
  if (smoothed.empty() || count < 1) return {};
  const bool down = FallsOverall(smoothed);
  // In the direction of travel: "ahead" is lower for a falling reference.
  auto ahead = [down](double a, double b) { return down ? a < b : a > b; };
  double all_reach = 0, none_past = 0, span_begin = 0, span_end = 0;
  for (size_t i = 0; i < smoothed.size(); ++i) {
    double best = smoothed[i].front().value;  // the furthest it got
    for (const CurvePoint& p : smoothed[i])
      if (ahead(p.value, best)) best = p.value;
    const double first = smoothed[i].front().value;
    if (i == 0) {
      all_reach = span_end = best;
      none_past = span_begin = first;
      continue;
    }
    if (ahead(all_reach, best)) all_reach = best;
    if (ahead(first, none_past)) none_past = first;
    if (ahead(best, span_end)) span_end = best;
    if (ahead(span_begin, first)) span_begin = first;
  }
  double from = all_reach, to = none_past;
  if (!ahead(from, to)) {
    // Slower arms never get where faster arms start: the whole span.
    from = span_end;
    to = span_begin;
  }
  std::vector<double> levels;
  for (int k = 0; k < count; ++k) {
    const double level = from + (to - from) * k / count;
    double rounded = level;
    if (level != 0 && std::isfinite(level)) {
      const double scale =
          std::pow(10.0, 2 - std::floor(std::log10(std::fabs(level))));
      rounded = std::round(level * scale) / scale;
      // Rounded past what every trial reaches: round back instead, so that
      // the first level is one they all reach.
      if (ahead(rounded, from))
        rounded =
            (down ? std::ceil(level * scale) : std::floor(level * scale)) /
            scale;
    }
    if (levels.empty() || levels.back() != rounded) levels.push_back(rounded);
  }
  // In the order the trials reach them.
  std::reverse(levels.begin(), levels.end());
  return levels;
}

}  // namespace qkov
