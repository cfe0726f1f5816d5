#include "server/service/worker_service.h"

#include "common/grpc_status.h"
#include "common/log.h"

namespace qkov::service {
grpc::Status WorkerServiceImpl::RegisterWorker(
    grpc::ServerContext* ctx, const qkov::v1::RegisterWorkerRequest* req,
    qkov::v1::RegisterWorkerResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "RegisterWorker", &actor);
      !a.ok())
    return a;
  absl::StatusOr<qkov::v1::RegisterWorkerResponse> r =
      core_->workers().RegisterWorker(*req, actor);
  if (r.ok()) {
    log::Info("worker_registered", {{"worker", r->worker_id()},
                                    {"token", actor.name},
                                    {"peer", ctx->peer()},
                                    {"slots", req->slots()}});
  } else {
    log::Emit(log::Severity::kWarning, "worker_refused",
              {{"peer", ctx->peer()}, {"error", r.status()}},
              log::RateLimit{10, absl::Minutes(1)});
  }
  return Reply(std::move(r), resp);
}

grpc::Status WorkerServiceImpl::LeaseTrial(
    grpc::ServerContext* ctx, const qkov::v1::LeaseTrialRequest* req,
    qkov::v1::LeaseTrialResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "LeaseTrial", &actor);
      !a.ok())
    return a;
  return Reply(core_->workers().LeaseTrial(*req, actor), resp);
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* ctx,
                                          const qkov::v1::HeartbeatRequest* req,
                                          qkov::v1::HeartbeatResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "Heartbeat", &actor);
      !a.ok())
    return a;
  return Reply(core_->workers().Heartbeat(*req, actor), resp);
}

grpc::Status WorkerServiceImpl::ReportMetrics(
    grpc::ServerContext* ctx, const qkov::v1::ReportMetricsRequest* req,
    qkov::v1::ReportMetricsResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "ReportMetrics", &actor);
      !a.ok())
    return a;
  return Reply(core_->workers().ReportMetrics(*req, actor), resp);
}

grpc::Status WorkerServiceImpl::CompleteTrial(
    grpc::ServerContext* ctx, const qkov::v1::CompleteTrialRequest* req,
    qkov::v1::CompleteTrialResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "CompleteTrial", &actor);
      !a.ok())
    return a;
  return Reply(core_->workers().CompleteTrial(*req, actor), resp);
}

grpc::Status WorkerServiceImpl::CompleteTrials(
    grpc::ServerContext* ctx, const qkov::v1::CompleteTrialsRequest* req,
    qkov::v1::CompleteTrialsResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "CompleteTrials", &actor);
      !a.ok())
    return a;
  return Reply(core_->workers().CompleteTrials(*req, actor), resp);
}

grpc::Status WorkerServiceImpl::FailTrial(grpc::ServerContext* ctx,
                                          const qkov::v1::FailTrialRequest* req,
                                          qkov::v1::FailTrialResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWorker, "FailTrial", &actor);
      !a.ok())
    return a;
  return Reply(core_->workers().FailTrial(*req, actor), resp);
}

}  // namespace qkov::service
