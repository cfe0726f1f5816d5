// FakeCoordinator: a CoordinatorClient that calls an in-process
// core::Coordinator (real scheduling, fencing and storage, no gRPC), with
// failures that a test can inject per method (before the coordinator, or
// after it: a reply lost; InjectedFailures) and counts of the calls made.
#ifndef QKOV_TESTS_INTEGRATION_FAKE_COORDINATOR_H_
#define QKOV_TESTS_INTEGRATION_FAKE_COORDINATOR_H_

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "server/core/coordinator.h"
#include "tests/unit/agent/injected_failures.h"
#include "worker/agent/coordinator_client.h"

namespace qkov::testing {

namespace v1 = ::qkov::v1;

class FakeCoordinator : public agent::CoordinatorClient,
                        public InjectedFailures {
 public:
  explicit FakeCoordinator(core::Coordinator* core) : core_(core) {}

  absl::Status RegisterWorker(const v1::RegisterWorkerRequest& r,
                              v1::RegisterWorkerResponse* out) override {
    return Call("RegisterWorker", core_->workers().RegisterWorker(r), out);
  }
  absl::Status LeaseTrial(const v1::LeaseTrialRequest& r,
                          v1::LeaseTrialResponse* out) override {
    if (absl::Status s = Before("LeaseTrial"); !s.ok()) return s;
    return After("LeaseTrial", Call("", core_->workers().LeaseTrial(r), out));
  }
  absl::Status Heartbeat(const v1::HeartbeatRequest& r,
                         v1::HeartbeatResponse* out) override {
    if (absl::Status s = Before("Heartbeat"); !s.ok()) return s;
    return After("Heartbeat", Call("", core_->workers().Heartbeat(r), out));
  }
  absl::Status ReportMetrics(const v1::ReportMetricsRequest& r,
                             v1::ReportMetricsResponse* out) override {
    if (absl::Status s = Before("ReportMetrics"); !s.ok()) return s;
    return After("ReportMetrics",
                 Call("", core_->workers().ReportMetrics(r), out));
  }
  absl::Status CompleteTrial(const v1::CompleteTrialRequest& r,
                             v1::CompleteTrialResponse* out) override {
    if (absl::Status s = Before("CompleteTrial"); !s.ok()) return s;
    return After("CompleteTrial",
                 Call("", core_->workers().CompleteTrial(r), out));
  }
  absl::Status CompleteTrials(const v1::CompleteTrialsRequest& r,
                              v1::CompleteTrialsResponse* out) override {
    if (absl::Status s = Before("CompleteTrials"); !s.ok()) return s;
    return After("CompleteTrials",
                 Call("", core_->workers().CompleteTrials(r), out));
  }
  absl::Status FailTrial(const v1::FailTrialRequest& r,
                         v1::FailTrialResponse* out) override {
    if (absl::Status s = Before("FailTrial"); !s.ok()) return s;
    return After("FailTrial", Call("", core_->workers().FailTrial(r), out));
  }

 private:
  template <typename Response>
  absl::Status Call(const std::string& count, absl::StatusOr<Response> r,
                    Response* out) {
    if (!count.empty()) Before(count).IgnoreError();  // counts it
    if (!r.ok()) return r.status();
    *out = *std::move(r);
    return absl::OkStatus();
  }

  core::Coordinator* core_;
};

}  // namespace qkov::testing

#endif  // QKOV_TESTS_INTEGRATION_FAKE_COORDINATOR_H_
