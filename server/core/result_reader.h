// ResultReader: the client API's result queries (sweep.proto): result rows
// with filters and sorting, their columns, aggregates over seeds, heatmaps,
// curves, a trial's metrics, the matched comparison and the read-only SQL
// console. Reached through Coordinator::results(); thread-safe.
#ifndef QKOV_SERVER_CORE_RESULT_READER_H_
#define QKOV_SERVER_CORE_RESULT_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "qkov/v1/sweep.pb.h"
#include "server/core/coordinator_core.h"
#include "storage/records.h"

namespace qkov::core {

class ResultReader {
 public:
  explicit ResultReader(CoordinatorCore* core) : core_(core) {}

  // Final results of a sweep's trials, filtered by `where`, sorted by
  // `sort_by` (numbers numerically, missing values last) and paged.
  absl::StatusOr<qkov::v1::QueryResultsResponse> QueryResults(
      const qkov::v1::QueryResultsRequest& r);
  // The same rows in columns (ResultColumns), `chunk_rows` rows a message,
  // from one snapshot of the sweep's rows.
  absl::StatusOr<std::vector<qkov::v1::ResultColumns>> ResultColumns(
      const qkov::v1::QueryResultsRequest& r, int chunk_rows = 2000);
  // The same rows grouped and summarized (common/aggregate.h).
  absl::StatusOr<qkov::v1::AggregateResultsResponse> AggregateResults(
      const qkov::v1::AggregateResultsRequest& r);
  // Reads the result rows of the `max_sweeps` most recently created sweeps
  // into the cache, so the first dashboard visit after a restart is fast;
  // `stop` (may be empty) is asked between sweeps.
  absl::Status WarmResultRows(int max_sweeps,
                              const std::function<bool()>& stop = {});
  // A heatmap averaged over seeds per (parameterization, lr_ratio).
  absl::StatusOr<qkov::v1::SweepHeatmapsResponse> SweepHeatmaps(
      const qkov::v1::SweepHeatmapsRequest& r);
  // One metric's curve for a page of a sweep's trials, thinned.
  absl::StatusOr<qkov::v1::SweepCurvesResponse> SweepCurves(
      const qkov::v1::SweepCurvesRequest& r);
  absl::StatusOr<qkov::v1::GetTrialMetricsResponse> GetTrialMetrics(
      const qkov::v1::GetTrialMetricsRequest& r);
  // Every curve of a sweep's trials (StreamCurvesRequest) in chunks of about
  // 1 MB, each trial's series as GetTrialMetrics gives them. `emit` returning
  // false (the client left) ends the read with CANCELLED. NOT_FOUND for an
  // unknown sweep, a trial of another sweep, or a name no trial reports;
  // RESOURCE_EXHAUSTED past max_points (after the chunks before it).
  absl::Status StreamCurves(
      const qkov::v1::StreamCurvesRequest& r,
      const std::function<bool(const qkov::v1::StreamCurvesChunk&)>& emit);
  // The matched comparison (common/matched_sweep.h) of a sweep, computed here
  // from this coordinator's rows and curves. FAILED_PRECONDITION above
  // `max_trials` finished trials.
  absl::StatusOr<qkov::v1::MatchedResponse> MatchSweep(
      const qkov::v1::MatchSweepRequest& r, int max_trials);
  // Runs the statement in the SQL console's sandbox; `cancelled` (may be
  // empty) says the client went away and ends it.
  absl::StatusOr<qkov::v1::QuerySqlResponse> QuerySql(
      const qkov::v1::QuerySqlRequest& r,
      const std::function<bool()>& cancelled = {});

 private:
  // SweepHeatmaps' last reply per (sweep, name, per_group), with the trials
  // it averaged.
  static constexpr size_t kHeatmapsMemo = 32;
  absl::Mutex heatmaps_mu_;
  absl::flat_hash_map<std::string, std::pair<std::vector<std::string>,
                                             qkov::v1::SweepHeatmapsResponse>>
      heatmaps_memo_ ABSL_GUARDED_BY(heatmaps_mu_);

  CoordinatorCore* core_;
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_RESULT_READER_H_
