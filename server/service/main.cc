// qkov-server: the coordinator. Flags only here; they fill a ServerConfig.
//
//   qkov-server --db=/path/results.db --listen=127.0.0.1:0 --port_file=port
//
// Exits 0 after SIGTERM/SIGINT (graceful shutdown), 2 on bad flags, 1 when
// the database or port cannot be opened. SIGHUP reads --token_file again
// (QkovServer::ReloadTokens) and goes on serving whatever the file holds.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/flags_help.h"
#include "common/log.h"
#include "common/man_page.h"
#include "common/signals.h"
#include "common/version.h"
#include "server/service/server.h"
#include "server/service/server_manual.h"

ABSL_FLAG(
    std::string, db, "",
    "SQLite results database (created if missing; keep it on local disk)");
ABSL_FLAG(std::string, listen, "127.0.0.1:0",
          "address to listen on: HOST:PORT (port 0 picks a free port) or "
          "unix:PATH, a Unix socket (its port file then holds 1)");
ABSL_FLAG(std::string, port_file, "",
          "write the bound port here once listening");
ABSL_FLAG(int, lease_seconds, 30,
          "lease duration; a worker silent this long loses its trial");
ABSL_FLAG(int, heartbeat_seconds, 5, "heartbeat interval told to workers");
ABSL_FLAG(int64_t, max_trials, 200000,
          "largest grid accepted in one submission");
ABSL_FLAG(bool, synchronous_full, false,
          "PRAGMA synchronous=FULL (survive power loss, slower)");
ABSL_FLAG(
    std::string, token_file, "",
    "bearer tokens: one 'ROLE TOKEN NAME' line each, ROLE worker, user, admin "
    "or read-only (docs/security.md); read again on SIGHUP");
ABSL_FLAG(int, token_overlap_seconds, 900,
          "after a reload (SIGHUP), a token that left --token_file stays "
          "valid this long (0: refused at once; docs/cluster.md, \"Day "
          "two\")");
ABSL_FLAG(double, max_trial_memory_gb, 16,
          "refuse sweeps whose trials would need more memory than this on a "
          "worker (estimated from their shapes, docs/security.md)");
ABSL_FLAG(int, sql_timeout_seconds, 10,
          "time budget of one SQL console query (qkov sql)");
ABSL_FLAG(std::string, init_tokens, "",
          "write a first token file here (one token per role, mode 0600; "
          "never over an existing file) and exit");
ABSL_FLAG(std::string, tls_cert, "", "server certificate (PEM); enables TLS");
ABSL_FLAG(std::string, tls_key, "", "server private key (PEM)");
ABSL_FLAG(std::string, tls_client_ca, "",
          "CA (PEM) that client certificates must chain to; requires them");

ABSL_FLAG(std::string, http_listen, "",
          "serve the read-only dashboard on HOST:PORT (port 0 picks one); "
          "off when empty (docs/dashboard.md)");
ABSL_FLAG(std::string, http_static_dir, "",
          "the dashboard's files (default: share/qkov/dashboard beside the "
          "binary's bin/)");
ABSL_FLAG(std::string, http_port_file, "",
          "write the dashboard's bound port here once listening");
ABSL_FLAG(std::string, log_format, "text",
          "log events as 'text' (logfmt lines) or 'json' (one object per "
          "line); under systemd they go to the journal with their fields "
          "(docs/operations.md)");
ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics at http(s)://HOST:PORT/metrics (port 0 "
          "picks one); off when empty. With --token_file a scrape needs a "
          "read-only, user or admin token (docs/operations.md)");
ABSL_FLAG(std::string, backup_dir, "",
          "the folder of qkov-backup's verified copies (results-*.db): "
          "/metrics gives the newest one's time (docs/operations.md)");
ABSL_FLAG(std::string, metrics_port_file, "",
          "write the metrics listener's bound port here once listening");
// The dashboard's limits (docs/security.md, "The dashboard's HTTP front").
ABSL_FLAG(std::vector<std::string>, http_allowed_hosts, {},
          "Host names the dashboard answers to besides its listen address's "
          "(loopback names for a loopback listener; this machine's name for "
          "a wildcard); any IP literal is always served. Closes DNS "
          "rebinding");
ABSL_FLAG(int, http_max_connections, 256,
          "open dashboard connections in total");
ABSL_FLAG(int, http_max_connections_per_address, 32,
          "open dashboard connections per client IP address");
ABSL_FLAG(int, http_header_bytes, 32 << 10,
          "buffer for a request line and its headers (414/431 past it)");
ABSL_FLAG(int, http_max_headers, 100, "header lines per request (431 past it)");
ABSL_FLAG(int, http_max_query_args, 64,
          "query arguments per request (414 past it)");
ABSL_FLAG(int, http_max_body_bytes, 4096,
          "bytes of a POST body (the login form; 413 past it)");
ABSL_FLAG(int, http_request_timeout_seconds, 10,
          "from a connection waiting for a request to that request's last "
          "byte; then the connection is closed");
ABSL_FLAG(int, http_idle_timeout_seconds, 10,
          "a dashboard connection with no byte either way this long is "
          "closed");
ABSL_FLAG(int, http_threads, 8, "threads that answer the JSON API");
ABSL_FLAG(int, http_max_event_streams, 32,
          "open /api/v1/events streams in total");
ABSL_FLAG(int, http_event_streams_per_token, 8,
          "open /api/v1/events streams per token (per address without "
          "tokens)");
ABSL_FLAG(int, http_session_lifetime_seconds, 12 * 3600,
          "how long a dashboard login lasts");
ABSL_FLAG(int, http_sessions_per_token, 16,
          "dashboard sessions per token; a further login ends its oldest");
ABSL_FLAG(int, http_login_failures_per_minute, 10,
          "failed dashboard logins per client address (a burst of as many, "
          "then one back every 60/N s; 429 past it)");
ABSL_FLAG(int, http_logins_per_token_per_minute, 30,
          "dashboard logins per token (429 past it)");

namespace {

// share/qkov/dashboard next to the directory holding this binary.
std::string DefaultStaticDir() {
  std::error_code ec;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "share/qkov/dashboard";
  return (exe.parent_path().parent_path() / "share" / "qkov" / "dashboard")
      .string();
}

// The --http_* limits into `http`; INVALID_ARGUMENT naming the first flag
// out of range.
absl::Status HttpFlags(qkov::service::HttpConfig* http) {
  struct Bound {
    const char* name;
    int value;
    int lo, hi;
  };
  const Bound bounds[] = {
      {"--http_max_connections", absl::GetFlag(FLAGS_http_max_connections), 1,
       100000},
      {"--http_max_connections_per_address",
       absl::GetFlag(FLAGS_http_max_connections_per_address), 1, 100000},
      {"--http_header_bytes", absl::GetFlag(FLAGS_http_header_bytes), 4096,
       1 << 20},
      {"--http_max_headers", absl::GetFlag(FLAGS_http_max_headers), 8, 10000},
      {"--http_max_query_args", absl::GetFlag(FLAGS_http_max_query_args), 1,
       10000},
      {"--http_max_body_bytes", absl::GetFlag(FLAGS_http_max_body_bytes), 1024,
       1 << 20},
      {"--http_request_timeout_seconds",
       absl::GetFlag(FLAGS_http_request_timeout_seconds), 1, 3600},
      {"--http_idle_timeout_seconds",
       absl::GetFlag(FLAGS_http_idle_timeout_seconds), 1, 3600},
      {"--http_threads", absl::GetFlag(FLAGS_http_threads), 1, 256},
      {"--http_max_event_streams", absl::GetFlag(FLAGS_http_max_event_streams),
       1, 10000},
      {"--http_event_streams_per_token",
       absl::GetFlag(FLAGS_http_event_streams_per_token), 1, 10000},
      {"--http_session_lifetime_seconds",
       absl::GetFlag(FLAGS_http_session_lifetime_seconds), 1, 366 * 86400},
      {"--http_sessions_per_token",
       absl::GetFlag(FLAGS_http_sessions_per_token), 1, 10000},
      {"--http_login_failures_per_minute",
       absl::GetFlag(FLAGS_http_login_failures_per_minute), 1, 60000},
      {"--http_logins_per_token_per_minute",
       absl::GetFlag(FLAGS_http_logins_per_token_per_minute), 1, 60000},
  };
  for (const Bound& b : bounds) {
    if (b.value < b.lo || b.value > b.hi) {
      return absl::InvalidArgumentError(absl::StrCat(
          b.name, " must be in [", b.lo, ", ", b.hi, "], not ", b.value));
    }
  }
  qkov::http::HttpLimits& l = http->limits;
  l.max_connections = absl::GetFlag(FLAGS_http_max_connections);
  l.max_connections_per_address =
      absl::GetFlag(FLAGS_http_max_connections_per_address);
  l.header_bytes = absl::GetFlag(FLAGS_http_header_bytes);
  l.max_headers = absl::GetFlag(FLAGS_http_max_headers);
  l.max_query_args = absl::GetFlag(FLAGS_http_max_query_args);
  l.max_body_bytes = absl::GetFlag(FLAGS_http_max_body_bytes);
  l.request_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_http_request_timeout_seconds));
  l.idle_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_http_idle_timeout_seconds));
  l.handler_threads = absl::GetFlag(FLAGS_http_threads);
  http->allowed_hosts = absl::GetFlag(FLAGS_http_allowed_hosts);
  http->max_event_streams = absl::GetFlag(FLAGS_http_max_event_streams);
  http->event_streams_per_token =
      absl::GetFlag(FLAGS_http_event_streams_per_token);
  http->session_lifetime =
      absl::Seconds(absl::GetFlag(FLAGS_http_session_lifetime_seconds));
  http->sessions_per_token = absl::GetFlag(FLAGS_http_sessions_per_token);
  const int failures = absl::GetFlag(FLAGS_http_login_failures_per_minute);
  http->failures_per_address = {failures, absl::Seconds(60) / failures, 10000};
  const int logins = absl::GetFlag(FLAGS_http_logins_per_token_per_minute);
  http->logins_per_token = {logins, absl::Seconds(60) / logins, 10000};
  return absl::OkStatus();
}

void WritePortFile(const std::string& path, int port) {
  if (path.empty()) return;
  // Write then rename, so a reader never sees a half-written port.
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::rename(tmp.c_str(), path.c_str());
}

// SIGHUP: the token file read again; the outcome logged (a file that does
// not parse leaves the tokens in use, and says why).
void ReloadTokens(qkov::service::QkovServer& server) {
  absl::StatusOr<qkov::service::Authenticator::ReloadCounts> counts =
      server.ReloadTokens();
  if (!counts.ok()) {
    qkov::log::Error("tokens_not_reloaded", {{"error", counts.status()}});
    return;
  }
  qkov::log::Info("tokens_reloaded",
                  {{"tokens", counts->tokens},
                   {"added", counts->added},
                   {"retired", counts->retired},
                   {"retired_valid_until", absl::FormatTime(counts->until)}});
}

}  // namespace

int main(int argc, char** argv) {
  qkov::HelpListsFlagsOf(__FILE__, "qkov-server", qkov::CodeVersion());
  qkov::PrintManPageIfAsked(argc, argv, qkov::service::ServerManPage(),
                            qkov::CodeVersion());
  absl::SetProgramUsageMessage(
      "qkov-server --db=FILE [--listen=HOST:PORT] [--port_file=FILE]");
  absl::ParseCommandLine(argc, argv);
  if (absl::Status st =
          qkov::log::Init("qkov-server", absl::GetFlag(FLAGS_log_format));
      !st.ok()) {
    std::fprintf(stderr, "qkov-server: %s\n",
                 std::string(st.message()).c_str());
    return 2;
  }
  // A start-up refusal: one event naming the problem, then exit `code`.
  auto refuse = [](absl::string_view message, int code) {
    qkov::log::Error("start_refused", {{"error", message}});
    return code;
  };

  if (const std::string path = absl::GetFlag(FLAGS_init_tokens);
      !path.empty()) {
    if (absl::Status st = qkov::service::WriteNewTokenFile(path); !st.ok())
      return refuse(st.message(), 1);
    std::printf(
        "qkov-server: wrote %s (mode 0600): one token each for worker "
        "(workers), user (user), admin (admin) and read-only (readers)\n",
        path.c_str());
    return 0;
  }
  qkov::service::ServerConfig config;
  config.db_path = absl::GetFlag(FLAGS_db);
  config.listen = absl::GetFlag(FLAGS_listen);
  config.synchronous_full = absl::GetFlag(FLAGS_synchronous_full);
  config.token_file = absl::GetFlag(FLAGS_token_file);
  if (absl::GetFlag(FLAGS_token_overlap_seconds) < 0)
    return refuse("--token_overlap_seconds must be 0 or more", 2);
  config.token_overlap =
      absl::Seconds(absl::GetFlag(FLAGS_token_overlap_seconds));
  config.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  if (absl::GetFlag(FLAGS_lease_seconds) < 1 ||
      absl::GetFlag(FLAGS_heartbeat_seconds) < 1 ||
      absl::GetFlag(FLAGS_heartbeat_seconds) >=
          absl::GetFlag(FLAGS_lease_seconds)) {
    return refuse("need 1 <= --heartbeat_seconds < --lease_seconds", 2);
  }
  config.coordinator.lease_duration =
      absl::Seconds(absl::GetFlag(FLAGS_lease_seconds));
  config.coordinator.heartbeat_interval =
      absl::Seconds(absl::GetFlag(FLAGS_heartbeat_seconds));
  config.coordinator.limits.max_trials = absl::GetFlag(FLAGS_max_trials);
  if (absl::GetFlag(FLAGS_sql_timeout_seconds) < 1 ||
      absl::GetFlag(FLAGS_sql_timeout_seconds) > 3600) {
    return refuse("--sql_timeout_seconds must be in [1, 3600]", 2);
  }
  const double memory_gb = absl::GetFlag(FLAGS_max_trial_memory_gb);
  if (!(memory_gb > 0) || memory_gb > 1e6)
    return refuse("--max_trial_memory_gb must be in (0, 1e6]", 2);
  config.coordinator.limits.max_trial_memory_bytes =
      static_cast<int64_t>(memory_gb * 1e9);
  config.sql_console.time_budget =
      absl::Seconds(absl::GetFlag(FLAGS_sql_timeout_seconds));
  config.http_listen = absl::GetFlag(FLAGS_http_listen);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.backup_dir = absl::GetFlag(FLAGS_backup_dir);
  if (absl::Status st = HttpFlags(&config.http); !st.ok())
    return refuse(st.message(), 2);
  config.http_static_dir = absl::GetFlag(FLAGS_http_static_dir);
  if (config.http_static_dir.empty())
    config.http_static_dir = DefaultStaticDir();
  if (config.db_path.empty()) return refuse("--db is required", 2);

  // A client that goes away mid-reply (a closed browser tab on the TLS
  // dashboard) must not end the server.
  std::signal(SIGPIPE, SIG_IGN);
  auto server = qkov::service::QkovServer::Start(config);
  if (!server.ok()) return refuse(server.status().ToString(), 1);
  const int port = (*server)->port();
  WritePortFile(absl::GetFlag(FLAGS_port_file), port);
  WritePortFile(absl::GetFlag(FLAGS_http_port_file), (*server)->http_port());
  WritePortFile(absl::GetFlag(FLAGS_metrics_port_file),
                (*server)->metrics_port());
  std::string dashboard;
  if ((*server)->http_port() > 0) {
    const std::string& l = config.http_listen;
    std::string host = l.substr(0, l.rfind(':'));
    if (host == "0.0.0.0" || host == "[::]" || host.empty()) host = "localhost";
    dashboard = absl::StrCat(config.tls_cert.empty() ? "http" : "https", "://",
                             host, ":", (*server)->http_port(), "/");
  }
  qkov::log::Info(
      "server_started",
      {{"version", qkov::CodeVersion()},
       {"port", port},
       {"tls", !config.tls_cert.empty()},
       {"auth", config.token_file.empty() ? "none" : "bearer tokens"},
       {"db", config.db_path},
       {"dashboard", dashboard},
       {"metrics_port", (*server)->metrics_port()}});
  // A Unix socket, like loopback, is reachable from this machine only.
  auto beyond_loopback = [](const std::string& listen) {
    return !listen.empty() && listen.rfind("127.", 0) != 0 &&
           listen.rfind("unix:", 0) != 0 && listen.rfind("localhost", 0) != 0 &&
           listen.rfind("[::1]", 0) != 0;
  };
  if (config.token_file.empty() &&
      (beyond_loopback(config.listen) || beyond_loopback(config.http_listen) ||
       beyond_loopback(config.metrics_listen))) {
    qkov::log::Warning(
        "no_authentication",
        {{"error", "listening beyond loopback without --token_file"}});
  }
  absl::Notification stop;
  int stop_signal = 0;
  qkov::WatchSignals({SIGTERM, SIGINT, SIGHUP}, [&](int sig) {
    if (sig == SIGHUP) {
      ReloadTokens(**server);
      return;
    }
    if (stop.HasBeenNotified()) return;
    stop_signal = sig;
    stop.Notify();
  });
  stop.WaitForNotification();
  qkov::log::Info("server_stopping", {{"signal", stop_signal}});
  (*server)->Shutdown();
  qkov::log::Info("server_stopped");
  return 0;
}
