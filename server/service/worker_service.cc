#include "server/service/worker_service.h"

#include "common/grpc_status.h"

namespace qkov::service {
namespace {

template <typename T, typename R>
grpc::Status Reply(absl::StatusOr<T> result, R* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status WorkerServiceImpl::RegisterWorker(grpc::ServerContext*, const qkov::v1::RegisterWorkerRequest* req,
                                               qkov::v1::RegisterWorkerResponse* resp) {
  return Reply(core_->RegisterWorker(*req), resp);
}

grpc::Status WorkerServiceImpl::LeaseTrial(grpc::ServerContext*, const qkov::v1::LeaseTrialRequest* req,
                                           qkov::v1::LeaseTrialResponse* resp) {
  return Reply(core_->LeaseTrial(*req), resp);
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext*, const qkov::v1::HeartbeatRequest* req,
                                          qkov::v1::HeartbeatResponse* resp) {
  return Reply(core_->Heartbeat(*req), resp);
}

grpc::Status WorkerServiceImpl::ReportMetrics(grpc::ServerContext*, const qkov::v1::ReportMetricsRequest* req,
                                              qkov::v1::ReportMetricsResponse* resp) {
  return Reply(core_->ReportMetrics(*req), resp);
}

grpc::Status WorkerServiceImpl::CompleteTrial(grpc::ServerContext*, const qkov::v1::CompleteTrialRequest* req,
                                              qkov::v1::CompleteTrialResponse* resp) {
  return Reply(core_->CompleteTrial(*req), resp);
}

grpc::Status WorkerServiceImpl::FailTrial(grpc::ServerContext*, const qkov::v1::FailTrialRequest* req,
                                          qkov::v1::FailTrialResponse* resp) {
  return Reply(core_->FailTrial(*req), resp);
}

}  // namespace qkov::service
