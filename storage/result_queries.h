// ResultQueries: what a running trial reports (metric points, the
// completion with its results and artifacts), and a completion with the
// worker's next lease in one write. Reached through
// ResultsStore::results(); thread-safe.
#ifndef QKOV_STORAGE_RESULT_QUERIES_H_
#define QKOV_STORAGE_RESULT_QUERIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "storage/lease_queries.h"
#include "storage/records.h"
#include "storage/store_core.h"

namespace qkov::storage {

class ResultQueries {
 public:
  ResultQueries(StoreCore* core, LeaseQueries* leases)
      : core_(core), leases_(leases) {}

  // Stores metric points (idempotent on (trial, attempt, name, step)).
  absl::Status AddMetrics(const std::string& worker_id,
                          const std::string& trial_id, int attempt,
                          const std::vector<MetricRecord>& points,
                          int64_t now_ms);

  // Stores final results and ends the trial done (or diverged). A
  // completion of an attempt that this worker already ended done (or
  // diverged) is a retry whose reply was lost: OK, and nothing is written.
  absl::Status CompleteTrial(const Completion& c, int64_t now_ms);
  // CompleteTrial for each completion, then LeaseBatch for `worker_id`
  // (none when max_trials is 0: kNoWork, `leases` empty), as one write: the
  // results and the next lease commit together or not at all. The first
  // refused completion's status is returned.
  absl::StatusOr<LeaseAvailability> CompleteAndLease(
      absl::Span<const Completion> completions, const std::string& worker_id,
      int64_t now_ms, int64_t lease_ms, int max_trials,
      std::vector<LeaseRecord>* leases, const LeaseSizer& sizer = nullptr,
      bool resend_held = false);

 private:
  // True when it wrote; false when the attempt was already ended `state` by
  // the same worker (a repeated call, nothing written).
  absl::StatusOr<bool> CompleteTrialLocked(const Completion& c, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::Status AddMetricsLocked(const std::string& worker_id,
                                const std::string& trial_id, int attempt,
                                const std::vector<MetricRecord>& points,
                                int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::Status InsertMetrics(const std::string& trial_id, int attempt,
                             const std::vector<MetricRecord>& points)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

  StoreCore* core_;
  LeaseQueries* leases_;  // CompleteAndLease leases in its own write
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_RESULT_QUERIES_H_
