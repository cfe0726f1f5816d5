// ResultsStore: every read and write the coordinator makes, as typed calls
// over one SQLite file. Each write call is atomic, so a crash leaves either
// all of a report or none of it.
//
// The calls live in rooms by subject: sweep_queries.cc (sweeps and their
// owners), lease_queries.cc (workers, leases, fencing, expiry),
// result_queries.cc (metric points and completions), trial_queries.cc
// (reading trials back), search_queries.cc (adaptive sweeps: their
// follow-up, searches and early stops); results_store.cc opens the store
// and wires the write path.
//
// Writes go through a WriteQueue (storage/write_queue.h: group commit on a
// writer thread, a refused write undone alone), and a WalCheckpointer
// (storage/wal_checkpointer.h) keeps the WAL bounded beside it. A write
// returns only after the transaction holding it committed, so whatever a
// caller acknowledges is on disk (docs/architecture.md).
//
// Fencing: calls about a running trial carry (trial_id, attempt). They
// succeed only while that attempt holds the trial's lease and the lease has
// not expired at `now_ms`; otherwise FAILED_PRECONDITION and nothing is
// written (docs/protocol.md).
//
// Thread safety: all methods are thread-safe. Reads run on pooled read-only
// connections (storage/reader_pool.h) and never wait for the writer; writes
// go through the group-commit queue.
#ifndef QKOV_STORAGE_RESULTS_STORE_H_
#define QKOV_STORAGE_RESULTS_STORE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "storage/database.h"
#include "storage/reader_pool.h"
#include "storage/wal_checkpointer.h"
#include "storage/write_queue.h"

namespace qkov::storage {

// Trial states as stored in trials.state.
inline constexpr char kQueued[] = "queued";
inline constexpr char kRunning[] = "running";
inline constexpr char kDone[] = "done";
inline constexpr char kFailed[] = "failed";
inline constexpr char kDiverged[] = "diverged";
inline constexpr char kPreempted[] = "preempted";
inline constexpr char kCancelled[] = "cancelled";
inline constexpr char kStoppedEarly[] = "stopped_early";

// Who asks for a change: the name of the caller's token ('' without
// tokens), and whether it holds the admin role. A sweep's owner, or an
// admin, may cancel, pause, resume, retry or extend it; a sweep with no
// owner ('') is anyone's (docs/security.md).
struct Actor {
  std::string name;
  bool admin = false;
};

// What DeleteSweep removed.
struct DeletedSweep {
  int64_t trials = 0;
  int64_t metric_points = 0;  // curve points (rows of metrics)
  // The database's free pages after less before this call, in bytes: space
  // inside the file that new rows reuse (VACUUM gives it back to the disk).
  int64_t bytes_freed = 0;
};

// The server-wide leasing switch (SetLeasing).
struct LeasingRecord {
  bool paused = false;
  std::string reason;
  std::string actor;     // who set it
  int64_t since_ms = 0;  // when it last changed (0: never)
};

struct SweepRecord {
  int64_t sweep_id = 0;
  std::string name;
  std::string owner;  // Actor::name of the submitter
  std::string description;
  std::string spec_json;
  // Submit only: the submission's training part as a serialized TrialConfig
  // (stored once in `trainings`; see NewTrial::axes_pb).
  std::string training_pb;
  int priority = 0;
  int max_attempts = 3;
  bool cancelled = false;
  bool paused = false;
  int64_t created_ms = 0;
  int64_t total_trials = 0;
  std::map<std::string, int64_t> counts;  // state -> trials
  int64_t ended_last_10min = 0;  // trials ended done/diverged/failed in
                                 // 10 min (sweep_ended, docs/schema.md)
  int64_t first_started_ms = 0;  // 0: nothing started yet
  // Grows from its own results (see FollowUp); set at submit.
  bool adaptive = false;
};

// A trial's id: its sweep's id and its ordinal, "<sweep_id>-<ordinal>" with
// the ordinal zero-padded to 8 digits ("3-00000042"). The store assigns it.
// Ids sort in grid order within a sweep, so the rows of trials leased one
// after another (attempts, results, artifacts, metrics, all keyed by
// trial_id) sit on the same B-tree pages: with hashed ids each completed
// trial dirtied pages of its own (4x the time for those rows in plain
// SQLite; about half the benchmark's batched rate, docs/PERFORMANCE.md).
// Trials stored by older builds have 16-hex-digit ids; both forms live
// side by side.
std::string TrialIdOf(int64_t sweep_id, int64_t ordinal);

// A grid point to store. Its ordinal is its position among the points the
// sweep gets: the store numbers added points after the sweep's existing ones.
struct NewTrial {
  std::string config_json;
  std::string config_hash;
  std::string parameterization;
  double lr_ratio = 0;
  double eta_ov = 0;
  uint64_t seed = 0;
  // The axes of the config as a serialized TrialConfig; with the sweep
  // record's training_pb appended it parses as the full config, what leases
  // send (no JSON parsing on the hot path). Empty: leases parse config_json.
  std::string axes_pb;
  // A trial of a sweep's arm: its own training part (the same form as
  // SweepRecord::training_pb), stored once in `trainings` like the sweep's.
  // Empty: the sweep record's.
  std::string training_pb;
};

struct AttemptRecord {
  int attempt = 0;
  std::string worker_id;
  std::string state;
  int64_t started_ms = 0;
  int64_t ended_ms = 0;  // 0 while running
  std::string error;
  std::string provenance_json;
};

struct ArtifactRecord {
  std::string name;
  std::string kind;     // "heatmap"
  std::string content;  // JSON
};

struct TrialRecord {
  std::string trial_id;
  std::string sweep_name;
  int64_t ordinal = 0;
  std::string config_json;
  std::string config_hash;
  std::string state;
  int attempts = 0;
  int failures = 0;
  int64_t last_step = 0;
  int64_t updated_ms = 0;
  std::map<std::string, double>
      results;  // filled by GetTrial / TrialsWithResults
  // TrialsWithResults only: the config in binary, as leases carry it (the
  // trial's axes, and its sweep's training part; empty for trials stored
  // before schema 2, whose config_json is filled instead).
  std::string axes_pb;
  std::string training_pb;
  // TrialsWithResults only: the first attempt's start and the last
  // attempt's end (Unix ms; 0: none, or that attempt has not ended).
  int64_t started_ms = 0;
  int64_t last_ended_ms = 0;
  std::vector<AttemptRecord> attempt_history;  // filled by GetTrial
  std::vector<ArtifactRecord> artifacts;       // filled by GetTrial
};

// A trial's state as a change feed reports it.
struct TrialChange {
  std::string trial_id;
  std::string state;
  int64_t last_step = 0;
};

struct LeaseRecord {
  std::string trial_id;
  std::string sweep_name;
  int attempt = 0;
  std::string config_json;
  std::string config_pb;  // binary TrialConfig (axes_pb + training_pb);
                          // empty for trials stored before schema 2 (parse
                          // config_json instead)
  int64_t expires_ms = 0;
  std::string checkpoint;
  int64_t checkpoint_step = 0;  // step the checkpoint resumes at (0: fresh)
};

struct MetricRecord {
  int64_t step = 0;
  std::string name;
  double value = 0;
};

// What a worker reports when a trial ends (CompleteTrial).
struct Completion {
  std::string worker_id;  // must hold the lease
  std::string trial_id;
  int attempt = 0;
  bool diverged = false;
  std::map<std::string, double> results;
  std::vector<ArtifactRecord> artifacts;
  std::vector<MetricRecord> final_points;
  std::string provenance_json;
  int64_t steps = 0;
};

struct SubmitOutcome {
  SweepRecord sweep;
  int64_t added = 0;
  int64_t existing = 0;
  int64_t requeued = 0;  // cancelled points queued again
};

enum class LeaseAvailability { kLeased, kNoWorkNow, kNoWork };

// What a write did to a trial's attempts, told to the event sink
// (ResultsStore::SetEventSink) after the transaction holding it committed:
// the server's metrics and logs are built from these, so they count what is
// stored, never a refused or repeated call.
struct TrialEvent {
  enum class Kind {
    kLeased,        // a new attempt started (a renewed lease is not one)
    kExpired,       // its lease ran out: the attempt is lost
    kCompleted,     // ended done or diverged (`state`)
    kFailed,        // the worker reported a failure
    kPreempted,     // handed back by a stopping worker
    kStoppedEarly,  // an adaptive sweep's early-stopping rule ended it
  };
  Kind kind = Kind::kLeased;
  std::string trial_id;
  std::string sweep_name;  // kLeased only
  int attempt = 0;
  std::string worker_id;
  // The trial's state after the event: running, queued (to be retried),
  // done, diverged, failed, stopped_early.
  std::string state;
  // Ended attempts: the trial's task ("synthetic", "squad", ...: its
  // TaskKind without TASK_, lower case) and the attempt's time from lease
  // to end. Empty and -1 for kLeased.
  std::string task;
  int64_t duration_ms = -1;
  std::string reason;  // kExpired, kFailed, kPreempted, kStoppedEarly
};
using TrialEventSink = std::function<void(const std::vector<TrialEvent>&)>;

// The name of a TrialEvent::Kind in logs: leased, expired, completed,
// failed, preempted, stopped_early.
const char* TrialEventName(TrialEvent::Kind kind);

// One search of an adaptive sweep as stored (table `searches`).
struct SearchRecord {
  std::string group;  // the combination of the other axes it searches
  std::string state;  // running, found, reached_at_lo, ...
  std::string outcome_json;
};

// What an adaptive sweep adds to itself: trials (their training part as
// SweepRecord::training_pb), and its searches' state.
struct FollowUp {
  std::string training_pb;
  std::vector<NewTrial> trials;
  std::vector<SearchRecord> searches;
};

// An adaptive sweep's follow-up (server/core/adaptive_sweep.h): given the
// sweep and every trial of it (id, hash, state, axes_pb or config_json,
// results), what to add. It must depend on nothing else, so that running it
// again on the same trials adds nothing.
using FollowUpFn = std::function<absl::StatusOr<FollowUp>(
    const SweepRecord& sweep, const std::vector<TrialRecord>& trials)>;

class ResultsStore {
 public:
  // Opens or creates the database at `path` and migrates it.
  static absl::StatusOr<std::unique_ptr<ResultsStore>> Open(
      const std::string& path, const Database::Options& options = {});
  // Stops the checkpoint thread; SQLite checkpoints the rest on close.
  ~ResultsStore();

  // Creates the sweep (owned by `actor`), or extends an existing sweep of
  // the same name with the grid points (by config_hash) it does not have
  // yet. The stored spec is replaced by the new one when points were added.
  // Extending someone else's sweep is PERMISSION_DENIED (see Actor).
  absl::StatusOr<SubmitOutcome> SubmitSweep(const SweepRecord& sweep,
                                            const std::vector<NewTrial>& trials,
                                            int64_t now_ms,
                                            const Actor& actor = {});

  absl::StatusOr<SweepRecord> GetSweep(const std::string& name);  // NOT_FOUND
  absl::StatusOr<std::vector<SweepRecord>> ListSweeps();
  // These change a sweep: NOT_FOUND, or PERMISSION_DENIED when `actor` may
  // not (see Actor), checked in the transaction that changes it;
  // FAILED_PRECONDITION for a sweep being deleted.
  //
  // Marks the sweep cancelled; queued and running trials become cancelled
  // (running leases stop at their next heartbeat). Returns trials cancelled.
  absl::StatusOr<int64_t> CancelSweep(const std::string& name, int64_t now_ms,
                                      const Actor& actor = {});
  // Deletes a sweep and everything stored under it (trials, attempts,
  // curves, results, artifacts, searches, counts). FAILED_PRECONDITION
  // while a trial is queued, running or preempted (cancel it first). The
  // first write marks it deleted (deleted_sweeps; every other change of it
  // is refused from then on) and cancelled; whole trials then go in writes
  // of about kDeletePointsPerWrite curve points, so that workers' writes
  // wait at most one of them; the last write removes the sweep's row and
  // frees its name. Interrupted (a restart), calling it again finishes it.
  static constexpr int64_t kDeletePointsPerWrite = 50000;
  absl::StatusOr<DeletedSweep> DeleteSweep(const std::string& name,
                                           int64_t now_ms,
                                           const Actor& actor = {});
  // The follow-up of adaptive sweeps. The store runs it in the transaction
  // that submits an adaptive sweep and in each that ends trials of it (done,
  // diverged, failed; once per sweep and transaction; not for a cancelled
  // sweep), and inserts the trials it returns (a config_hash already in the
  // sweep is left as it is) and its searches in that same transaction. Set
  // it before the first write; an adaptive sweep without one is refused
  // (FAILED_PRECONDITION).
  void SetFollowUp(FollowUpFn follow_up);
  // Receives the events of every committed write, on the calling thread,
  // after the write returned (no store lock held; the sink must not block
  // for long). Set it before the first write.
  void SetEventSink(TrialEventSink sink);
  // The searches of a sweep, by group (NOT_FOUND for an unknown sweep).
  absl::StatusOr<std::vector<SearchRecord>> Searches(
      const std::string& sweep_name);

  // The server-wide switch for maintenance: while paused, LeaseBatch and
  // CompleteAndLease lease nothing new (kNoWorkNow; a worker's held leases
  // are still sent again), checked in the transaction that would lease.
  // An admin's alone (PERMISSION_DENIED otherwise); `reason` at most 200
  // bytes of UTF-8. Persists across restarts.
  absl::Status SetLeasing(bool paused, const std::string& reason,
                          int64_t now_ms, const Actor& actor);
  absl::StatusOr<LeasingRecord> Leasing();

  // Paused sweeps get no new leases; running trials go on.
  absl::Status SetPaused(const std::string& name, bool paused, int64_t now_ms,
                         const Actor& actor = {});
  // Failed trials of the sweep go back to the queue with a fresh retry
  // budget. Returns how many.
  absl::StatusOr<int64_t> RetryFailed(const std::string& name, int64_t now_ms,
                                      const Actor& actor = {});

  // A worker as registered: `key_sha256` is the hex SHA-256 of the key the
  // coordinator handed it ('' for workers registered before keys existed),
  // `principal` the name of its token.
  struct WorkerIdentity {
    std::string key_sha256;
    std::string principal;
  };
  absl::Status RegisterWorker(const std::string& worker_id,
                              const std::string& name, int slots,
                              const std::string& provenance_json,
                              const WorkerIdentity& identity, int64_t now_ms);
  // NOT_FOUND for a worker that never registered.
  absl::StatusOr<WorkerIdentity> GetWorkerIdentity(
      const std::string& worker_id);

  // Leases the next queued trial: highest sweep priority, then preempted
  // trials (queue_rank < 0), then submission order.
  absl::StatusOr<LeaseAvailability> LeaseNext(const std::string& worker_id,
                                              int64_t now_ms, int64_t lease_ms,
                                              LeaseRecord* lease);
  // How many trials one batch lease may hold, given its first trial (the
  // coordinator's estimate of what fits the worker's memory). Called inside
  // the lease's transaction; must not call the store.
  using LeaseSizer = std::function<int(const LeaseRecord& first)>;

  // LeaseNext, then up to max_trials - 1 more queued trials of the same sweep
  // and parameterization (trials that can train together), in one
  // transaction; with `sizer`, no more than it allows (and always one).
  // `leases` gets at least one lease when kLeased.
  //
  // `resend_held`: the worker holds no lease now (it asks between batches),
  // so trials still leased to it were granted by a call whose reply it never
  // got (docs/protocol.md, "Idempotence"). Those come back first, as the
  // same attempts with their leases renewed, and nothing new is leased.
  absl::StatusOr<LeaseAvailability> LeaseBatch(
      const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
      int max_trials, std::vector<LeaseRecord>* leases,
      const LeaseSizer& sizer = nullptr, bool resend_held = false);

  // Leases belong to the worker they were granted to: every call below that
  // names a lease also names the worker, and a lease held by another worker
  // is PERMISSION_DENIED, checked in the transaction that writes.
  //
  // Renews a lease. Returns false (and renews nothing) when the attempt no
  // longer holds the lease: the worker must stop the trial.
  absl::StatusOr<bool> Heartbeat(const std::string& worker_id,
                                 const std::string& trial_id, int attempt,
                                 int64_t step, int64_t now_ms, int64_t lease_ms,
                                 int64_t* expires_ms);

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

  // After a restart: every running lease expires no sooner than `until_ms`
  // (now + one lease period). Workers could not renew while the server was
  // down; the lease clock runs again from the restart. Returns how many
  // leases were extended.
  absl::StatusOr<int64_t> ExtendRunningLeases(int64_t until_ms);

  // Ends an attempt. preempted: back to the front of the queue with
  // `checkpoint`, no retry budget spent. Otherwise the failure counts; the
  // trial is queued again while failures < max_attempts, else failed.
  // Returns the trial's new state.
  // `permanent`: the trial fails at once, whatever its retry budget (an
  // attempt that cannot succeed anywhere, such as a config too big to
  // allocate).
  absl::StatusOr<std::string> FailTrial(
      const std::string& worker_id, const std::string& trial_id, int attempt,
      const std::string& reason, bool preempted, const std::string& checkpoint,
      int64_t checkpoint_step, int64_t now_ms, bool permanent = false);

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

  // Requeues (or fails, when the budget is spent) every running trial whose
  // lease expired before now_ms. Returns how many.
  absl::StatusOr<int64_t> ExpireLeases(int64_t now_ms);

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

  // The best (lowest, or highest with `higher`) non-NaN value of curve
  // `name` at steps <= `step` of the trial's curve across attempts (as
  // Metrics assembles it); NaN when it has none. Early stopping's "best so
  // far": answered from `metrics_latest`'s running minimum and maximum of
  // each attempt, and by a range read of one curve only for an attempt whose
  // points pass `step` or its successor's resume point.
  absl::StatusOr<double> BestSoFar(const std::string& trial_id,
                                   const std::string& name, int64_t step,
                                   bool higher);

  // Interrupts every running researcher's or dashboard's read and refuses
  // every later one (CANCELLED): a stopping server does not wait for a long
  // read. Writes, and the reads of workers' calls, go on, so that trials
  // finishing during the shutdown's grace are stored.
  void StopReads();
  // The pool serving researchers' and dashboards' reads (tests hold all of
  // its connections to show that writes and workers' reads do not need
  // them).
  ReaderPool* ClientReadersForTesting() { return readers_.get(); }

  // True when no trial anywhere is queued, preempted or running.
  absl::StatusOr<bool> AllIdle();

  // The state of the whole queue, for the server's metrics, read in one
  // snapshot: trials by state over every sweep (from sweep_counts: a row per
  // sweep and state), the queue a worker may lease from (queued trials of
  // sweeps neither paused nor cancelled), when the longest-waiting of the
  // trials next in line (each leasable sweep's first in queue order) was
  // queued, and the workers that hold running leases. Cost: a few rows and
  // one index seek per sweep, plus one index range over the running trials;
  // nothing grows with the queue.
  struct QueueState {
    std::map<std::string, int64_t> trials_by_state;
    int64_t queue_depth = 0;
    int64_t oldest_queued_ms = 0;            // 0: nothing leasable is queued
    std::vector<std::string> lease_holders;  // distinct worker ids
  };
  absl::StatusOr<QueueState> ReadQueueState();

  // PRAGMA integrity_check == "ok".
  absl::StatusOr<bool> IntegrityOk();

  // Writes, and the transactions that committed them, since Open: their
  // ratio is the mean group size (the coordinator benchmark prints it).
  struct WriteStats {
    int64_t writes = 0;
    int64_t commits = 0;
    int64_t busy_ns = 0;      // time spent running groups (the writer's load)
    int64_t checkpoints = 0;  // WAL checkpoints run by the background thread
    // Groups run a second time, a savepoint per write, because a write
    // failed after changing rows (CommitGroup).
    int64_t replays = 0;
    // Write transactions by time taken (WriteQueue::Stats::group_time).
    std::array<int64_t, WriteQueue::kGroupTimeBuckets> group_time{};
  };
  WriteStats GetWriteStats();

  // The writer connection's statement profile (Database::StatementProfile);
  // empty unless opened with Options::profile_statements.
  std::vector<Database::StatementTime> WriterStatementProfile();
  // The same for every read connection, both pools summed.
  std::vector<Database::StatementTime> ReaderStatementProfile();

  // Testing hooks for the group commit. `hook` runs on the writer thread
  // before it takes each group from the queue, with no lock held.
  void SetBeforeGroupHookForTesting(std::function<void()> hook);
  // Writes queued and not yet committed.
  size_t QueuedWritesForTesting();
  // Runs `op` on the writer connection as one write of a group.
  absl::Status WriteForTesting(std::function<absl::Status(Database*)> op);

 private:
  explicit ResultsStore(std::unique_ptr<Database> db) : db_(std::move(db)) {}

  // Runs `op` as one write of the WriteQueue (see its contract: `op` runs on
  // the writer thread with mu_ held, may run twice, and must set its outputs
  // afresh on each run).
  absl::Status Write(absl::FunctionRef<absl::Status()> op, bool alone = false)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Write, for writes that start or end attempts: `op` adds its events to
  // events_ (RecordEndLocked and friends), and once the write committed they
  // go to the sink.
  absl::Status WriteWithEvents(absl::FunctionRef<absl::Status()> op)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Adds the event of an ended attempt, with its task and duration read
  // from the attempt's row (nothing is read without a sink).
  absl::Status RecordEndLocked(TrialEvent::Kind kind,
                               const std::string& trial_id, int attempt,
                               const std::string& worker_id,
                               const std::string& state,
                               const std::string& reason, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::StatusOr<LeaseAvailability> LeaseBatchLocked(
      const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
      int max_trials, std::vector<LeaseRecord>* leases, const LeaseSizer& sizer,
      bool resend_held = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AddCompanionsLocked(int64_t sweep_id,
                                   const std::string& parameterization,
                                   int max_trials,
                                   std::vector<LeaseRecord>* leases)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartLeasesLocked(const std::string& worker_id, int64_t now_ms,
                                 int64_t lease_ms,
                                 const std::string& sweep_name,
                                 std::vector<LeaseRecord>* leases)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The leases still granted to `worker_id`, renewed until now + lease_ms.
  absl::Status ResendHeldLocked(const std::string& worker_id, int64_t now_ms,
                                int64_t lease_ms,
                                std::vector<LeaseRecord>* leases)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True when it wrote; false when the attempt was already ended `state` by
  // the same worker (a repeated call, nothing written).
  absl::StatusOr<bool> CompleteTrialLocked(const Completion& c, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether (trial_id, attempt) was ended `state` by `worker_id`.
  absl::StatusOr<bool> EndedByLocked(const std::string& worker_id,
                                     const std::string& trial_id, int attempt,
                                     const char* state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SubmitSweepLocked(const SweepRecord& sweep,
                                 const std::vector<NewTrial>& trials,
                                 int64_t now_ms, const Actor& actor,
                                 SubmitOutcome* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The sweep's id when `actor` may change it (`verb` names the change in
  // the refusal).
  absl::StatusOr<int64_t> OwnedSweepIdLocked(const std::string& name,
                                             const Actor& actor,
                                             const char* verb)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CancelSweepLocked(int64_t sweep_id, int64_t now_ms,
                                 int64_t* cancelled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // DeleteSweep's steps: marks the sweep deleted (returns its id), deletes
  // whole trials up to about kDeletePointsPerWrite points (false when none
  // was left), then the sweep's own rows.
  absl::StatusOr<int64_t> MarkDeletedLocked(const std::string& name,
                                            int64_t now_ms, const Actor& actor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<bool> DeleteTrialsLocked(int64_t sweep_id, DeletedSweep* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status DeleteSweepRowsLocked(int64_t sweep_id, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The database's free pages, in bytes.
  absl::StatusOr<int64_t> FreeBytesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Inserts `trials` into the sweep after its last ordinal (a config_hash
  // already there is left as it is) and counts them queued. Returns how
  // many were added; *existing gets how many were there.
  absl::StatusOr<int64_t> InsertTrialsLocked(
      int64_t sweep_id, int64_t training_id,
      const std::vector<NewTrial>& trials, int64_t now_ms, int64_t* existing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The id of `training_pb` in `trainings`, inserted when new (0 for '').
  absl::StatusOr<int64_t> TrainingIdLocked(const std::string& training_pb)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the follow-up of an adaptive sweep and stores what it returns;
  // returns the trials added.
  absl::StatusOr<int64_t> FollowUpLocked(int64_t sweep_id, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After trials ended in this transaction: FollowUpLocked once for each
  // of their sweeps that is adaptive and not cancelled.
  absl::Status AfterTrialsEndedLocked(absl::Span<const std::string> trial_ids,
                                      int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status AddMetricsLocked(const std::string& worker_id,
                                const std::string& trial_id, int attempt,
                                const std::vector<MetricRecord>& points,
                                int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // OK when `attempt` holds a live lease on the trial at now_ms, granted to
  // `worker_id` (PERMISSION_DENIED when granted to another).
  absl::Status CheckLease(const std::string& worker_id,
                          const std::string& trial_id, int attempt,
                          int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status InsertMetrics(const std::string& trial_id, int attempt,
                             const std::vector<MetricRecord>& points)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<SweepRecord> GetSweepLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // On `db`: db_ with mu_ held, or a connection lent by a ReaderPool.
  absl::StatusOr<SweepRecord> SweepOn(Database* db, const std::string& name);
  absl::Status FillCounts(Database* db, SweepRecord* sweep);
  // The sweep's id without its counts; NOT_FOUND for an unknown name.
  absl::StatusOr<int64_t> SweepId(Database* db, const std::string& name);
  // The trial's curve is the last attempt's points, plus each earlier
  // attempt's points up to where every later attempt resumed from its
  // checkpoint: attempt -> the last step of it kept (-1: none; an attempt
  // followed by a restart from step 0 contributes none).
  static absl::StatusOr<std::map<int64_t, int64_t>> AttemptCutoffs(
      Database* db, const std::string& trial_id);
  // ExpireLeases inside the caller's transaction.
  absl::StatusOr<int64_t> ExpireLeasesLocked(int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<Database> db_ ABSL_GUARDED_BY(mu_);
  // Reads never take mu_ (docs/architecture.md, "Reads and the writer"):
  // they run on read-only connections, whose WAL snapshots let them read
  // while the writer commits. `readers_` serves researchers and dashboards;
  // `worker_readers_` the reads inside a worker's call (its identity, early
  // stopping), so that no number of watchers or queries delays a report.
  std::unique_ptr<ReaderPool> readers_;
  std::unique_ptr<ReaderPool> worker_readers_;
  // sweep_id -> its first attempt's start, once there is one (FillCounts).
  absl::Mutex first_started_mu_;
  absl::flat_hash_map<int64_t, int64_t> first_started_ms_
      ABSL_GUARDED_BY(first_started_mu_);
  FollowUpFn follow_up_ ABSL_GUARDED_BY(mu_);
  // The leasing table's flag, read at Open and written with it.
  bool leasing_paused_ ABSL_GUARDED_BY(mu_) = false;
  // Set before the first write (SetEventSink), then only read.
  TrialEventSink event_sink_;
  // The events of the write running now (WriteWithEvents).
  std::vector<TrialEvent> events_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<WalCheckpointer> checkpointer_;  // null when read-only
  std::unique_ptr<WriteQueue> writes_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_RESULTS_STORE_H_
