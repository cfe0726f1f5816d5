// SweepQueries: the store's sweeps (submit and extend, read, cancel,
// pause, retry, delete) and the owner check every change of a sweep makes.
// Reached through ResultsStore::sweeps(); thread-safe.
#ifndef QKOV_STORAGE_SWEEP_QUERIES_H_
#define QKOV_STORAGE_SWEEP_QUERIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records.h"
#include "storage/store_core.h"

namespace qkov::storage {

class SweepQueries {
 public:
  explicit SweepQueries(StoreCore* core) : core_(core) {}

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
  // Paused sweeps get no new leases; running trials go on.
  absl::Status SetPaused(const std::string& name, bool paused, int64_t now_ms,
                         const Actor& actor = {});
  // Failed trials of the sweep go back to the queue with a fresh retry
  // budget. Returns how many.
  absl::StatusOr<int64_t> RetryFailed(const std::string& name, int64_t now_ms,
                                      const Actor& actor = {});

 private:
  absl::Status SubmitSweepLocked(const SweepRecord& sweep,
                                 const std::vector<NewTrial>& trials,
                                 int64_t now_ms, const Actor& actor,
                                 SubmitOutcome* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // The sweep's id when `actor` may change it (`verb` names the change in
  // the refusal).
  absl::StatusOr<int64_t> OwnedSweepIdLocked(const std::string& name,
                                             const Actor& actor,
                                             const char* verb)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::Status CancelSweepLocked(int64_t sweep_id, int64_t now_ms,
                                 int64_t* cancelled)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // DeleteSweep's steps: marks the sweep deleted (returns its id), deletes
  // whole trials up to about kDeletePointsPerWrite points (false when none
  // was left), then the sweep's own rows.
  absl::StatusOr<int64_t> MarkDeletedLocked(const std::string& name,
                                            int64_t now_ms, const Actor& actor)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::StatusOr<bool> DeleteTrialsLocked(int64_t sweep_id, DeletedSweep* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::Status DeleteSweepRowsLocked(int64_t sweep_id, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // The database's free pages, in bytes.
  absl::StatusOr<int64_t> FreeBytesLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::StatusOr<SweepRecord> GetSweepLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // On `db`: db_ with mu_ held, or a connection lent by a ReaderPool.
  absl::StatusOr<SweepRecord> SweepOn(Database* db, const std::string& name);
  absl::Status FillCounts(Database* db, SweepRecord* sweep);

  StoreCore* core_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_SWEEP_QUERIES_H_
