// QkovServer: owns the results store, the Coordinator, both gRPC services
// (plus health checking and reflection), the dashboard's HTTP service when
// asked for, and the lease reaper thread.
#ifndef QKOV_SERVER_SERVICE_SERVER_H_
#define QKOV_SERVER_SERVICE_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "http/http_server.h"
#include "server/core/coordinator.h"
#include "server/service/http_service.h"
#include "server/service/server_metrics.h"
#include "server/service/sweep_service.h"
#include "server/service/worker_service.h"
#include "storage/results_store.h"
#include "storage/sql_console.h"

namespace qkov::service {

struct ServerConfig {
  std::string listen = "127.0.0.1:0";  // host:port; port 0 picks a free one
  std::string db_path;
  bool synchronous_full = false;
  // Profile the store's SQL statements (Database::Options::
  // profile_statements); for diagnosis.
  bool profile_sql = false;
  core::CoordinatorOptions coordinator;
  // The SQL console's sandbox: time budget, result and value caps.
  storage::SqlConsole::Options sql_console;
  int max_message_bytes = 16 << 20;
  // Authentication (docs/security.md). Empty token_file: no authentication.
  // ReloadTokens() keeps a token that left the file valid for token_overlap.
  std::string token_file;
  absl::Duration token_overlap = absl::Minutes(15);
  // TLS: PEM files. Empty cert: plaintext. client_ca set: workers and
  // clients must present a certificate signed by it.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // The dashboard (server/service/http_service.h): empty http_listen is
  // off. It shares the TLS files and tokens above; `http` holds its limits,
  // caps and host names (its listen, static_dir and TLS fields are set from
  // the ones here).
  std::string http_listen;
  std::string http_static_dir;
  HttpConfig http;
  // Prometheus metrics (server/service/server_metrics.h) at /metrics on
  // HOST:PORT; empty is off. Same TLS files as above; with a token file, a
  // scrape needs a token of the read-only, user or admin role
  // (docs/operations.md).
  std::string metrics_listen;
  // The folder of qkov-backup's verified copies: the age of the newest is a
  // metric (qkov_backup_last_success_timestamp_seconds). Empty: none.
  std::string backup_dir;
};

class QkovServer {
 public:
  // Opens (and migrates) the database, starts listening. UNAVAILABLE when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<QkovServer>> Start(
      const ServerConfig& config);
  ~QkovServer();

  int port() const { return port_; }
  // The dashboard's port; 0 when it is off.
  int http_port() const { return http_ == nullptr ? 0 : http_->port(); }
  // The metrics listener's port; 0 when it is off.
  int metrics_port() const {
    return metrics_http_ == nullptr ? 0 : metrics_http_->port();
  }
  // Waits until the dashboard's row cache has read the most recent sweeps
  // (started with the dashboard; for benchmarks).
  void WaitUntilWarm() {
    if (warmer_.joinable()) warmer_.join();
  }
  // The server's store (for benchmarks that read its write statistics).
  storage::ResultsStore* store() { return store_.get(); }
  // Its coordinator, for tests that call it beside gRPC rather than through
  // it (tests/integration/concurrency_stress_test.cc's Direct case, which
  // ThreadSanitizer follows without an instrumented gRPC).
  core::Coordinator* coordinator() { return coordinator_.get(); }
  // Reads the token file again (SIGHUP, `systemctl reload qkov-server`):
  // Authenticator::Reload with the configured overlap. FAILED_PRECONDITION
  // when the server runs without tokens; the file's own error (the tokens
  // in use unchanged) when it does not parse.
  absl::StatusOr<Authenticator::ReloadCounts> ReloadTokens();
  // Stops SQL console queries at once, stops accepting calls, finishes
  // running ones (up to `grace`), stops the reaper. Idempotent; does nothing
  // on a server that never started.
  void Shutdown(absl::Duration grace = absl::Seconds(5));

 private:
  QkovServer() = default;

  // Start's steps, in order. Each failure after the gRPC server is up
  // shuts down what started before it.
  absl::Status OpenStore(const ServerConfig& config);
  absl::Status StartCoordinator(const ServerConfig& config);
  absl::Status StartGrpc(
      const ServerConfig& config,
      const std::shared_ptr<grpc::ServerCredentials>& credentials);
  absl::Status StartDashboard(const ServerConfig& config);
  absl::Status StartMetricsFront(const ServerConfig& config);
  void StartReaper(const ServerConfig& config);

  std::unique_ptr<Authenticator> auth_;
  absl::Duration token_overlap_;
  std::unique_ptr<storage::ResultsStore> store_;
  std::unique_ptr<storage::SqlConsole> sql_console_;
  std::unique_ptr<core::Coordinator> coordinator_;
  std::unique_ptr<SweepServiceImpl> sweep_service_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HttpService> http_;
  std::unique_ptr<ServerMetrics> metrics_;  // null when metrics are off
  std::unique_ptr<http::HttpServer> metrics_http_;
  absl::Notification stop_;
  std::thread reaper_;
  std::thread warmer_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_SERVER_H_
