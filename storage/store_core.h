// StoreCore: what every subject of the results store shares (the writer
// connection and its lock, the group-commit queue, the read pools, the
// adaptive follow-up, the event sink), and the steps that writes of more
// than one subject take inside their transaction: fencing a lease, ending
// an attempt's event, inserting trials, running an adaptive sweep's
// follow-up, assembling a curve across attempts.
//
// Internal to storage/: callers use ResultsStore (storage/results_store.h)
// and its subjects (sweep_queries.h, trial_queries.h, lease_queries.h,
// result_queries.h, search_queries.h), each of which holds a StoreCore*.
// The state is public to them; what guards what is written on each member.
//
// Each step is written beside the queries of its subject: CheckLease in
// lease_queries.cc, EndedByLocked in result_queries.cc, SweepId,
// TrainingIdLocked and InsertTrialsLocked in sweep_queries.cc,
// FollowUpLocked and AfterTrialsEndedLocked in search_queries.cc,
// AttemptCutoffs in trial_queries.cc; the write path in store_core.cc.
#ifndef QKOV_STORAGE_STORE_CORE_H_
#define QKOV_STORAGE_STORE_CORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "storage/database.h"
#include "storage/reader_pool.h"
#include "storage/records.h"
#include "storage/wal_checkpointer.h"
#include "storage/write_queue.h"

namespace qkov::storage {

class StoreCore {
 public:
  explicit StoreCore(std::unique_ptr<Database> writer)
      : db(std::move(writer)) {}
  // Runs what is queued, then stops the checkpoint thread.
  ~StoreCore();

  // Runs `op` as one write of the WriteQueue (see its contract: `op` runs on
  // the writer thread with mu held, may run twice, and must set its outputs
  // afresh on each run).
  absl::Status Write(absl::FunctionRef<absl::Status()> op, bool alone = false)
      ABSL_LOCKS_EXCLUDED(mu);
  // Write, for writes that start or end attempts: `op` adds its events to
  // `events` (RecordEndLocked and friends), and once the write committed they
  // go to the sink.
  absl::Status WriteWithEvents(absl::FunctionRef<absl::Status()> op)
      ABSL_LOCKS_EXCLUDED(mu);
  // Adds the event of an ended attempt, with its task and duration read
  // from the attempt's row (nothing is read without a sink).
  absl::Status RecordEndLocked(TrialEvent::Kind kind,
                               const std::string& trial_id, int attempt,
                               const std::string& worker_id,
                               const std::string& state,
                               const std::string& reason, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Whether (trial_id, attempt) was ended `state` by `worker_id`.
  absl::StatusOr<bool> EndedByLocked(const std::string& worker_id,
                                     const std::string& trial_id, int attempt,
                                     const char* state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // OK when `attempt` holds a live lease on the trial at now_ms, granted to
  // `worker_id` (PERMISSION_DENIED when granted to another).
  absl::Status CheckLease(const std::string& worker_id,
                          const std::string& trial_id, int attempt,
                          int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The sweep's id without its counts; NOT_FOUND for an unknown name.
  static absl::StatusOr<int64_t> SweepId(Database* db, const std::string& name);
  // The id of `training_pb` in `trainings`, inserted when new (0 for '').
  absl::StatusOr<int64_t> TrainingIdLocked(const std::string& training_pb)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Inserts `trials` into the sweep after its last ordinal (a config_hash
  // already there is left as it is) and counts them queued. Returns how
  // many were added; *existing gets how many were there.
  absl::StatusOr<int64_t> InsertTrialsLocked(
      int64_t sweep_id, int64_t training_id,
      const std::vector<NewTrial>& trials, int64_t now_ms, int64_t* existing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Runs the follow-up of an adaptive sweep and stores what it returns;
  // returns the trials added.
  absl::StatusOr<int64_t> FollowUpLocked(int64_t sweep_id, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // After trials ended in this transaction: FollowUpLocked once for each
  // of their sweeps that is adaptive and not cancelled.
  absl::Status AfterTrialsEndedLocked(absl::Span<const std::string> trial_ids,
                                      int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The trial's curve is the last attempt's points, plus each earlier
  // attempt's points up to where every later attempt resumed from its
  // checkpoint: attempt -> the last step of it kept (-1: none; an attempt
  // followed by a restart from step 0 contributes none).
  static absl::StatusOr<std::map<int64_t, int64_t>> AttemptCutoffs(
      Database* db, const std::string& trial_id);

  // Testing hooks for the group commit. `hook` runs on the writer thread
  // before it takes each group from the queue, with no lock held.
  void SetBeforeGroupHookForTesting(std::function<void()> hook);
  // Writes queued and not yet committed.
  size_t QueuedWritesForTesting();
  // Runs `op` on the writer connection as one write of a group.
  absl::Status WriteForTesting(std::function<absl::Status(Database*)> op);

  // The writer connection; every write runs on it with `mu` held.
  absl::Mutex mu;
  std::unique_ptr<Database> db ABSL_GUARDED_BY(mu);
  // Reads never take `mu` (docs/architecture.md, "Reads and the writer"):
  // they run on read-only connections, whose WAL snapshots let them read
  // while the writer commits. `readers` serves researchers and dashboards;
  // `worker_readers` the reads inside a worker's call (its identity, early
  // stopping), so that no number of watchers or queries delays a report.
  std::unique_ptr<ReaderPool> readers;
  std::unique_ptr<ReaderPool> worker_readers;
  // sweep_id -> its first attempt's start, once there is one (FillCounts).
  absl::Mutex first_started_mu;
  absl::flat_hash_map<int64_t, int64_t> first_started_ms
      ABSL_GUARDED_BY(first_started_mu);
  FollowUpFn follow_up ABSL_GUARDED_BY(mu);
  // The leasing table's flag, read at Open and written with it.
  bool leasing_paused ABSL_GUARDED_BY(mu) = false;
  // Set before the first write (ResultsStore::SetEventSink), then only read.
  TrialEventSink event_sink;
  // The events of the write running now (WriteWithEvents).
  std::vector<TrialEvent> events ABSL_GUARDED_BY(mu);
  std::unique_ptr<WalCheckpointer> checkpointer;  // null when read-only
  std::unique_ptr<WriteQueue> writes;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_STORE_CORE_H_
