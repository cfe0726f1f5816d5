// ResultsStore: the results database (one SQLite file) and every read and
// write the coordinator makes of it, as typed calls by subject. Each write
// call is atomic, so a crash leaves either all of a report or none of it.
//
// The calls live in classes by subject, one header and one .cc each, over
// one shared core (storage/store_core.h: the writer connection, the write
// queue, the read pools):
//
// | subject | class | reached by |
// |---|---|---|
// | sweeps and their owners | SweepQueries (sweep_queries.h) | sweeps() |
// | reading trials back, the queue's state | TrialQueries (trial_queries.h) |
// trials() | | workers, leases, fencing, expiry, the leasing switch |
// LeaseQueries (lease_queries.h) | leases() | | metric points and completions |
// ResultQueries (result_queries.h) | results() | | adaptive sweeps: follow-up,
// searches, early stops | SearchQueries (search_queries.h) | searches() |
//
// The records they take and give are in storage/records.h.
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
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/database.h"
#include "storage/lease_queries.h"
#include "storage/records.h"
#include "storage/result_queries.h"
#include "storage/search_queries.h"
#include "storage/store_core.h"
#include "storage/sweep_queries.h"
#include "storage/trial_queries.h"
#include "storage/write_queue.h"

namespace qkov::storage {

class ResultsStore {
 public:
  // Opens or creates the database at `path` and migrates it.
  static absl::StatusOr<std::unique_ptr<ResultsStore>> Open(
      const std::string& path, const Database::Options& options = {});

  SweepQueries& sweeps() { return sweeps_; }
  TrialQueries& trials() { return trials_; }
  LeaseQueries& leases() { return leases_; }
  ResultQueries& results() { return results_; }
  SearchQueries& searches() { return searches_; }

  // Receives the events of every committed write, on the calling thread,
  // after the write returned (no store lock held; the sink must not block
  // for long). Set it before the first write.
  void SetEventSink(TrialEventSink sink);
  // Interrupts every running researcher's or dashboard's read and refuses
  // every later one (CANCELLED): a stopping server does not wait for a long
  // read. Writes, and the reads of workers' calls, go on, so that trials
  // finishing during the shutdown's grace are stored.
  void StopReads();
  // The pool serving researchers' and dashboards' reads (tests hold all of
  // its connections to show that writes and workers' reads do not need
  // them).
  ReaderPool* ClientReadersForTesting() { return core_->readers.get(); }
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

  // The shared core, for tests of the group commit (its *ForTesting hooks).
  StoreCore& CoreForTesting() { return *core_; }

 private:
  explicit ResultsStore(std::unique_ptr<StoreCore> core);

  // Declared first: the subjects hold pointers to it.
  std::unique_ptr<StoreCore> core_;
  SweepQueries sweeps_;
  TrialQueries trials_;
  LeaseQueries leases_;
  ResultQueries results_;
  SearchQueries searches_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_RESULTS_STORE_H_
