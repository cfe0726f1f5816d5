// Coordinator: the server's logic behind both gRPC services, in terms of
// qkov.v1 messages and absl::Status (no gRPC). It validates and expands
// sweeps, leases trials with expiring, fenced leases, stores reports through
// ResultsStore, and answers queries. The services in server/service are thin
// adapters over these methods. The client API is in coordinator.cc, the
// worker API in coordinator_workers.cc.
//
// Thread safety: all methods are thread-safe.
#ifndef QKOV_SERVER_CORE_COORDINATOR_H_
#define QKOV_SERVER_CORE_COORDINATOR_H_

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
#include "common/clock.h"
#include "qkov/v1/sweep.pb.h"
#include "qkov/v1/worker.pb.h"
#include "server/core/result_rows.h"
#include "server/core/sweep_spec.h"
#include "storage/results_store.h"
#include "storage/sql_console.h"

namespace qkov::core {

struct CoordinatorOptions {
  absl::Duration lease_duration = absl::Seconds(30);
  absl::Duration heartbeat_interval = absl::Seconds(5);
  absl::Duration retry_after = absl::Milliseconds(500);
  SpecLimits limits;
  int max_points_per_report = 100000;
  // Told the worker id of every worker call that proved its identity
  // (VerifyWorker), on the call's thread; for the server's count of live
  // workers (server/service/server_metrics.h). May be empty.
  std::function<void(const std::string& worker_id)> on_worker_call;
};

class Coordinator {
 public:
  static constexpr int kBriefProgressTrials = 50;

  // `store`, `clock` and `sql_console` (null: QuerySql is UNIMPLEMENTED)
  // must outlive the Coordinator.
  Coordinator(storage::ResultsStore* store, Clock* clock,
              CoordinatorOptions options,
              storage::SqlConsole* sql_console = nullptr);

  // Every call takes the Actor the service authenticated (the default, an
  // anonymous actor, is what a server without tokens passes).
  //
  // --- client API (sweep.proto) ---
  // Cancel, pause, resume, retry and re-submission are refused with
  // PERMISSION_DENIED to anyone but the sweep's owner or an admin.
  absl::StatusOr<qkov::v1::SubmitSweepResponse> SubmitSweep(
      const qkov::v1::SubmitSweepRequest& r, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::Sweep> GetSweep(const std::string& name);
  absl::StatusOr<qkov::v1::ListSweepsResponse> ListSweeps();
  absl::StatusOr<qkov::v1::CancelSweepResponse> CancelSweep(
      const std::string& name, const storage::Actor& actor = {});
  // The same owner rule; also drops what the coordinator holds of the sweep
  // in memory (result rows, progress views).
  absl::StatusOr<qkov::v1::DeleteSweepResponse> DeleteSweep(
      const std::string& name, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::Sweep> PauseSweep(
      const qkov::v1::PauseSweepRequest& r, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::RetrySweepResponse> RetrySweep(
      const std::string& name, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::ListTrialsResponse> ListTrials(
      const qkov::v1::ListTrialsRequest& r);
  absl::StatusOr<qkov::v1::Trial> GetTrial(const std::string& trial_id);
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
  // The server-wide leasing switch (docs/cluster.md, "Stop leasing"): sets
  // it when `r.paused` is set (an admin's alone: PERMISSION_DENIED), and
  // returns the state either way.
  absl::StatusOr<qkov::v1::LeasingState> Leasing(
      const qkov::v1::LeasingRequest& r, const storage::Actor& actor = {});
  // Runs the statement in the SQL console's sandbox; `cancelled` (may be
  // empty) says the client went away and ends it.
  absl::StatusOr<qkov::v1::QuerySqlResponse> QuerySql(
      const qkov::v1::QuerySqlRequest& r,
      const std::function<bool()>& cancelled = {});
  // One progress message: the sweep, whether it is finished, and trials
  // changed at or after *since (advanced to now). `brief`: the changed
  // trials carry only id, state and last step (no config, attempts or
  // latest values), the kBriefProgressTrials most recently changed of them,
  // newest first, for the dashboard's event stream.
  //
  // The full form is read once for all watchers of a sweep: a view (the
  // sweep, and its trials changed lately with their latest values) is
  // shared by every call that comes while nothing changed, or within
  // `reuse` of it (clock_'s time; WatchSweep passes kProgressReuse). A
  // shared view may be older than the call, so *since becomes the time its
  // reads began, less kSinceMarginMs: what changed after that comes in a
  // later round, and nothing is missed.
  absl::StatusOr<qkov::v1::SweepProgress> Progress(
      const std::string& name, absl::Time* since, bool brief = false,
      absl::Duration reuse = absl::ZeroDuration());
  static constexpr absl::Duration kProgressReuse = absl::Milliseconds(500);
  // How far before a view's reads the next round starts (Progress): trials
  // changed in it come again, and none committed late is missed.
  static constexpr int64_t kSinceMarginMs = 1000;
  // Changes to sweeps, trials and leases, counted, for watch streams. A
  // watcher reads ChangeCount() before it reads the state and then waits
  // on that count: a change made while it read wakes it at once, so none
  // is missed.
  uint64_t ChangeCount();
  // Blocks until the count differs from `seen` or `deadline` passes;
  // returns the count (== `seen` when nothing changed).
  uint64_t WaitForChange(uint64_t seen, absl::Time deadline);
  // Counts a change: every watcher wakes and reads again. Called by every
  // call that changes state, and by a watcher that may have read before a
  // change whose wake it did not get (HttpService::Events).
  void NotifyChange();
  // A stopping server: every WaitForChange returns at once, and Stopping()
  // tells watch streams to end (QkovServer::Shutdown).
  void StopWatches();
  bool Stopping();

  // --- worker API (worker.proto) ---
  // RegisterWorker hands out a worker_id and a secret key; every other call
  // must carry both, from the actor that registered (PERMISSION_DENIED
  // otherwise), and may use only leases granted to that worker.
  absl::StatusOr<qkov::v1::RegisterWorkerResponse> RegisterWorker(
      const qkov::v1::RegisterWorkerRequest& r,
      const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::LeaseTrialResponse> LeaseTrial(
      const qkov::v1::LeaseTrialRequest& r, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::HeartbeatResponse> Heartbeat(
      const qkov::v1::HeartbeatRequest& r, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::ReportMetricsResponse> ReportMetrics(
      const qkov::v1::ReportMetricsRequest& r,
      const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::CompleteTrialResponse> CompleteTrial(
      const qkov::v1::CompleteTrialRequest& r,
      const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::CompleteTrialsResponse> CompleteTrials(
      const qkov::v1::CompleteTrialsRequest& r,
      const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::FailTrialResponse> FailTrial(
      const qkov::v1::FailTrialRequest& r, const storage::Actor& actor = {});

  // Requeues trials whose leases expired; the server calls this periodically
  // (LeaseTrial also calls it). Returns how many.
  absl::StatusOr<int64_t> ReapExpiredLeases();
  // At start: every running lease (of workers that could not renew while
  // the server was down) expires no sooner than one lease period from now.
  // Returns how many were extended.
  absl::StatusOr<int64_t> ResumeLeases();

 private:
  int64_t NowMs() { return absl::ToUnixMillis(clock_->Now()); }
  absl::StatusOr<qkov::v1::Sweep> ToSweep(const storage::SweepRecord& r);
  absl::StatusOr<qkov::v1::Trial> ToTrial(const storage::TrialRecord& r);
  // OK when `key` is the key `worker_id` was registered with, by `actor`.
  absl::Status VerifyWorker(const std::string& worker_id,
                            const std::string& key,
                            const storage::Actor& actor);
  // Validates one completion; errors name the field (after `path`).
  absl::StatusOr<storage::Completion> ToCompletion(
      const qkov::v1::CompleteTrialRequest& r, const std::string& path);
  // The LeaseTrial reply for what the store leased.
  absl::StatusOr<qkov::v1::LeaseTrialResponse> ToLeaseResponse(
      storage::LeaseAvailability availability,
      const std::vector<storage::LeaseRecord>& leases);

  storage::ResultsStore* store_;
  storage::SqlConsole* sql_console_;
  Clock* clock_;
  const CoordinatorOptions options_;

  // Worker identities, immutable once registered: cached from the store.
  absl::Mutex workers_mu_;
  absl::flat_hash_map<std::string, storage::ResultsStore::WorkerIdentity>
      workers_ ABSL_GUARDED_BY(workers_mu_);

  // Result rows of recently queried sweeps (QueryResults, AggregateResults).
  ResultRowsCache rows_cache_;
  // SweepHeatmaps' last reply per (sweep, name, per_group), with the trials
  // it averaged.
  static constexpr size_t kHeatmapsMemo = 32;
  absl::Mutex heatmaps_mu_;
  absl::flat_hash_map<std::string, std::pair<std::vector<std::string>,
                                             qkov::v1::SweepHeatmapsResponse>>
      heatmaps_memo_ ABSL_GUARDED_BY(heatmaps_mu_);

  // A sweep's early-stopping rule, by sweep id (the prefix of its trial
  // ids), read from its stored spec on its first report; cleared on every
  // submission, which may change it.
  struct StopRule {
    bool enabled = false;
    qkov::v1::EarlyStopping rule;
    int64_t max_steps = 0;
  };
  absl::StatusOr<StopRule> StopRuleOf(const std::string& trial_id);
  // After a report is stored: the early-stopping rule's verdict on its
  // points; stops the trial (and says so in `lease`) when it says stop.
  absl::Status ApplyEarlyStopping(const qkov::v1::ReportMetricsRequest& r,
                                  qkov::v1::LeaseStatus* lease);
  absl::Mutex stop_rules_mu_;
  absl::flat_hash_map<std::string, StopRule> stop_rules_
      ABSL_GUARDED_BY(stop_rules_mu_);

  // A sweep's progress as watchers see it (Progress), shared by them.
  struct ProgressView {
    uint64_t change_count = 0;     // ChangeCount() before its reads
    int64_t read_ms = 0;           // NowMs() before its reads
    int64_t from_ms = 0;           // holds every trial changed at or after this
    qkov::v1::SweepProgress base;  // sweep and `finished`; no trials
    std::vector<std::pair<int64_t, qkov::v1::Trial>> trials;  // updated_ms
  };
  absl::StatusOr<std::shared_ptr<const ProgressView>> ReadProgressView(
      const std::string& name, int64_t from_ms);
  // Views by sweep name; at most kProgressViews (the oldest go first).
  static constexpr size_t kProgressViews = 64;
  absl::Mutex views_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const ProgressView>> views_
      ABSL_GUARDED_BY(views_mu_);

  absl::Mutex change_mu_;
  uint64_t change_seq_ ABSL_GUARDED_BY(change_mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(change_mu_) = false;
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_COORDINATOR_H_
