// The store's records: what goes into the results database and comes out of
// it, as plain structs (storage/results_store.h has the calls that take and
// give them; docs/schema.md the tables behind them).
#ifndef QKOV_STORAGE_RECORDS_H_
#define QKOV_STORAGE_RECORDS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

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

// A worker as registered: `key_sha256` is the hex SHA-256 of the key the
// coordinator handed it ('' for workers registered before keys existed),
// `principal` the name of its token.
struct WorkerIdentity {
  std::string key_sha256;
  std::string principal;
};

// How many trials one batch lease may hold, given its first trial (the
// coordinator's estimate of what fits the worker's memory). Called inside
// the lease's transaction; must not call the store.
using LeaseSizer = std::function<int(const LeaseRecord& first)>;

// The state of the whole queue, for the server's metrics, read in one
// snapshot (TrialQueries::ReadQueueState).
struct QueueState {
  std::map<std::string, int64_t> trials_by_state;
  int64_t queue_depth = 0;
  int64_t oldest_queued_ms = 0;            // 0: nothing leasable is queued
  std::vector<std::string> lease_holders;  // distinct worker ids
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_RECORDS_H_
