#include "worker/agent/coordinator_client.h"

#include "common/grpc_status.h"

namespace qkov::agent {

namespace v1 = ::qkov::v1;

absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>>
GrpcCoordinatorClient::Create(const std::string& server,
                              const ChannelSecurity& security,
                              absl::Duration rpc_deadline) {
  grpc::ChannelArguments args;
  // A connection that stops answering (a cut link, a coordinator gone) is
  // found dead within 15 s by an unanswered ping, and the channel connects
  // afresh, trying at least every 5 s (gRPC's defaults: a connection
  // attempt may hang 20 s and the backoff grows to 120 s). A healed worker
  // then renews its leases within a lease period (docs/cluster.md). The
  // server accepts a ping every 5 s (server/service/server.cc).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  args.SetMaxReceiveMessageSize(16 << 20);
  absl::StatusOr<SecureChannel> channel =
      SecureChannel::Create(server, security, args);
  if (!channel.ok()) return channel.status();
  return std::unique_ptr<GrpcCoordinatorClient>(
      new GrpcCoordinatorClient(*std::move(channel), rpc_deadline));
}

GrpcCoordinatorClient::GrpcCoordinatorClient(SecureChannel channel,
                                             absl::Duration rpc_deadline)
    : channel_(std::move(channel)),
      stub_(v1::WorkerService::NewStub(channel_.channel())),
      rpc_deadline_(rpc_deadline) {}

std::unique_ptr<grpc::ClientContext> GrpcCoordinatorClient::Context(
    bool wait_for_ready) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + rpc_deadline_));
  ctx->set_wait_for_ready(wait_for_ready);
  channel_.Apply(ctx.get());
  return ctx;
}

absl::Status GrpcCoordinatorClient::RegisterWorker(
    const v1::RegisterWorkerRequest& r, v1::RegisterWorkerResponse* out) {
  // The first call fails fast, so that an unreachable server shows in the
  // log at once.
  return FromGrpcStatus(
      stub_->RegisterWorker(Context(/*wait_for_ready=*/false).get(), r, out));
}
absl::Status GrpcCoordinatorClient::LeaseTrial(const v1::LeaseTrialRequest& r,
                                               v1::LeaseTrialResponse* out) {
  return FromGrpcStatus(stub_->LeaseTrial(Context().get(), r, out));
}
absl::Status GrpcCoordinatorClient::Heartbeat(const v1::HeartbeatRequest& r,
                                              v1::HeartbeatResponse* out) {
  return FromGrpcStatus(stub_->Heartbeat(Context().get(), r, out));
}
absl::Status GrpcCoordinatorClient::ReportMetrics(
    const v1::ReportMetricsRequest& r, v1::ReportMetricsResponse* out) {
  return FromGrpcStatus(stub_->ReportMetrics(Context().get(), r, out));
}
absl::Status GrpcCoordinatorClient::CompleteTrial(
    const v1::CompleteTrialRequest& r, v1::CompleteTrialResponse* out) {
  return FromGrpcStatus(stub_->CompleteTrial(Context().get(), r, out));
}
absl::Status GrpcCoordinatorClient::CompleteTrials(
    const v1::CompleteTrialsRequest& r, v1::CompleteTrialsResponse* out) {
  return FromGrpcStatus(stub_->CompleteTrials(Context().get(), r, out));
}
absl::Status GrpcCoordinatorClient::FailTrial(const v1::FailTrialRequest& r,
                                              v1::FailTrialResponse* out) {
  return FromGrpcStatus(stub_->FailTrial(Context().get(), r, out));
}

}  // namespace qkov::agent
