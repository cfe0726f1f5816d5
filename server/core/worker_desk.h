// WorkerDesk: the worker API (worker.proto): registration and identity,
// leases, heartbeats, reports (with early stopping), completions, failures,
// expiry. Reached through Coordinator::workers(); thread-safe.
#ifndef QKOV_SERVER_CORE_WORKER_DESK_H_
#define QKOV_SERVER_CORE_WORKER_DESK_H_

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
#include "qkov/v1/sweep.pb.h"
#include "qkov/v1/worker.pb.h"
#include "server/core/coordinator_core.h"
#include "storage/records.h"

namespace qkov::core {

class WorkerDesk {
 public:
  explicit WorkerDesk(CoordinatorCore* core) : core_(core) {}

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
  // The sweep's early-stopping rule (the core keeps them by sweep id).
  absl::StatusOr<StopRule> StopRuleOf(const std::string& trial_id);
  // After a report is stored: the early-stopping rule's verdict on its
  // points; stops the trial (and says so in `lease`) when it says stop.
  absl::Status ApplyEarlyStopping(const qkov::v1::ReportMetricsRequest& r,
                                  qkov::v1::LeaseStatus* lease);

  // Worker identities, immutable once registered: cached from the store.
  absl::Mutex workers_mu_;
  absl::flat_hash_map<std::string, storage::WorkerIdentity> workers_
      ABSL_GUARDED_BY(workers_mu_);

  CoordinatorCore* core_;
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_WORKER_DESK_H_
