#include "common/report/levels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/aggregate.h"
#include "common/numbers.h"

namespace qkov::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The first finite value of a curve; NaN for none.
double FirstValue(const std::vector<CurvePoint>& curve) {
  for (const CurvePoint& p : curve)
    if (!std::isnan(p.value)) return p.value;
  return kNaN;
}

// An arm's span: the level no trial has passed at its first smoothed report
// (`start`) and the level every trial reaches (`end`); NaN where a trial has
// no smoothed report.
struct Span {
  double start = kNaN, end = kNaN;
};

Span ArmSpan(const std::vector<MatchedTrial>& arm, const std::string& ref,
             int window, bool downwards) {
  Span s;
  bool first = true;
  for (const MatchedTrial& t : arm) {
    const std::vector<CurvePoint> sm = SmoothTrailing(CurveOf(t, ref), window);
    double lo = INFINITY, hi = -INFINITY, begin = kNaN;
    for (const CurvePoint& p : sm) {
      if (std::isnan(p.value)) continue;
      if (std::isnan(begin)) begin = p.value;
      lo = std::min(lo, p.value);
      hi = std::max(hi, p.value);
    }
    if (std::isnan(begin)) return Span();
    // Falling: the trial reaches every level down to its lowest value.
    const double reach = downwards ? lo : hi;
    if (first) {
      s.start = begin;
      s.end = reach;
      first = false;
    } else if (downwards) {
      s.start = std::min(s.start, begin);
      s.end = std::max(s.end, reach);
    } else {
      s.start = std::max(s.start, begin);
      s.end = std::min(s.end, reach);
    }
  }
  return s;
}

// 3 significant digits; where that passes `end` (the span's reached end),
// the rounding that stays inside.
double Round3(double v, double end, bool downwards) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::abs(v))));
  double r = std::round(v * scale) / scale;
  if (downwards && r < end) r = std::ceil(v * scale) / scale;
  if (!downwards && r > end) r = std::floor(v * scale) / scale;
  return r;
}

// 3 significant digits, rounded in the direction of travel (down for a
// falling reference).
double RoundInward(double v, bool downwards) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::abs(v))));
  return (downwards ? std::floor(v * scale) : std::ceil(v * scale)) / scale;
}

// `count` points from `a` to `b`, both included, on the claim's scale (log
// where both are positive).
std::vector<double> Spaced(double a, double b, int count, LevelScale scale) {
  std::vector<double> out;
  if (count == 1) return {b};
  const bool log = scale == LevelScale::kLog && a > 0 && b > 0;
  for (int i = 0; i < count; ++i) {
    const double f = double(i) / double(count - 1);
    out.push_back(log ? std::exp(std::log(a) + f * (std::log(b) - std::log(a)))
                      : a + f * (b - a));
  }
  return out;
}

// How far an arm's mean must be from its start to have left it: the start's
// 95% CI (how much the initial state varies over the arm's trials), and at
// least a tenth of the claim's effect (a move the claim could never
// register is no move) or 1e-9 of the value.
double MoveThreshold(const Claim& claim, const Summary& start) {
  const double noise = std::isnan(start.ci95) ? 0 : start.ci95;
  const double floor =
      std::max(1e-9 * std::max(1.0, std::abs(start.mean)), claim.effect / 10);
  return std::max(noise, floor);
}

// One trial as the usability test reads it: its smoothed reference, once,
// and its metric's curve and first value.
struct PreparedTrial {
  std::vector<CurvePoint> smoothed;
  const std::vector<CurvePoint>* metric = nullptr;
  double start = 0;
};
using PreparedArm = std::vector<PreparedTrial>;

PreparedArm Prepare(const Claim& claim, const std::vector<MatchedTrial>& arm) {
  PreparedArm out;
  for (const MatchedTrial& t : arm) {
    PreparedTrial p;
    p.smoothed = SmoothTrailing(CurveOf(t, claim.reference), claim.window);
    p.metric = &CurveOf(t, claim.metric);
    p.start = FirstValue(*p.metric);
    out.push_back(std::move(p));
  }
  return out;
}

// Whether one arm's metric at `level` has left its starting value (the
// metric where the smoothed reference first reaches the level, as MatchAt
// reads it).
bool ArmMoved(const Claim& claim, const PreparedArm& arm, double level,
              bool downwards) {
  std::vector<double> start, at;
  for (const PreparedTrial& t : arm) {
    const double step = FirstCrossing(t.smoothed, level, downwards);
    if (step < 0) continue;
    start.push_back(t.start);
    at.push_back(ValueAt(*t.metric, step));
  }
  const Summary s0 = Summarize(start), s1 = Summarize(at);
  if (s0.n == 0 || s1.n == 0) return false;
  return std::abs(s1.mean - s0.mean) > MoveThreshold(claim, s0);
}

// The span every trial of every arm reaches; NaN where an arm has none.
Span SharedSpan(const Claim& claim,
                const std::vector<std::vector<MatchedTrial>>& arms, bool down) {
  Span out;
  for (size_t i = 0; i < arms.size(); ++i) {
    const Span a = ArmSpan(arms[i], claim.reference, claim.window, down);
    if (std::isnan(a.start) || std::isnan(a.end)) return Span();
    if (i == 0) {
      out = a;
      continue;
    }
    out.start =
        down ? std::min(out.start, a.start) : std::max(out.start, a.start);
    out.end = down ? std::max(out.end, a.end) : std::min(out.end, a.end);
  }
  return out;
}

}  // namespace

namespace {

bool AnyArmMoved(const Claim& claim, const std::vector<PreparedArm>& arms,
                 double level, bool downwards) {
  for (const PreparedArm& arm : arms)
    if (ArmMoved(claim, arm, level, downwards)) return true;
  return false;
}

// Each arm's starting value of the metric and its move threshold, for the
// report's reader.
void AddArmStarts(const Claim& claim,
                  const std::vector<std::vector<MatchedTrial>>& arms,
                  LevelChoice* out) {
  for (const auto& arm : arms) {
    std::vector<double> first;
    for (const MatchedTrial& t : arm)
      first.push_back(FirstValue(CurveOf(t, claim.metric)));
    const Summary s = Summarize(first);
    out->starts.push_back(s.n > 0 ? s.mean : kNaN);
    out->thresholds.push_back(MoveThreshold(claim, s));
  }
}

}  // namespace

LevelChoice ChooseLevels(const Claim& claim,
                         const std::vector<MatchedTrial>& faster,
                         const std::vector<MatchedTrial>& baseline) {
  return ChooseLevels(claim, {faster, baseline});
}

LevelChoice ChooseLevels(const Claim& claim,
                         const std::vector<std::vector<MatchedTrial>>& arms) {
  LevelChoice out;
  std::vector<std::vector<CurvePoint>> smoothed;
  for (const auto& arm : arms)
    for (const MatchedTrial& t : arm)
      smoothed.push_back(
          SmoothTrailing(CurveOf(t, claim.reference), claim.window));
  out.downwards = FallsOverall(smoothed);
  const bool down = out.downwards;
  AddArmStarts(claim, arms, &out);
  const Span shared = SharedSpan(claim, arms, down);
  out.start = shared.start;
  out.end = shared.end;
  out.first_usable = kNaN;
  const bool empty = std::isnan(out.start) || std::isnan(out.end) ||
                     (down ? out.end >= out.start : out.end <= out.start);
  if (empty) {
    out.start = out.end = kNaN;
    out.rule = absl::StrCat("the arms share no span of ", claim.reference,
                            " that every trial of each reaches");
    return out;
  }
  // The first candidate past the start where an arm's metric has moved.
  const std::vector<double> candidates =
      Spaced(out.start, out.end, kLevelCandidates + 1, claim.scale);
  std::vector<PreparedArm> prepared;
  for (const auto& arm : arms) prepared.push_back(Prepare(claim, arm));
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (AnyArmMoved(claim, prepared, candidates[i], down)) {
      out.first_usable = candidates[i];
      break;
    }
  }
  const std::string span =
      absl::StrCat(claim.reference, " from ", FormatNumber(out.start), " to ",
                   FormatNumber(out.end));
  if (std::isnan(out.first_usable)) {
    out.rule = absl::StrCat("every arm's ", claim.metric,
                            " still at its starting value at every level of ",
                            span, " that all reach");
    return out;
  }
  auto inside = [&](double l) {
    return down ? l <= out.first_usable && l >= out.end
                : l >= out.first_usable && l <= out.end;
  };
  std::vector<double> paper;
  for (double l : claim.paper_levels)
    if (inside(l)) paper.push_back(l);
  std::vector<double> levels;
  std::string how;
  const char* scale = claim.scale == LevelScale::kLog ? "log" : "linear";
  if (claim.paper_levels_only && !paper.empty()) {
    levels = paper;
    how = absl::StrCat("the paper's ", claim.paper_levels.size(),
                       " comparison points, ", paper.size(),
                       " of them where an arm's ", claim.metric,
                       " has left its starting value and every arm reaches");
  } else {
    for (double l :
         Spaced(out.first_usable, out.end, kLevelsChosen, claim.scale)) {
      levels.push_back(Round3(l, out.end, down));
    }
    // The first level rounded past the first usable one, never back
    // towards the plateau.
    if (down ? levels.front() > out.first_usable
             : levels.front() < out.first_usable)
      levels.front() = RoundInward(out.first_usable, down);
    how = absl::StrCat(kLevelsChosen, " levels on a ", scale,
                       " scale from the first where an arm's ", claim.metric,
                       " has left its starting value (",
                       FormatNumber(out.first_usable),
                       ") to the lowest every arm reaches");
    if (!paper.empty()) {
      levels.insert(levels.end(), paper.begin(), paper.end());
      std::vector<std::string> shown;
      for (double l : paper) shown.push_back(FormatNumber(l));
      absl::StrAppend(&how, ", and the paper's comparison point ",
                      absl::StrJoin(shown, ", "));
    } else if (!claim.paper_levels.empty()) {
      absl::StrAppend(&how,
                      "; the paper's comparison point lies outside what every "
                      "arm reaches");
    }
  }
  // In the order the arms reach them, without repeats.
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  if (down) std::reverse(levels.begin(), levels.end());
  out.levels = levels;
  out.rule =
      absl::StrCat(how, "; span ", span, " (the compared arms' trials only)");
  return out;
}

}  // namespace qkov::report
