// InMemoryCoordinator: a CoordinatorClient that answers the worker protocol
// (docs/protocol.md) from a list of trials in memory, with no server code:
// leases fenced by worker key and attempt, heartbeats that answer STOP for a
// cancelled trial, completions and hand-backs that are idempotent when
// repeated, and a held lease resent when a reply was lost. A test injects
// failures per method (before the call is applied, or after it: a reply
// lost; InjectedFailures), cancels trials, and reads what the worker sent.
//
// It grants up to max_trials queued trials a lease (at most lease_cap when
// set); sizing to memory is the coordinator's, tested in
// tests/unit/server/coordinator_test.cc.
#ifndef QKOV_TESTS_UNIT_AGENT_IN_MEMORY_COORDINATOR_H_
#define QKOV_TESTS_UNIT_AGENT_IN_MEMORY_COORDINATOR_H_

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "qkov/v1/worker.pb.h"
#include "tests/unit/agent/injected_failures.h"
#include "worker/agent/coordinator_client.h"

namespace qkov::testing {

namespace v1 = ::qkov::v1;

class InMemoryCoordinator : public agent::CoordinatorClient,
                            public InjectedFailures {
 public:
  enum class State { kQueued, kLeased, kDone, kFailed, kCancelled, kStopped };
  struct Trial {
    v1::Lease lease;  // config, attempt, checkpoint of the next lease
    State state = State::kQueued;
    std::vector<v1::MetricPoint> points;  // reports and final points
    v1::CompleteTrialRequest completion;
    std::vector<v1::FailTrialRequest> failures;
    bool stop_early = false;  // answer the next report STOP_EARLY
  };

  static constexpr char kWorkerKey[] = "in-memory-worker-key";

  // Adds a queued trial with id `id` and training settings `config`.
  void Add(const std::string& id, const v1::TrialConfig& config) {
    absl::MutexLock lock(&mu_);
    Trial t;
    t.lease.set_trial_id(id);
    t.lease.set_sweep_name("s");
    *t.lease.mutable_config() = config;
    order_.push_back(id);
    trials_[id] = std::move(t);
  }
  void Cancel(const std::string& id) {
    absl::MutexLock lock(&mu_);
    trials_[id].state = State::kCancelled;
  }
  void StopEarly(const std::string& id) {
    absl::MutexLock lock(&mu_);
    trials_[id].stop_early = true;
  }
  // Leases hold at most `cap` trials (0: as many as asked).
  void set_lease_cap(int cap) {
    absl::MutexLock lock(&mu_);
    lease_cap_ = cap;
  }
  Trial trial(const std::string& id) {
    absl::MutexLock lock(&mu_);
    return trials_.at(id);
  }
  // The largest step a report of `id` reached (0: none yet).
  int64_t last_reported_step(const std::string& id) {
    absl::MutexLock lock(&mu_);
    int64_t step = 0;
    for (const auto& p : trials_.at(id).points) step = std::max(step, p.step());
    return step;
  }
  // The lease requests as they came (after any injected failure).
  std::vector<v1::LeaseTrialRequest> lease_requests() {
    absl::MutexLock lock(&mu_);
    return lease_requests_;
  }

  absl::Status RegisterWorker(const v1::RegisterWorkerRequest&,
                              v1::RegisterWorkerResponse* out) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Before("RegisterWorker"); !s.ok()) return s;
    out->set_worker_id("w1");
    out->set_worker_key(kWorkerKey);
    out->mutable_heartbeat_interval()->set_nanos(50'000'000);
    return absl::OkStatus();
  }

  absl::Status LeaseTrial(const v1::LeaseTrialRequest& r,
                          v1::LeaseTrialResponse* out) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Begin("LeaseTrial", r.worker_key()); !s.ok()) return s;
    lease_requests_.push_back(r);
    *out = Lease(r.max_trials(), r.resend_held());
    return End("LeaseTrial");
  }

  absl::Status Heartbeat(const v1::HeartbeatRequest& r,
                         v1::HeartbeatResponse* out) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Begin("Heartbeat", r.worker_key()); !s.ok()) return s;
    out->Clear();
    for (const v1::LeaseRef& ref : r.leases()) {
      v1::LeaseStatus* st = out->add_leases();
      st->set_trial_id(ref.trial_id());
      st->set_attempt(ref.attempt());
      st->set_directive(Holds(ref.trial_id(), ref.attempt())
                            ? v1::LeaseStatus::CONTINUE
                            : v1::LeaseStatus::STOP);
    }
    return End("Heartbeat");
  }

  absl::Status ReportMetrics(const v1::ReportMetricsRequest& r,
                             v1::ReportMetricsResponse* out) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Begin("ReportMetrics", r.worker_key()); !s.ok())
      return s;
    if (!Holds(r.trial_id(), r.attempt()))
      return absl::FailedPreconditionError("lease not held");
    Trial& t = trials_[r.trial_id()];
    t.points.insert(t.points.end(), r.points().begin(), r.points().end());
    out->set_points_stored(r.points_size());
    out->mutable_lease()->set_directive(
        t.stop_early ? v1::LeaseStatus::STOP_EARLY : v1::LeaseStatus::CONTINUE);
    if (t.stop_early) t.state = State::kStopped;
    return End("ReportMetrics");
  }

  absl::Status CompleteTrial(const v1::CompleteTrialRequest& r,
                             v1::CompleteTrialResponse* out) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Begin("CompleteTrial", r.worker_key()); !s.ok())
      return s;
    if (absl::Status s = Complete(r); !s.ok()) return s;
    if (r.lease_next()) *out->mutable_next() = Lease(1, r.resend_held());
    return End("CompleteTrial");
  }

  absl::Status CompleteTrials(const v1::CompleteTrialsRequest& r,
                              v1::CompleteTrialsResponse* out) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Begin("CompleteTrials", r.worker_key()); !s.ok())
      return s;
    for (const auto& c : r.trials()) {  // all or nothing
      if (!Holds(c.trial_id(), c.attempt()) && !Completed(c))
        return absl::FailedPreconditionError(
            absl::StrCat("trial ", c.trial_id(), ": lease not held"));
    }
    for (const auto& c : r.trials()) Complete(c).IgnoreError();
    if (r.lease_next() > 0)
      *out->mutable_next() = Lease(r.lease_next(), r.resend_held());
    return End("CompleteTrials");
  }

  absl::Status FailTrial(const v1::FailTrialRequest& r,
                         v1::FailTrialResponse*) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = Begin("FailTrial", r.worker_key()); !s.ok()) return s;
    auto it = trials_.find(r.trial_id());
    if (it == trials_.end()) return absl::NotFoundError(r.trial_id());
    Trial& t = it->second;
    const bool repeated = !t.failures.empty() &&
                          t.failures.back().attempt() == r.attempt() &&
                          t.state != State::kLeased;
    if (!repeated) {
      if (!Holds(r.trial_id(), r.attempt()))
        return absl::FailedPreconditionError("lease not held");
      t.failures.push_back(r);
      t.state = r.preempted() ? State::kQueued : State::kFailed;
      t.lease.set_checkpoint(r.checkpoint());
      t.lease.set_checkpoint_step(r.checkpoint_step());
    }
    return End("FailTrial");
  }

 private:
  // The injected failure, if any, else the key's check.
  absl::Status Begin(const std::string& method, const std::string& key) {
    if (absl::Status s = Before(method); !s.ok()) return s;
    if (key != kWorkerKey)
      return absl::PermissionDeniedError("worker_key does not match");
    return absl::OkStatus();
  }
  absl::Status End(const std::string& method) {
    return After(method, absl::OkStatus());
  }
  bool Holds(const std::string& id, int attempt)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = trials_.find(id);
    return it != trials_.end() && it->second.state == State::kLeased &&
           it->second.lease.attempt() == attempt;
  }
  bool Completed(const v1::CompleteTrialRequest& c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = trials_.find(c.trial_id());
    return it != trials_.end() && it->second.state == State::kDone &&
           it->second.completion.attempt() == c.attempt();
  }
  // Applies a completion; a repeat of one applied is answered OK.
  absl::Status Complete(const v1::CompleteTrialRequest& c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (Completed(c)) return absl::OkStatus();
    if (!Holds(c.trial_id(), c.attempt()))
      return absl::FailedPreconditionError(
          absl::StrCat("trial ", c.trial_id(), ": lease not held"));
    Trial& t = trials_[c.trial_id()];
    t.state = State::kDone;
    t.completion = c;
    t.points.insert(t.points.end(), c.final_points().begin(),
                    c.final_points().end());
    return absl::OkStatus();
  }
  // Up to `max` leases: the ones held (resend_held), then queued trials in
  // the order they were added.
  v1::LeaseTrialResponse Lease(int max, bool resend_held)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (lease_cap_ > 0) max = std::min(max, lease_cap_);
    std::vector<v1::Lease> granted;
    bool running = false;
    for (const std::string& id : order_) {
      Trial& t = trials_[id];
      running |= t.state == State::kLeased;
      if (static_cast<int>(granted.size()) >= std::max(max, 1)) continue;
      if (t.state == State::kLeased && resend_held) {
        granted.push_back(t.lease);
      } else if (t.state == State::kQueued) {
        t.lease.set_attempt(t.lease.attempt() + 1);
        t.state = State::kLeased;
        granted.push_back(t.lease);
      }
    }
    v1::LeaseTrialResponse out;
    out.mutable_retry_after()->set_nanos(20'000'000);
    if (granted.empty()) {
      out.set_outcome(running ? v1::LeaseTrialResponse::NO_WORK_NOW
                              : v1::LeaseTrialResponse::NO_WORK);
      return out;
    }
    out.set_outcome(v1::LeaseTrialResponse::LEASED);
    *out.mutable_lease() = granted[0];
    for (size_t i = 1; i < granted.size(); ++i) *out.add_more() = granted[i];
    return out;
  }

  absl::Mutex mu_;
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Trial> trials_ ABSL_GUARDED_BY(mu_);
  int lease_cap_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::LeaseTrialRequest> lease_requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov::testing

#endif  // QKOV_TESTS_UNIT_AGENT_IN_MEMORY_COORDINATOR_H_
