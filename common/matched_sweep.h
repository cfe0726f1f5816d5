// A sweep's matched comparison (matched.h, MatchTrials) from the
// coordinator's result rows and curves. `qkov results --matched`, `qkov plot
// --kind matched` and the dashboard's matched panel all compute it here, over
// gRPC (the CLI) or in the server's process (the dashboard), so the three
// show the same numbers. The arms are the trials that differ only in seed (or
// as `by` says); finished trials only (done, diverged, stopped early).
#ifndef QKOV_COMMON_MATCHED_SWEEP_H_
#define QKOV_COMMON_MATCHED_SWEEP_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/matched.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov {

struct SweepMatchedArgs {
  std::string sweep;
  // CURVE=LEVEL[,LEVEL...], or CURVE alone: `default_levels` levels that
  // every trial reaches where the trials have such a span (DefaultLevels).
  std::string spec;
  int window = 1;                    // reports in the reference's mean
  std::vector<std::string> metrics;  // empty: default_metrics(rows)
  std::vector<std::string> by;       // empty: the axes that vary, not seed
  std::vector<std::string> where;    // key=value filters
  int default_levels = 5;
  int max_trials = 0;  // > 0: FAILED_PRECONDITION above this many trials
};

// Where the rows and the curves come from: the coordinator's QueryResults and
// GetTrialMetrics, over a channel or in process.
struct SweepSource {
  std::function<absl::StatusOr<v1::QueryResultsResponse>(
      const v1::QueryResultsRequest&)>
      query;
  std::function<absl::StatusOr<v1::GetTrialMetricsResponse>(
      const v1::GetTrialMetricsRequest&)>
      curves;
  // The metrics compared when args.metrics is empty; null: none (an error).
  std::function<std::vector<std::string>(const std::vector<v1::ResultRow>&)>
      default_metrics;
};

// MatchTrials' errors; INVALID_ARGUMENT for a bad spec or `by` key; the
// source's errors (NOT_FOUND for an unknown sweep); FAILED_PRECONDITION for
// a sweep with no finished trial or more than max_trials of them.
absl::StatusOr<MatchedTable> MatchSweep(const SweepMatchedArgs& args,
                                        const SweepSource& source);

// The table as the wire carries it (MatchedResponse): levels in the order
// of the first arm's groups.
v1::MatchedResponse MatchedToProto(const MatchedTable& table);

// The axes (not seed) that take more than one value among `rows`; the
// parameterization when none does.
std::vector<std::string> VaryingAxes(const std::vector<v1::ResultRow>& rows);

}  // namespace qkov

#endif  // QKOV_COMMON_MATCHED_SWEEP_H_
