// The ratio search of an adaptive sweep (docs/adaptive.md): for one
// combination of the other axes, the smallest lr_ratio in [lo, hi] at which
// the seed mean of a final metric reaches a target, to a stated resolution.
// The search probes a coarse log grid, then bisects (geometrically) between
// the largest ratio below the target and the smallest that reaches it.
//
// Decide is a pure function of the spec and the probes' results so far, so
// the coordinator can call it in the transaction that stores a completion
// and insert exactly the probes it names that are not yet present: a
// restarted server, or a re-submitted sweep, computes the same decision
// from the same stored results, and no probe is made twice or missed.
#ifndef QKOV_SERVER_CORE_RATIO_SEARCH_H_
#define QKOV_SERVER_CORE_RATIO_SEARCH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace qkov::core {

enum class TargetOp { kAtLeast, kAtMost };  // metric >= target, <= target

struct RatioSearchSpec {
  double lo = 1;  // lr_ratio range, 0 < lo < hi
  double hi = 100;
  double resolution = 1.2;  // stop when above / below <= resolution (> 1)
  int coarse_points = 5;    // the first probes: a log grid lo..hi (>= 2)
  int seeds_per_probe = 3;  // seeds of each probe (>= 1)
  std::string metric;       // a final result name, e.g. distinct_attention
  TargetOp op = TargetOp::kAtLeast;
  double target = 0;
};

// INVALID_ARGUMENT naming the field under `prefix` ("spec.search."): a range
// that is empty, inverted, not finite or not positive; a resolution <= 1;
// fewer than 2 coarse points or 1 seed; an empty metric; a target that is
// not finite.
absl::Status ValidateRatioSearch(const RatioSearchSpec& spec,
                                 absl::string_view prefix);

// The coarse grid: coarse_points ratios log-spaced from lo to hi, ends
// exact.
std::vector<double> CoarseRatios(const RatioSearchSpec& spec);

// One probe's results: the final metric of each seed that ended with one,
// and how many seeds ended without (failed, diverged without the metric).
struct ProbeResult {
  double ratio = 0;
  std::vector<double> values;
  int failed = 0;
  bool complete = false;  // every seed of the probe has ended
};

// A probe as the search sees it.
struct ProbeSummary {
  double ratio = 0;
  int n = 0;  // seeds with a value
  double mean = 0;
  double ci95 = 0;       // half width (Student t); NaN for n < 2
  bool failed = false;   // no seed has a value: left out of the bracket
  bool reached = false;  // the mean meets the target
};

enum class SearchState {
  kRunning,       // probes are running, or next_ratios are to be added
  kFound,         // below and above bracket the crossing within resolution
  kReachedAtLo,   // the smallest ratio already reaches the target
  kNeverReached,  // no probed ratio up to hi reaches it
  kProbeFailed,   // the probe the bracket needed failed on every seed
};
const char* SearchStateName(SearchState state);

struct SearchDecision {
  SearchState state = SearchState::kRunning;
  // Probes to create now (ratios not among `probes`); empty when the search
  // waits for running probes or has ended.
  std::vector<double> next_ratios;
  // The bracket: the largest probed ratio below the target under the
  // smallest that reaches it (0 when none below; hi when none reaches).
  double below = 0;
  double above = 0;
  // Probed ratios above `above` whose mean does not reach the target: the
  // response is not monotone there (reported, the search goes on below).
  std::vector<double> non_monotone;
  std::vector<ProbeSummary> probes;  // by ratio, ascending
};

// What to do given every probe so far (any order; ratios distinct). With
// no probes: the coarse grid. While any probe is incomplete: wait. Then
// bracket, and either end or name the geometric midpoint sqrt(below *
// above) to probe next.
SearchDecision Decide(const RatioSearchSpec& spec,
                      const std::vector<ProbeResult>& probes);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_RATIO_SEARCH_H_
