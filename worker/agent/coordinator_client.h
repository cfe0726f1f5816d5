// CoordinatorClient: the worker's view of the coordinator, the calls of
// qkov.v1.WorkerService as absl::Status. The Agent owns the policy (what to
// retry, when to give up); an implementation owns the transport. Tests drive
// the Agent through an in-memory fake
// (tests/unit/agent/in_memory_coordinator.h) and through the real coordinator
// in-process (tests/integration/fake_coordinator.h).
//
// Errors: the coordinator's status as it came (UNAVAILABLE and
// DEADLINE_EXCEEDED are the retryable ones, docs/protocol.md).
//
// Thread safety: implementations are called from the agent's loop and its
// heartbeat thread at once.
#ifndef QKOV_WORKER_AGENT_COORDINATOR_CLIENT_H_
#define QKOV_WORKER_AGENT_COORDINATOR_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "qkov/v1/worker.grpc.pb.h"

namespace qkov::agent {

class CoordinatorClient {
 public:
  virtual ~CoordinatorClient() = default;
  virtual absl::Status RegisterWorker(
      const qkov::v1::RegisterWorkerRequest& r,
      qkov::v1::RegisterWorkerResponse* out) = 0;
  virtual absl::Status LeaseTrial(const qkov::v1::LeaseTrialRequest& r,
                                  qkov::v1::LeaseTrialResponse* out) = 0;
  virtual absl::Status Heartbeat(const qkov::v1::HeartbeatRequest& r,
                                 qkov::v1::HeartbeatResponse* out) = 0;
  virtual absl::Status ReportMetrics(const qkov::v1::ReportMetricsRequest& r,
                                     qkov::v1::ReportMetricsResponse* out) = 0;
  virtual absl::Status CompleteTrial(const qkov::v1::CompleteTrialRequest& r,
                                     qkov::v1::CompleteTrialResponse* out) = 0;
  virtual absl::Status CompleteTrials(
      const qkov::v1::CompleteTrialsRequest& r,
      qkov::v1::CompleteTrialsResponse* out) = 0;
  virtual absl::Status FailTrial(const qkov::v1::FailTrialRequest& r,
                                 qkov::v1::FailTrialResponse* out) = 0;
};

// Over gRPC: each call with its own deadline and the channel's credentials
// (bearer token, TLS).
class GrpcCoordinatorClient : public CoordinatorClient {
 public:
  // INVALID_ARGUMENT / NOT_FOUND for unreadable credentials files.
  static absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> Create(
      const std::string& server, const ChannelSecurity& security,
      absl::Duration rpc_deadline);

  absl::Status RegisterWorker(const qkov::v1::RegisterWorkerRequest& r,
                              qkov::v1::RegisterWorkerResponse* out) override;
  absl::Status LeaseTrial(const qkov::v1::LeaseTrialRequest& r,
                          qkov::v1::LeaseTrialResponse* out) override;
  absl::Status Heartbeat(const qkov::v1::HeartbeatRequest& r,
                         qkov::v1::HeartbeatResponse* out) override;
  absl::Status ReportMetrics(const qkov::v1::ReportMetricsRequest& r,
                             qkov::v1::ReportMetricsResponse* out) override;
  absl::Status CompleteTrial(const qkov::v1::CompleteTrialRequest& r,
                             qkov::v1::CompleteTrialResponse* out) override;
  absl::Status CompleteTrials(const qkov::v1::CompleteTrialsRequest& r,
                              qkov::v1::CompleteTrialsResponse* out) override;
  absl::Status FailTrial(const qkov::v1::FailTrialRequest& r,
                         qkov::v1::FailTrialResponse* out) override;

 private:
  GrpcCoordinatorClient(SecureChannel channel, absl::Duration rpc_deadline);
  // A call's context: the deadline, the credentials, and wait_for_ready.
  // Waiting for ready, a call made while the channel reconnects (after a
  // partition, or a coordinator restart) waits for the connection until its
  // deadline, and drives the connection's handshake meanwhile: gRPC's
  // synchronous client makes progress only in threads inside a call, so a
  // call that failed fast and a backoff sleep would let the TLS handshake
  // of a reconnection time out unread. Past the deadline the call is
  // DEADLINE_EXCEEDED, which the agent retries.
  std::unique_ptr<grpc::ClientContext> Context(
      bool wait_for_ready = true) const;

  SecureChannel channel_;
  std::unique_ptr<qkov::v1::WorkerService::Stub> stub_;
  const absl::Duration rpc_deadline_;
};

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_COORDINATOR_CLIENT_H_
