#include "server/service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::service {

absl::StatusOr<std::unique_ptr<QkovServer>> QkovServer::Start(const ServerConfig& config) {
  if (config.db_path.empty()) return absl::InvalidArgumentError("--db: a database path is required");
  std::unique_ptr<QkovServer> s(new QkovServer());
  storage::Database::Options db_options;
  db_options.synchronous_full = config.synchronous_full;
  ASSIGN_OR_RETURN(s->store_, storage::ResultsStore::Open(config.db_path, db_options));
  s->coordinator_ = std::make_unique<core::Coordinator>(s->store_.get(), Clock::Real(), config.coordinator);
  s->sweep_service_ = std::make_unique<SweepServiceImpl>(s->coordinator_.get());
  s->worker_service_ = std::make_unique<WorkerServiceImpl>(s->coordinator_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(), &s->port_);
  builder.RegisterService(s->sweep_service_.get());
  builder.RegisterService(s->worker_service_.get());
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen));
  }
  const absl::Duration period = std::max(absl::Milliseconds(100), config.coordinator.lease_duration / 4);
  QkovServer* self = s.get();
  s->reaper_ = std::thread([self, period]() {
    while (!self->stop_.WaitForNotificationWithTimeout(period)) {
      absl::StatusOr<int64_t> n = self->coordinator_->ReapExpiredLeases();
      if (!n.ok()) std::fprintf(stderr, "qkov-server: lease reaper: %s\n", n.status().ToString().c_str());
    }
  });
  return s;
}

void QkovServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  stop_.Notify();
  if (reaper_.joinable()) reaper_.join();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
}

QkovServer::~QkovServer() { Shutdown(); }

}  // namespace qkov::service
