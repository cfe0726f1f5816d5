// Early stopping of an adaptive sweep's trials (docs/adaptive.md): rules on
// a metric the trials report at report steps, judged against the trials of
// the same sweep at the same step. Pure functions: the coordinator applies
// them when a report arrives, and a stopped trial becomes stopped_early
// with its metrics kept.
//   - Median stopping (Golovin et al. 2017, Google Vizier): after min_steps,
//     a trial whose best value so far is worse than the median of the other
//     trials' values at this step stops.
//   - Successive halving, asynchronous (ASHA; Li et al. 2020, as Ray Tune's
//     ASHAScheduler applies it): rungs at min_steps x eta^k up to max_steps;
//     a trial reaching a rung stops when its value is worse than the cut of
//     the best 1/eta of the values recorded at that rung before it; it is
//     recorded there either way.
#ifndef QKOV_SERVER_CORE_EARLY_STOPPING_H_
#define QKOV_SERVER_CORE_EARLY_STOPPING_H_

#include <cstdint>
#include <vector>

namespace qkov::core {

enum class Direction { kHigherIsBetter, kLowerIsBetter };

struct MedianRule {
  int64_t min_steps = 0;  // no stop before this step
  int min_peers = 3;      // other trials needed at the step to judge
  Direction direction = Direction::kHigherIsBetter;
};

// True when the trial should stop at `step`: `best_so_far` is its best
// value up to this step, `peers` the other trials' values at this step
// (NaN values are left out). The median of an even count is the mean of the
// middle two.
bool MedianStops(const MedianRule& rule, int64_t step, double best_so_far,
                 const std::vector<double>& peers);

struct AshaRule {
  int64_t min_steps = 1;  // the first rung
  int64_t max_steps = 1;  // no rung at or past it
  double reduction = 3;   // eta > 1
  Direction direction = Direction::kHigherIsBetter;
};

// The rungs: min_steps x eta^k (rounded down) below max_steps, ascending.
std::vector<int64_t> AshaRungs(const AshaRule& rule);

// True when a trial reaching a rung with `value` should stop, given the
// values recorded at that rung before it (`earlier`): when worse than their
// (1 - 1/eta) quantile (for lower-is-better, the 1/eta quantile; linear
// interpolation, as numpy.nanpercentile), or when `value` is NaN. The first
// trial at a rung always continues.
bool AshaStops(const AshaRule& rule, double value,
               const std::vector<double>& earlier);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_EARLY_STOPPING_H_
