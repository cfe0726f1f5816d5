#include "server/service/server.h"

#include <grpc/support/log.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/files.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace qkov::service {

namespace {

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no detail";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// The PEM file of a flag, parsed by OpenSSL as what the flag needs, so that a
// bad file is named here rather than failing inside gRPC's listener.
enum class PemKind { kCertificate, kPrivateKey };
absl::StatusOr<std::string> ReadPem(const std::string& flag,
                                    const std::string& path, PemKind kind) {
  ASSIGN_OR_RETURN(std::string pem, ReadFlagFile(flag, path));
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  bool ok = false;
  if (kind == PemKind::kCertificate) {
    X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    ok = cert != nullptr;
    X509_free(cert);
  } else {
    EVP_PKEY* key =
        PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    ok = key != nullptr;
    EVP_PKEY_free(key);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": ", path, " is not a PEM ",
        kind == PemKind::kCertificate ? "certificate" : "private key",
        " (OpenSSL: ", OpenSslError(), ")"));
  }
  return pem;
}

absl::Status CheckKeyMatchesCertificate(const std::string& cert_pem,
                                        const std::string& key_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> cb(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())),
      &BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> kb(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())),
      &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr), &X509_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr),
      &EVP_PKEY_free);
  if (cert == nullptr || key == nullptr ||
      X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        "--tls_key: the private key does not match --tls_cert");
  }
  return absl::OkStatus();
}

// gRPC's own log lines while the server starts, kept instead of printed: a
// failed start is then one line, with gRPC's reason in it.
absl::Mutex startup_log_mu(absl::kConstInit);
std::string* startup_log ABSL_GUARDED_BY(startup_log_mu) = nullptr;

void KeepStartupLog(gpr_log_func_args* args) {
  absl::MutexLock lock(&startup_log_mu);
  if (startup_log != nullptr && args->severity == GPR_LOG_SEVERITY_ERROR) {
    *startup_log = args->message;
  }
}

// gRPC's own messages (errors by default; GRPC_VERBOSITY asks for more),
// as events; a storm of them (a peer reconnecting in a loop) is
// rate-limited.
void PrintLog(gpr_log_func_args* args) {
  const log::Severity severity =
      args->severity == GPR_LOG_SEVERITY_ERROR  ? log::Severity::kError
      : args->severity == GPR_LOG_SEVERITY_INFO ? log::Severity::kInfo
                                                : log::Severity::kWarning;
  log::Emit(severity, "grpc_log",
            {{"file", args->file ? args->file : ""},
             {"line", args->line},
             {"error", args->message ? args->message : ""}},
            log::RateLimit{20, absl::Minutes(1)});
}

// Each trial event of the store as a log event: the fields a lab filters
// on (journalctl QKOV_TRIAL=...), one event per committed change.
void LogTrialEvents(const std::vector<storage::TrialEvent>& events) {
  using Kind = storage::TrialEvent::Kind;
  for (const storage::TrialEvent& e : events) {
    const absl::Duration took = absl::Milliseconds(e.duration_ms);
    switch (e.kind) {
      case Kind::kLeased:
        log::Info("trial_leased", {{"sweep", e.sweep_name},
                                   {"trial", e.trial_id},
                                   {"attempt", e.attempt},
                                   {"worker", e.worker_id}});
        break;
      case Kind::kExpired:
        log::Warning("lease_expired", {{"trial", e.trial_id},
                                       {"attempt", e.attempt},
                                       {"worker", e.worker_id},
                                       {"state", e.state},
                                       {"duration_s", took}});
        break;
      case Kind::kCompleted:
        log::Info("trial_completed", {{"trial", e.trial_id},
                                      {"attempt", e.attempt},
                                      {"worker", e.worker_id},
                                      {"state", e.state},
                                      {"task", e.task},
                                      {"duration_s", took}});
        break;
      case Kind::kFailed:
        log::Warning("trial_failed", {{"trial", e.trial_id},
                                      {"attempt", e.attempt},
                                      {"worker", e.worker_id},
                                      {"state", e.state},
                                      {"duration_s", took},
                                      {"error", e.reason}});
        break;
      case Kind::kPreempted:
        log::Info("trial_preempted", {{"trial", e.trial_id},
                                      {"attempt", e.attempt},
                                      {"worker", e.worker_id},
                                      {"duration_s", took},
                                      {"error", e.reason}});
        break;
      case Kind::kStoppedEarly:
        log::Info("trial_stopped_early", {{"trial", e.trial_id},
                                          {"attempt", e.attempt},
                                          {"worker", e.worker_id},
                                          {"duration_s", took},
                                          {"error", e.reason}});
        break;
    }
  }
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
  ASSIGN_OR_RETURN(std::string cert,
                   ReadPem("--tls_cert", c.tls_cert, PemKind::kCertificate));
  ASSIGN_OR_RETURN(std::string key,
                   ReadPem("--tls_key", c.tls_key, PemKind::kPrivateKey));
  RETURN_IF_ERROR(CheckKeyMatchesCertificate(cert, key));
  opts.pem_key_cert_pairs.push_back({key, cert});
  if (!c.tls_client_ca.empty()) {
    ASSIGN_OR_RETURN(
        opts.pem_root_certs,
        ReadPem("--tls_client_ca", c.tls_client_ca, PemKind::kCertificate));
    opts.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(opts);
}

}  // namespace

absl::StatusOr<Authenticator::ReloadCounts> QkovServer::ReloadTokens() {
  if (auth_ == nullptr) {
    return absl::FailedPreconditionError(
        "no --token_file: the server runs without tokens, nothing to reload");
  }
  return auth_->Reload(token_overlap_);
}

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
  s->token_overlap_ = config.token_overlap;
  RETURN_IF_ERROR(s->OpenStore(config));
  RETURN_IF_ERROR(s->StartCoordinator(config));
  RETURN_IF_ERROR(s->StartGrpc(config, credentials));
  if (absl::Status st = s->StartDashboard(config); !st.ok()) {
    s->server_->Shutdown();
    return st;
  }
  if (absl::Status st = s->StartMetricsFront(config); !st.ok()) {
    if (s->http_ != nullptr) s->http_->Stop();
    s->server_->Shutdown();
    return st;
  }
  s->StartReaper(config);
  return s;
}

// The results database, with the metrics collector (when metrics are on)
// and the trial-event log as its event sink.
absl::Status QkovServer::OpenStore(const ServerConfig& config) {
  storage::Database::Options db_options;
  db_options.synchronous_full = config.synchronous_full;
  db_options.profile_statements = config.profile_sql;
  absl::StatusOr<std::unique_ptr<storage::ResultsStore>> store =
      storage::ResultsStore::Open(config.db_path, db_options);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("--db: ", config.db_path,
                                     ": cannot open the results database: ",
                                     store.status().message()));
  }
  store_ = *std::move(store);
  if (!config.metrics_listen.empty()) {
    metrics_ = std::make_unique<ServerMetrics>(ServerMetrics::Options{
        store_.get(), config.db_path, config.coordinator.lease_duration,
        config.backup_dir});
  }
  ServerMetrics* metrics = metrics_.get();  // may be null
  store_->SetEventSink(
      [metrics](const std::vector<storage::TrialEvent>& events) {
        LogTrialEvents(events);
        if (metrics != nullptr) metrics->OnTrialEvents(events);
      });
  return absl::OkStatus();
}

// The SQL console, the coordinator (with its leases resumed) and the two
// services over it.
absl::Status QkovServer::StartCoordinator(const ServerConfig& config) {
  core::CoordinatorOptions coordinator_options = config.coordinator;
  if (metrics_ != nullptr) {
    ServerMetrics* metrics = metrics_.get();
    coordinator_options.on_worker_call = [metrics](const std::string& id) {
      metrics->WorkerSeen(id);
    };
  }
  sql_console_ =
      std::make_unique<storage::SqlConsole>(config.db_path, config.sql_console);
  coordinator_ = std::make_unique<core::Coordinator>(
      store_.get(), Clock::Real(), coordinator_options, sql_console_.get());
  // Leases of a server that stopped run on from now, not from before it
  // stopped (docs/protocol.md, "Coordinator restarts").
  absl::StatusOr<int64_t> resumed = coordinator_->workers().ResumeLeases();
  if (!resumed.ok()) return resumed.status();
  if (*resumed > 0) {
    // Each expires a lease period from now unless renewed.
    log::Info("leases_resumed",
              {{"leases", *resumed},
               {"expire_in_s", config.coordinator.lease_duration}});
  }
  sweep_service_ =
      std::make_unique<SweepServiceImpl>(coordinator_.get(), auth_.get());
  worker_service_ =
      std::make_unique<WorkerServiceImpl>(coordinator_.get(), auth_.get());
  return absl::OkStatus();
}

// The gRPC server: both services, health and reflection, the metrics and
// token interceptors, message limits and keepalives. UNAVAILABLE when the
// address cannot be bound, with gRPC's reason.
absl::Status QkovServer::StartGrpc(
    const ServerConfig& config,
    const std::shared_ptr<grpc::ServerCredentials>& credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, credentials, &port_);
  builder.RegisterService(sweep_service_.get());
  builder.RegisterService(worker_service_.get());
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  // The metrics interceptor first: it sees reflection calls that the token
  // check cancels.
  if (metrics_ != nullptr)
    interceptors.push_back(std::make_unique<RpcMetricsFactory>(metrics_.get()));
  if (auth_ != nullptr)
    interceptors.push_back(
        std::make_unique<ReflectionAuthFactory>(auth_.get()));
  if (!interceptors.empty())
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  // Workers ping every 10 s (worker/agent/coordinator_client.cc).
  builder.AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // gRPC sets SO_REUSEPORT by default, which lets a second server bind a
  // port that one already serves and take half its calls: refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::string grpc_error;
  {
    absl::MutexLock lock(&startup_log_mu);
    startup_log = &grpc_error;
  }
  gpr_set_log_function(&KeepStartupLog);
  server_ = builder.BuildAndStart();
  gpr_set_log_function(&PrintLog);
  {
    absl::MutexLock lock(&startup_log_mu);
    startup_log = nullptr;
  }
  if (server_ != nullptr && port_ != 0) return absl::OkStatus();
  // gRPC's message for a port in use ends in its errno text.
  const bool in_use =
      grpc_error.find("Address already in use") != std::string::npos;
  return absl::UnavailableError(
      absl::StrCat("--listen: cannot listen on ", config.listen,
                   in_use               ? " (address already in use)"
                   : grpc_error.empty() ? ""
                                        : absl::StrCat(" (", grpc_error, ")")));
}

// The dashboard, when --http_listen is set, and the thread that warms its
// row cache: the first visits after a restart read from memory.
absl::Status QkovServer::StartDashboard(const ServerConfig& config) {
  if (config.http_listen.empty()) return absl::OkStatus();
  HttpConfig http = config.http;
  http.listen = config.http_listen;
  http.static_dir = config.http_static_dir;
  http.tls_cert = config.tls_cert;
  http.tls_key = config.tls_key;
  http.tls_client_ca = config.tls_client_ca;
  ASSIGN_OR_RETURN(http_,
                   HttpService::Start(http, coordinator_.get(), auth_.get()));
  warmer_ = std::thread([this] {
    absl::Status st = coordinator_->results().WarmResultRows(
        core::ResultRowsCache::kMaxSweeps,
        [this] { return stop_.HasBeenNotified(); });
    if (!st.ok()) log::Warning("dashboard_warm_failed", {{"error", st}});
  });
  return absl::OkStatus();
}

// The Prometheus front, when --metrics_listen is set: a small one for a
// scraper or two.
absl::Status QkovServer::StartMetricsFront(const ServerConfig& config) {
  if (metrics_ == nullptr) return absl::OkStatus();
  http::HttpServer::Options m;
  m.listen = config.metrics_listen;
  m.limits.max_connections = 16;
  m.limits.max_connections_per_address = 8;
  m.limits.handler_threads = 2;
  m.limits.io_threads = 1;
  m.allowed_hosts.insert(config.http.allowed_hosts.begin(),
                         config.http.allowed_hosts.end());
  m.tls_cert = config.tls_cert;
  m.tls_key = config.tls_key;
  m.tls_client_ca = config.tls_client_ca;
  ServerMetrics* metrics = metrics_.get();
  const Authenticator* auth = auth_.get();
  m.handler = [metrics, auth](const http::HttpRequest& r) {
    return ServeMetrics(r, *metrics, auth);
  };
  absl::StatusOr<std::unique_ptr<http::HttpServer>> started =
      http::HttpServer::Start(std::move(m));
  if (!started.ok()) {
    return absl::Status(
        started.status().code(),
        absl::StrCat("--metrics_listen: ", started.status().message()));
  }
  metrics_http_ = *std::move(started);
  return absl::OkStatus();
}

// Expires the leases of workers that stopped calling, every quarter lease
// period (at least 100 ms), until Shutdown.
void QkovServer::StartReaper(const ServerConfig& config) {
  const absl::Duration period =
      std::max(absl::Milliseconds(100), config.coordinator.lease_duration / 4);
  reaper_ = std::thread([this, period]() {
    while (!stop_.WaitForNotificationWithTimeout(period)) {
      absl::StatusOr<int64_t> n = coordinator_->workers().ReapExpiredLeases();
      if (!n.ok()) {
        log::Emit(log::Severity::kError, "lease_reaper_failed",
                  {{"error", n.status()}}, log::RateLimit{5, absl::Minutes(1)});
      }
    }
  });
}

void QkovServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  if (sql_console_ != nullptr) sql_console_->Shutdown();
  if (metrics_http_ != nullptr) metrics_http_->Stop();
  if (http_ != nullptr) http_->Stop();
  // Watch streams end and researchers' reads stop now, not after the grace:
  // the grace is for workers' calls, whose results must be stored.
  if (coordinator_ != nullptr) coordinator_->changes().StopWatches();
  if (store_ != nullptr) store_->StopReads();
  stop_.Notify();
  if (reaper_.joinable()) reaper_.join();
  if (warmer_.joinable()) warmer_.join();
  if (server_ != nullptr)
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
}

QkovServer::~QkovServer() { Shutdown(); }

}  // namespace qkov::service
