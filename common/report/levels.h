// Where a matched claim compares its two arms (docs/report.md, "Levels"):
// levels of the reference curve chosen from the two arms' own curves, inside
// the span both reach, never where both arms' compared metric still sits at
// its starting value, spaced on the claim's scale (log for a loss, linear for
// an accuracy), with the paper's own comparison points where it names them.
// A third arm in the same sweep does not move them.
#ifndef QKOV_COMMON_REPORT_LEVELS_H_
#define QKOV_COMMON_REPORT_LEVELS_H_

#include <string>
#include <vector>

#include "common/matched.h"
#include "common/report/claims.h"

namespace qkov::report {

// The candidates ChooseLevels tries between the start and the lowest shared
// level, and the levels it keeps from the first usable one on.
inline constexpr int kLevelCandidates = 50;
inline constexpr int kLevelsChosen = 5;

struct LevelChoice {
  std::vector<double> levels;  // in the order the arms reach them
  // The rule in words, with its numbers: the span, the first usable level,
  // the paper's points used.
  std::string rule;
  // The span both arms reach: from `start` (no trial of either arm has
  // passed it at its first report) to `end` (every trial of both reaches
  // it); NaN where the arms share none.
  double start = 0, end = 0;
  double first_usable = 0;  // NaN where no candidate is usable
  bool downwards = true;    // the reference falls as the trials train
  // Per arm (in the order given): the mean of its trials' first reports of
  // the metric, and how far from it a mean must be to have left it.
  std::vector<double> starts, thresholds;
};

// Each arm's trials with their reference curve (`claim.reference`) and
// compared metric (`claim.metric`) in `curves`. An arm's metric has left its
// starting value at a level where the mean over its trials of the metric
// there differs from the mean of their first reports by more than that
// mean's 95% CI (the spread of the initial state) and by at least a tenth of
// the claim's effect (or 1e-9 of the value); a level is usable where either
// arm's has. Every level from the first usable one on is kept (a level
// past the plateau whose CIs are wide is inconclusive, not unusable).
// Levels are rounded to 3 significant digits, inward where rounding would
// leave the usable span.
LevelChoice ChooseLevels(const Claim& claim,
                         const std::vector<MatchedTrial>& faster,
                         const std::vector<MatchedTrial>& baseline);
// The same for any number of arms (an ordered claim's): the span every
// trial of every arm reaches; usable where any arm's metric has moved.
LevelChoice ChooseLevels(const Claim& claim,
                         const std::vector<std::vector<MatchedTrial>>& arms);

}  // namespace qkov::report

#endif  // QKOV_COMMON_REPORT_LEVELS_H_
