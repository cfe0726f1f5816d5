#include "server/service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace qkov::service {

namespace {

absl::StatusOr<std::string> ReadPem(const std::string& flag,
                                    const std::string& path) {
  ASSIGN_OR_RETURN(std::string pem, ReadFlagFile(flag, path));
  if (pem.find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return pem;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(
    const ServerConfig& c) {
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (c.tls_cert.empty()) {
    if (!c.tls_client_ca.empty())
      return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert");
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions opts;
  ASSIGN_OR_RETURN(std::string cert, ReadPem("--tls_cert", c.tls_cert));
  ASSIGN_OR_RETURN(std::string key, ReadPem("--tls_key", c.tls_key));
  opts.pem_key_cert_pairs.push_back({key, cert});
  if (!c.tls_client_ca.empty()) {
    ASSIGN_OR_RETURN(opts.pem_root_certs,
                     ReadPem("--tls_client_ca", c.tls_client_ca));
    opts.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(opts);
}

}  // namespace

absl::StatusOr<std::unique_ptr<QkovServer>> QkovServer::Start(
    const ServerConfig& config) {
  // Debian's Abseil is built with mutex deadlock detection on; its graph
  // bookkeeping costs every lock on the hot path and our lock order is flat.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (config.db_path.empty())
    return absl::InvalidArgumentError("--db: a database path is required");
  std::unique_ptr<QkovServer> s(new QkovServer());
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   Credentials(config));
  if (!config.token_file.empty()) {
    ASSIGN_OR_RETURN(s->auth_, Authenticator::Load(config.token_file));
  }
  storage::Database::Options db_options;
  db_options.synchronous_full = config.synchronous_full;
  db_options.profile_statements = config.profile_sql;
  ASSIGN_OR_RETURN(s->store_,
                   storage::ResultsStore::Open(config.db_path, db_options));
  s->sql_console_ =
      std::make_unique<storage::SqlConsole>(config.db_path, config.sql_console);
  s->coordinator_ = std::make_unique<core::Coordinator>(
      s->store_.get(), Clock::Real(), config.coordinator,
      s->sql_console_.get());
  s->sweep_service_ =
      std::make_unique<SweepServiceImpl>(s->coordinator_.get(), s->auth_.get());
  s->worker_service_ = std::make_unique<WorkerServiceImpl>(
      s->coordinator_.get(), s->auth_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, credentials, &s->port_);
  builder.RegisterService(s->sweep_service_.get());
  builder.RegisterService(s->worker_service_.get());
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config.listen));
  }
  const absl::Duration period =
      std::max(absl::Milliseconds(100), config.coordinator.lease_duration / 4);
  QkovServer* self = s.get();
  s->reaper_ = std::thread([self, period]() {
    while (!self->stop_.WaitForNotificationWithTimeout(period)) {
      absl::StatusOr<int64_t> n = self->coordinator_->ReapExpiredLeases();
      if (!n.ok())
        std::fprintf(stderr, "qkov-server: lease reaper: %s\n",
                     n.status().ToString().c_str());
    }
  });
  return s;
}

void QkovServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  if (sql_console_ != nullptr) sql_console_->Shutdown();
  stop_.Notify();
  if (reaper_.joinable()) reaper_.join();
  if (server_ != nullptr)
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
}

QkovServer::~QkovServer() { Shutdown(); }

}  // namespace qkov::service
