// SearchQueries: adaptive sweeps (the follow-up that adds their trials,
// their stored searches, early stops and the peers' values and best-so-far
// a trial is judged by). Reached through ResultsStore::searches();
// thread-safe.
#ifndef QKOV_STORAGE_SEARCH_QUERIES_H_
#define QKOV_STORAGE_SEARCH_QUERIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records.h"
#include "storage/store_core.h"

namespace qkov::storage {

class SearchQueries {
 public:
  explicit SearchQueries(StoreCore* core) : core_(core) {}

  // The follow-up of adaptive sweeps. The store runs it in the transaction
  // that submits an adaptive sweep and in each that ends trials of it (done,
  // diverged, failed; once per sweep and transaction; not for a cancelled
  // sweep), and inserts the trials it returns (a config_hash already in the
  // sweep is left as it is) and its searches in that same transaction. Set
  // it before the first write; an adaptive sweep without one is refused
  // (FAILED_PRECONDITION).
  void SetFollowUp(FollowUpFn follow_up);
  // The searches of a sweep, by group (NOT_FOUND for an unknown sweep).
  absl::StatusOr<std::vector<SearchRecord>> Searches(
      const std::string& sweep_name);
  // Ends the attempt and its trial stopped_early (an adaptive sweep's
  // early-stopping rule; fenced as AddMetrics): its metric points stay, it
  // has no results, its lease and checkpoint are dropped, and it is never
  // leased again (RetryFailed and re-submission leave it as it is).
  absl::Status StopEarly(const std::string& worker_id,
                         const std::string& trial_id, int attempt,
                         const std::string& reason, int64_t now_ms);
  // The value of curve `name` at `step` of each other trial of `trial_id`'s
  // sweep that reported it (its newest attempt that did), for judging a
  // trial against its peers.
  absl::StatusOr<std::vector<double>> PeerValuesAt(const std::string& trial_id,
                                                   const std::string& name,
                                                   int64_t step);
  // The sweep a trial belongs to: its id and stored spec (NOT_FOUND).
  absl::StatusOr<std::pair<int64_t, std::string>> SweepSpecOfTrial(
      const std::string& trial_id);
  // The best (lowest, or highest with `higher`) non-NaN value of curve
  // `name` at steps <= `step` of the trial's curve across attempts (as
  // Metrics assembles it); NaN when it has none. Early stopping's "best so
  // far": answered from `metrics_latest`'s running minimum and maximum of
  // each attempt, and by a range read of one curve only for an attempt whose
  // points pass `step` or its successor's resume point.
  absl::StatusOr<double> BestSoFar(const std::string& trial_id,
                                   const std::string& name, int64_t step,
                                   bool higher);

 private:
  StoreCore* core_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_SEARCH_QUERIES_H_
