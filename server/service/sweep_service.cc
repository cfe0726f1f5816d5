#include "server/service/sweep_service.h"

#include <algorithm>

#include "common/grpc_status.h"
#include "common/log.h"

namespace qkov::service {
grpc::Status SweepServiceImpl::SubmitSweep(
    grpc::ServerContext* ctx, const qkov::v1::SubmitSweepRequest* req,
    qkov::v1::SubmitSweepResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWrite, "SubmitSweep", &actor);
      !a.ok())
    return a;
  absl::StatusOr<qkov::v1::SubmitSweepResponse> r =
      core_->sweeps().SubmitSweep(*req, actor);
  if (r.ok()) {
    log::Info("sweep_submitted", {{"sweep", r->sweep().name()},
                                  {"owner", actor.name},
                                  {"peer", ctx->peer()},
                                  {"trials_added", r->trials_added()},
                                  {"trials_requeued", r->trials_requeued()}});
  }
  return Reply(std::move(r), resp);
}

grpc::Status SweepServiceImpl::GetSweep(grpc::ServerContext* ctx,
                                        const qkov::v1::GetSweepRequest* req,
                                        qkov::v1::Sweep* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "GetSweep");
      !a.ok())
    return a;
  return Reply(core_->sweeps().GetSweep(req->name()), resp);
}

grpc::Status SweepServiceImpl::ListSweeps(grpc::ServerContext* ctx,
                                          const qkov::v1::ListSweepsRequest*,
                                          qkov::v1::ListSweepsResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "ListSweeps");
      !a.ok())
    return a;
  return Reply(core_->sweeps().ListSweeps(), resp);
}

grpc::Status SweepServiceImpl::CancelSweep(
    grpc::ServerContext* ctx, const qkov::v1::CancelSweepRequest* req,
    qkov::v1::CancelSweepResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWrite, "CancelSweep", &actor);
      !a.ok())
    return a;
  absl::StatusOr<qkov::v1::CancelSweepResponse> r =
      core_->sweeps().CancelSweep(req->name(), actor);
  if (r.ok()) {
    log::Info("sweep_cancelled", {{"sweep", req->name()},
                                  {"by", actor.name},
                                  {"peer", ctx->peer()},
                                  {"trials_cancelled", r->trials_cancelled()}});
  }
  return Reply(std::move(r), resp);
}

grpc::Status SweepServiceImpl::DeleteSweep(
    grpc::ServerContext* ctx, const qkov::v1::DeleteSweepRequest* req,
    qkov::v1::DeleteSweepResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWrite, "DeleteSweep", &actor);
      !a.ok())
    return a;
  absl::StatusOr<qkov::v1::DeleteSweepResponse> r =
      core_->sweeps().DeleteSweep(req->name(), actor);
  if (r.ok()) {
    log::Info("sweep_deleted",
              {{"sweep", req->name()},
               {"by", actor.name},
               {"peer", ctx->peer()},
               {"trials_deleted", r->trials_deleted()},
               {"metric_points_deleted", r->metric_points_deleted()},
               {"bytes_freed", r->bytes_freed()}});
  }
  return Reply(std::move(r), resp);
}

grpc::Status SweepServiceImpl::PauseSweep(
    grpc::ServerContext* ctx, const qkov::v1::PauseSweepRequest* req,
    qkov::v1::Sweep* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWrite, "PauseSweep", &actor);
      !a.ok())
    return a;
  return Reply(core_->sweeps().PauseSweep(*req, actor), resp);
}

grpc::Status SweepServiceImpl::RetrySweep(
    grpc::ServerContext* ctx, const qkov::v1::RetrySweepRequest* req,
    qkov::v1::RetrySweepResponse* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kWrite, "RetrySweep", &actor);
      !a.ok())
    return a;
  return Reply(core_->sweeps().RetrySweep(req->name(), actor), resp);
}

grpc::Status SweepServiceImpl::ListTrials(
    grpc::ServerContext* ctx, const qkov::v1::ListTrialsRequest* req,
    qkov::v1::ListTrialsResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "ListTrials");
      !a.ok())
    return a;
  return Reply(core_->sweeps().ListTrials(*req), resp);
}

grpc::Status SweepServiceImpl::GetTrial(grpc::ServerContext* ctx,
                                        const qkov::v1::GetTrialRequest* req,
                                        qkov::v1::Trial* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "GetTrial");
      !a.ok())
    return a;
  return Reply(core_->sweeps().GetTrial(req->trial_id()), resp);
}

grpc::Status SweepServiceImpl::QueryResults(
    grpc::ServerContext* ctx, const qkov::v1::QueryResultsRequest* req,
    qkov::v1::QueryResultsResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "QueryResults");
      !a.ok())
    return a;
  return Reply(core_->results().QueryResults(*req), resp);
}

grpc::Status SweepServiceImpl::AggregateResults(
    grpc::ServerContext* ctx, const qkov::v1::AggregateResultsRequest* req,
    qkov::v1::AggregateResultsResponse* resp) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kRead, "AggregateResults");
      !a.ok())
    return a;
  return Reply(core_->results().AggregateResults(*req), resp);
}

grpc::Status SweepServiceImpl::GetTrialMetrics(
    grpc::ServerContext* ctx, const qkov::v1::GetTrialMetricsRequest* req,
    qkov::v1::GetTrialMetricsResponse* resp) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kRead, "GetTrialMetrics");
      !a.ok())
    return a;
  return Reply(core_->results().GetTrialMetrics(*req), resp);
}

grpc::Status SweepServiceImpl::QuerySql(grpc::ServerContext* ctx,
                                        const qkov::v1::QuerySqlRequest* req,
                                        qkov::v1::QuerySqlResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "QuerySql");
      !a.ok())
    return a;
  return Reply(
      core_->results().QuerySql(*req, [ctx] { return ctx->IsCancelled(); }),
      resp);
}

grpc::Status SweepServiceImpl::StreamResults(
    grpc::ServerContext* ctx, const qkov::v1::QueryResultsRequest* req,
    grpc::ServerWriter<qkov::v1::ResultColumns>* writer) {
  if (grpc::Status a =
          Authorize(auth_, ctx, Permission::kRead, "StreamResults");
      !a.ok())
    return a;
  absl::StatusOr<std::vector<qkov::v1::ResultColumns>> chunks =
      core_->results().ResultColumns(*req);
  if (!chunks.ok()) return ToGrpcStatus(chunks.status());
  for (const qkov::v1::ResultColumns& c : *chunks) {
    if (ctx->IsCancelled() || !writer->Write(c))
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "the client stopped reading");
  }
  return grpc::Status::OK;
}

grpc::Status SweepServiceImpl::StreamCurves(
    grpc::ServerContext* ctx, const qkov::v1::StreamCurvesRequest* req,
    grpc::ServerWriter<qkov::v1::StreamCurvesChunk>* writer) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "StreamCurves");
      !a.ok())
    return a;
  return ToGrpcStatus(core_->results().StreamCurves(
      *req, [&](const qkov::v1::StreamCurvesChunk& chunk) {
        return !ctx->IsCancelled() && writer->Write(chunk);
      }));
}

grpc::Status SweepServiceImpl::MatchSweep(
    grpc::ServerContext* ctx, const qkov::v1::MatchSweepRequest* req,
    qkov::v1::MatchedResponse* resp) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "MatchSweep");
      !a.ok())
    return a;
  return Reply(core_->results().MatchSweep(*req, kMatchedMaxTrials), resp);
}

grpc::Status SweepServiceImpl::Leasing(grpc::ServerContext* ctx,
                                       const qkov::v1::LeasingRequest* req,
                                       qkov::v1::LeasingState* resp) {
  storage::Actor actor;
  if (grpc::Status a =
          Authorize(auth_, ctx,
                    req->has_paused() ? Permission::kWrite : Permission::kRead,
                    "Leasing", &actor);
      !a.ok())
    return a;
  absl::StatusOr<qkov::v1::LeasingState> r =
      core_->sweeps().Leasing(*req, actor);
  if (r.ok() && req->has_paused()) {
    log::Info(r->paused() ? "leasing_paused" : "leasing_resumed",
              {{"actor", actor.name},
               {"peer", ctx->peer()},
               {"reason", r->reason()}});
  }
  return Reply(std::move(r), resp);
}

grpc::Status SweepServiceImpl::WatchSweep(
    grpc::ServerContext* ctx, const qkov::v1::WatchSweepRequest* req,
    grpc::ServerWriter<qkov::v1::SweepProgress>* writer) {
  if (grpc::Status a = Authorize(auth_, ctx, Permission::kRead, "WatchSweep");
      !a.ok())
    return a;
  absl::Time since = absl::InfinitePast();
  // Counted before each read, so a change made during it is not missed.
  uint64_t seen = core_->changes().ChangeCount();
  auto ended = [&] {
    return ctx->IsCancelled() || core_->changes().Stopping();
  };
  std::string sent_sweep;  // the sweep as last sent
  absl::Time sent_at = absl::InfinitePast();
  while (!ended()) {
    absl::StatusOr<qkov::v1::SweepProgress> p =
        core_->sweeps().Progress(req->name(), &since, /*brief=*/false,
                                 core::SweepControl::kProgressReuse);
    if (!p.ok()) return ToGrpcStatus(p.status());
    // A view shared with other watchers may hold nothing new for this one:
    // then nothing is sent, but for a message every 5 s that keeps the
    // client's clock going.
    std::string sweep = p->sweep().SerializeAsString();
    if (p->updated_size() > 0 || p->finished() || sweep != sent_sweep ||
        absl::Now() - sent_at >= absl::Seconds(5)) {
      if (!writer->Write(*p)) return grpc::Status::CANCELLED;
      sent_sweep = std::move(sweep);
      sent_at = absl::Now();
    }
    if (p->finished()) return grpc::Status::OK;
    // Wait for the next change (at most 5 s; in slices of a second, so a
    // client gone or a stopping server ends the stream at once), then
    // coalesce a burst of reports.
    const absl::Time until = absl::Now() + absl::Seconds(5);
    while (!ended() && absl::Now() < until &&
           core_->changes().WaitForChange(
               seen, std::min(until, absl::Now() + absl::Seconds(1))) == seen) {
    }
    if (ended()) break;
    absl::SleepFor(absl::Milliseconds(200));
    seen = core_->changes().ChangeCount();
  }
  if (core_->changes().Stopping())
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "the server is shutting down; watch again once it "
                        "is back");
  return grpc::Status::CANCELLED;
}

}  // namespace qkov::service
