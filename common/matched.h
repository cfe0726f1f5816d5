// Matched comparison: a metric's value where a reference curve first reaches
// a level (docs/metrics.md, "Matched values"). The paper compares QK/OV
// learning-rate ratios at matched loss (its Fig. 4) and claims sharper
// attention "at comparable accuracy"; comparing arms at the end of a fixed
// budget instead confounds attention with how far each arm trained.
//
// For one trial: the reference curve (any reported curve: train_loss, a
// validation loss or score) is smoothed by a trailing mean over `window`
// reports; the crossing is the first report at which the smoothed curve is
// at the level or past it, in the direction the reference moves over the
// sweep's trials (down for a loss, up for a score), and its step is linearly
// interpolated between that report and the one before (a trial already past
// the level at its first report reaches it there). The metric's value
// there is linearly interpolated between the metric's own reports. The
// CLI (qkov results --matched, qkov plot --kind matched) uses this.
#ifndef QKOV_COMMON_MATCHED_H_
#define QKOV_COMMON_MATCHED_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/aggregate.h"

namespace qkov {

struct CurvePoint {
  int64_t step;
  double value;
};

// "train_loss=0.5,0.3": the reference curve's name and its levels (finite,
// at least one). INVALID_ARGUMENT naming what is wrong.
struct MatchedSpec {
  std::string reference;
  std::vector<double> levels;
};
absl::StatusOr<MatchedSpec> ParseMatchedSpec(absl::string_view spec);

// The trailing mean over `window` (>= 1) reports, from the window-th report
// on (a curve with fewer reports gives nothing). Points must be in step
// order; a window holding a NaN gives NaN.
std::vector<CurvePoint> SmoothTrailing(const std::vector<CurvePoint>& curve,
                                       int window);

// The interpolated step at which `smoothed` first reaches `level` going
// `downwards` (a loss: at or below it) or upwards (a score: at or above);
// the first report's step when that report is already there. -1 when it
// never does. NaN points are skipped.
double FirstCrossing(const std::vector<CurvePoint>& smoothed, double level,
                     bool downwards);

// Whether a reference falls as trials train: the sum over the curves of
// (last value - first value) of each smoothed curve is negative.
bool FallsOverall(const std::vector<std::vector<CurvePoint>>& smoothed);

// `curve` at `step`, linearly interpolated between the reports around it;
// NaN outside the reported steps.
double ValueAt(const std::vector<CurvePoint>& curve, double step);

// One trial at one level.
struct MatchedValue {
  bool reached = false;
  double step = -1;            // the crossing; -1 when not reached
  std::vector<double> values;  // one per metric; NaN when not reached
};
MatchedValue MatchAt(const std::vector<CurvePoint>& reference, int window,
                     double level, bool downwards,
                     const std::vector<std::vector<CurvePoint>>& metrics);

// A sweep's matched comparison, as `qkov results --matched`, `qkov plot
// --kind matched` and the dashboard show it: for each arm (trials with the
// same keys) and each level, how many trials reached the level, the mean
// step of the crossing, and each metric's value there, mean over the trials
// that reached it with its 95% confidence interval (Summarize). A trial that
// never reaches a level is counted, not dropped.
struct MatchedTrial {
  std::vector<std::string> keys;                          // its arm
  std::map<std::string, std::vector<CurvePoint>> curves;  // by name
};

// The trial's curve `name`; empty when it reports none.
const std::vector<CurvePoint>& CurveOf(const MatchedTrial& t,
                                       const std::string& name);

struct MatchedGroup {
  std::vector<std::string> keys;  // the arm
  double level = 0;
  int trials = 0;                // trials in the arm
  int reached = 0;               // of which reached the level
  Summary step;                  // the crossing's step
  std::vector<Summary> metrics;  // one per metric
};

struct MatchedTable {
  std::string reference;
  int window = 1;
  bool downwards = true;        // the reference falls as the trials train
  std::vector<std::string> by;  // the keys' names
  std::vector<std::string> metrics;
  std::vector<MatchedGroup> groups;  // arms in key order, then the levels
};

// INVALID_ARGUMENT, one line naming the problem: a window below 1, no
// trials, a curve (the reference or a metric) that no trial reports (the
// message ends with `curve_names()` when given), a reference shorter than
// the window in every trial, a level that no trial reaches.
absl::StatusOr<MatchedTable> MatchTrials(
    const std::vector<MatchedTrial>& trials, const MatchedSpec& spec,
    int window, const std::vector<std::string>& metrics,
    const std::vector<std::string>& by,
    const std::function<std::string()>& curve_names = nullptr);

// `count` (>= 1) levels of `reference` for a first look: evenly spaced from
// the level every trial's smoothed reference reaches (the highest of the
// trials' lowest values, for a falling reference) towards the level no
// trial has passed at its first report (the lowest of their first values),
// that one left out. Where the trials share no such span, the same over
// the span of all their values. Rounded to 3 significant digits (away from
// the direction of travel where the nearest would pass the span's reached
// end), without repeats, in the order the trials reach them; empty when no
// trial has a smoothed report.
std::vector<double> DefaultLevels(const std::vector<MatchedTrial>& trials,
                                  const std::string& reference, int window,
                                  int count);

}  // namespace qkov

#endif  // QKOV_COMMON_MATCHED_H_
