#include "server/service/worker_service.h"

#include "common/grpc_status.h"

namespace qkov::service {
grpc::Status WorkerServiceImpl::RegisterWorker(
    grpc::ServerContext* ctx, const qkov::v1::RegisterWorkerRequest* req,
    qkov::v1::RegisterWorkerResponse* resp) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "RegisterWorker");
      !a.ok())
    return a;
  return Reply(core_->RegisterWorker(*req), resp);
}

grpc::Status WorkerServiceImpl::LeaseTrial(
    grpc::ServerContext* ctx, const qkov::v1::LeaseTrialRequest* req,
    qkov::v1::LeaseTrialResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kWorker, "LeaseTrial");
      !a.ok())
    return a;
  return Reply(core_->LeaseTrial(*req), resp);
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* ctx,
                                          const qkov::v1::HeartbeatRequest* req,
                                          qkov::v1::HeartbeatResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kWorker, "Heartbeat");
      !a.ok())
    return a;
  return Reply(core_->Heartbeat(*req), resp);
}

grpc::Status WorkerServiceImpl::ReportMetrics(
    grpc::ServerContext* ctx, const qkov::v1::ReportMetricsRequest* req,
    qkov::v1::ReportMetricsResponse* resp) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "ReportMetrics");
      !a.ok())
    return a;
  return Reply(core_->ReportMetrics(*req), resp);
}

grpc::Status WorkerServiceImpl::CompleteTrial(
    grpc::ServerContext* ctx, const qkov::v1::CompleteTrialRequest* req,
    qkov::v1::CompleteTrialResponse* resp) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "CompleteTrial");
      !a.ok())
    return a;
  return Reply(core_->CompleteTrial(*req), resp);
}

grpc::Status WorkerServiceImpl::CompleteTrials(
    grpc::ServerContext* ctx, const qkov::v1::CompleteTrialsRequest* req,
    qkov::v1::CompleteTrialsResponse* resp) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "CompleteTrials");
      !a.ok())
    return a;
  return Reply(core_->CompleteTrials(*req), resp);
}

grpc::Status WorkerServiceImpl::FailTrial(grpc::ServerContext* ctx,
                                          const qkov::v1::FailTrialRequest* req,
                                          qkov::v1::FailTrialResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kWorker, "FailTrial");
      !a.ok())
    return a;
  return Reply(core_->FailTrial(*req), resp);
}

}  // namespace qkov::service
