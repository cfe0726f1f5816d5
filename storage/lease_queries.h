// LeaseQueries: workers and leases (register, lease, fence, heartbeat,
// fail, expire) and the server-wide leasing switch. Reached through
// ResultsStore::leases(); thread-safe.
#ifndef QKOV_STORAGE_LEASE_QUERIES_H_
#define QKOV_STORAGE_LEASE_QUERIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/records.h"
#include "storage/store_core.h"

namespace qkov::storage {

class LeaseQueries {
 public:
  explicit LeaseQueries(StoreCore* core) : core_(core) {}

  // The server-wide switch for maintenance: while paused, LeaseBatch and
  // CompleteAndLease lease nothing new (kNoWorkNow; a worker's held leases
  // are still sent again), checked in the transaction that would lease.
  // An admin's alone (PERMISSION_DENIED otherwise); `reason` at most 200
  // bytes of UTF-8. Persists across restarts.
  absl::Status SetLeasing(bool paused, const std::string& reason,
                          int64_t now_ms, const Actor& actor);
  absl::StatusOr<LeasingRecord> Leasing();

  // Registers (or re-registers) a worker with its identity.
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
  // Requeues (or fails, when the budget is spent) every running trial whose
  // lease expired before now_ms. Returns how many.
  absl::StatusOr<int64_t> ExpireLeases(int64_t now_ms);
  // True when no trial anywhere is queued, preempted or running.
  absl::StatusOr<bool> AllIdle();

  // LeaseBatch inside the caller's write (ResultQueries::CompleteAndLease
  // leases in the write that stores the completions).
  absl::StatusOr<LeaseAvailability> LeaseBatchLocked(
      const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
      int max_trials, std::vector<LeaseRecord>* leases, const LeaseSizer& sizer,
      bool resend_held = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

 private:
  absl::Status AddCompanionsLocked(int64_t sweep_id,
                                   const std::string& parameterization,
                                   int max_trials,
                                   std::vector<LeaseRecord>* leases)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  absl::Status StartLeasesLocked(const std::string& worker_id, int64_t now_ms,
                                 int64_t lease_ms,
                                 const std::string& sweep_name,
                                 std::vector<LeaseRecord>* leases)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // The leases still granted to `worker_id`, renewed until now + lease_ms.
  absl::Status ResendHeldLocked(const std::string& worker_id, int64_t now_ms,
                                int64_t lease_ms,
                                std::vector<LeaseRecord>* leases)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // ExpireLeases inside the caller's transaction.
  absl::StatusOr<int64_t> ExpireLeasesLocked(int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

  StoreCore* core_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_LEASE_QUERIES_H_
