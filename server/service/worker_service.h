// qkov.v1.WorkerService over core::Coordinator.
#ifndef QKOV_SERVER_SERVICE_WORKER_SERVICE_H_
#define QKOV_SERVER_SERVICE_WORKER_SERVICE_H_

#include "qkov/v1/worker.grpc.pb.h"
#include "server/core/coordinator.h"
#include "server/service/auth.h"

namespace qkov::service {

class WorkerServiceImpl final : public qkov::v1::WorkerService::Service {
 public:
  // `auth` may be null (no authentication: local use only).
  WorkerServiceImpl(core::Coordinator* core, const Authenticator* auth)
      : core_(core), auth_(auth) {}

  grpc::Status RegisterWorker(grpc::ServerContext*,
                              const qkov::v1::RegisterWorkerRequest*,
                              qkov::v1::RegisterWorkerResponse*) override;
  grpc::Status LeaseTrial(grpc::ServerContext*,
                          const qkov::v1::LeaseTrialRequest*,
                          qkov::v1::LeaseTrialResponse*) override;
  grpc::Status Heartbeat(grpc::ServerContext*,
                         const qkov::v1::HeartbeatRequest*,
                         qkov::v1::HeartbeatResponse*) override;
  grpc::Status ReportMetrics(grpc::ServerContext*,
                             const qkov::v1::ReportMetricsRequest*,
                             qkov::v1::ReportMetricsResponse*) override;
  grpc::Status CompleteTrial(grpc::ServerContext*,
                             const qkov::v1::CompleteTrialRequest*,
                             qkov::v1::CompleteTrialResponse*) override;
  grpc::Status CompleteTrials(grpc::ServerContext*,
                              const qkov::v1::CompleteTrialsRequest*,
                              qkov::v1::CompleteTrialsResponse*) override;
  grpc::Status FailTrial(grpc::ServerContext*,
                         const qkov::v1::FailTrialRequest*,
                         qkov::v1::FailTrialResponse*) override;

 private:
  core::Coordinator* core_;
  const Authenticator* auth_;
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_WORKER_SERVICE_H_
