// TrialQueries: reading trials back (lists, one trial with its attempts,
// results and curves, change feeds, the queue's state). Every call reads on
// a pooled read-only connection and never waits for the writer. Reached
// through ResultsStore::trials(); thread-safe.
#ifndef QKOV_STORAGE_TRIAL_QUERIES_H_
#define QKOV_STORAGE_TRIAL_QUERIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records.h"
#include "storage/store_core.h"

namespace qkov::storage {

class TrialQueries {
 public:
  explicit TrialQueries(StoreCore* core) : core_(core) {}

  // Trials of a sweep in ordinal order; state "" = all. after_ordinal pages.
  absl::StatusOr<std::vector<TrialRecord>> ListTrials(
      const std::string& sweep_name, const std::string& state,
      int64_t after_ordinal, int limit);
  // Trials of a sweep changed at or after since_ms (for watch streams).
  absl::StatusOr<std::vector<TrialRecord>> TrialsUpdatedSince(
      const std::string& sweep_name, int64_t since_ms);
  // The at most `limit` most recently changed of those, newest first, with
  // id, state and step only (for the dashboard's event stream).
  absl::StatusOr<std::vector<TrialChange>> RecentChanges(
      const std::string& sweep_name, int64_t since_ms, int limit);
  absl::StatusOr<TrialRecord> GetTrial(
      const std::string& trial_id);  // NOT_FOUND
  // Trials of a sweep with all their final results, configs in binary
  // (axes_pb, training_pb) rather than JSON; only those changed at or after
  // since_ms when it is > 0. One snapshot of the database.
  absl::StatusOr<std::vector<TrialRecord>> TrialsWithResults(
      const std::string& sweep_name, int64_t since_ms = 0);
  // The trial's curve across attempts: the last attempt's points, and each
  // earlier attempt's points up to the step where later attempts resumed from
  // its checkpoint (docs/schema.md).
  // `name`: that curve only (read by its own key range, not by filtering
  // the trial's whole history).
  absl::StatusOr<std::vector<MetricRecord>> Metrics(
      const std::string& trial_id, const std::string& name = "");

  // The artifact named `name` (JSON) of each of `trial_ids` that has one.
  absl::StatusOr<std::map<std::string, std::string>> ArtifactsNamed(
      const std::vector<std::string>& trial_ids, const std::string& name);

  // The latest point of each curve of a trial's newest attempt that reported
  // (per name: its point at the highest step). Read from `metrics_latest`,
  // which each report keeps in its own transaction: the cost is the number
  // of curves, whatever the length of the history (docs/schema.md).
  absl::StatusOr<std::map<std::string, double>> LatestMetrics(
      const std::string& trial_id);
  // LatestMetrics of each of `trial_ids` that has any, in one read.
  absl::StatusOr<std::map<std::string, std::map<std::string, double>>>
  LatestMetricsOf(const std::vector<std::string>& trial_ids);

  // The state of the whole queue, for the server's metrics, read in one
  // snapshot: trials by state over every sweep (from sweep_counts: a row per
  // sweep and state), the queue a worker may lease from (queued trials of
  // sweeps neither paused nor cancelled), when the longest-waiting of the
  // trials next in line (each leasable sweep's first in queue order) was
  // queued, and the workers that hold running leases. Cost: a few rows and
  // one index seek per sweep, plus one index range over the running trials;
  // nothing grows with the queue.
  absl::StatusOr<QueueState> ReadQueueState();

 private:
  StoreCore* core_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_TRIAL_QUERIES_H_
