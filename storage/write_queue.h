// WriteQueue: group commit for one SQLite connection, after LevelDB's
// DBImpl::Write with a writer thread of its own. Callers queue writes and
// wait; the queue's thread ("qkov-writer") takes every write queued so far
// (up to 256, and never past one that must run alone) and runs them in one
// transaction, while the next ones queue up. A write returns only after the
// transaction holding it committed, so whatever a caller acknowledges is on
// disk.
//
// The writes run straight into the transaction: a savepoint around each
// would make SQLite copy every page a write changes to a sub-journal, and
// the writes of a group change the same few pages. A write that fails
// without having changed a row (sqlite3_total_changes64 unchanged) leaves
// nothing to undo. One that fails after changing rows makes the queue roll
// back and run the group again with each write inside a savepoint of its own
// (Stats::replays), so that one refused write never takes another's rows
// with it. A write may therefore run twice: it must change the database only
// through INSERT, UPDATE and DELETE, depend only on the database and its
// arguments, and set its outputs afresh on each run. docs/architecture.md.
//
// Thread safety: Write may be called from any thread but the queue's own.
#ifndef QKOV_STORAGE_WRITE_QUEUE_H_
#define QKOV_STORAGE_WRITE_QUEUE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "storage/database.h"

namespace qkov::storage {

class WriteQueue {
 public:
  // `db` is the connection writes run on and `db_mu` the mutex that guards
  // it; the queue's thread holds `db_mu` while it runs a group, so each
  // write's op runs with it held. `after_commit` (may be empty) runs on the
  // queue's thread, with `db_mu` held, after each commit. Both must outlive
  // the queue.
  WriteQueue(Database* db, absl::Mutex* db_mu,
             std::function<void()> after_commit);
  // Runs what is queued, then stops the thread.
  ~WriteQueue();
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // Runs `op` in a group-committed transaction and returns its status, or
  // the commit's error ("nothing stored, transaction rolled back: ..." when
  // SQLite ended the transaction). `alone`: in a transaction of its own
  // (large writes: a grid submission).
  absl::Status Write(absl::FunctionRef<absl::Status()> op, bool alone = false)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Upper bounds, in seconds, of the buckets of Stats::group_time: 0.5 ms
  // to 2.5 s, and a last bucket for longer ones.
  static constexpr double kGroupTimeBounds[] = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  static constexpr int kGroupTimeBuckets = std::size(kGroupTimeBounds) + 1;

  struct Stats {
    int64_t writes = 0;
    int64_t commits = 0;
    int64_t busy_ns = 0;  // time spent running groups (the writer's load)
    // Groups by the time each took, from BEGIN to COMMIT (or rollback):
    // group_time[i] counts those of at most kGroupTimeBounds[i] seconds and
    // more than the bound before (not cumulative); the last, the rest. Their
    // sum of times is busy_ns.
    std::array<int64_t, kGroupTimeBuckets> group_time{};
    // Groups run a second time, a savepoint per write, because a write
    // failed after changing rows.
    int64_t replays = 0;
  };
  Stats stats() ABSL_LOCKS_EXCLUDED(stats_mu_);

  // Testing hooks. `hook` runs on the queue's thread before it takes each
  // group, with no lock held.
  void SetBeforeGroupHookForTesting(std::function<void()> hook)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Writes queued and not yet committed.
  size_t QueuedForTesting() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Pending;
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Runs the group in one transaction; sets each write's status. Caller
  // holds *db_mu_.
  void CommitGroup(const std::vector<Pending*>& group);

  Database* const db_;
  absl::Mutex* const db_mu_;
  const std::function<void()> after_commit_;

  // Lock order: mu_ is never held while taking *db_mu_.
  absl::Mutex mu_;
  std::deque<Pending*> queue_ ABSL_GUARDED_BY(mu_);
  std::function<void()> before_group_hook_ ABSL_GUARDED_BY(mu_);
  absl::CondVar cv_;  // signalled when a write arrives or at shutdown
  bool idle_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex stats_mu_;
  Stats stats_ ABSL_GUARDED_BY(stats_mu_);
  std::thread thread_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_WRITE_QUEUE_H_
