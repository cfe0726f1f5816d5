// HttpService: the read-only dashboard and its JSON API (docs/dashboard.md)
// beside the gRPC port, on the hardened front in http_server.h. Like the
// gRPC services it is an adapter over core::Coordinator: it authenticates,
// turns query parameters into the same request messages, and writes the
// replies as proto3 JSON. It never touches the store.
//
//   GET  /                          sweeps page     (static, the SPA)
//   GET  /sweeps/NAME, /trials/ID   sweep and trial pages (the same SPA)
//   GET  /static/NAME               the SPA's files and Chart.js
//   GET  /login, POST /login        token form; sets the session cookie
//   POST /logout
//   GET  /api/v1/...                JSON (docs/dashboard.md lists each)
//   GET  /api/v1/events             server-sent events on every change
//
// HEAD is answered wherever GET is, with the same headers. Logins are
// throttled (login_throttle.h), sessions capped per token, and POSTs must
// come from the dashboard's own pages (docs/security.md).
//
// Its files: http_service.cc (start, pages, files, the JSON API),
// http_sessions.cc (Authorize, login, logout, same-origin) and
// http_events.cc (server-sent events).
//
// Thread safety: Start once; Stop from any thread.
#ifndef QKOV_SERVER_SERVICE_HTTP_SERVICE_H_
#define QKOV_SERVER_SERVICE_HTTP_SERVICE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "http/http_server.h"
#include "server/core/coordinator.h"
#include "server/service/auth.h"
#include "server/service/login_throttle.h"
#include "server/service/reply_cache.h"

namespace qkov::service {

struct HttpConfig {
  std::string listen;      // HOST:PORT; port 0 picks a free one
  std::string static_dir;  // the SPA's files (index.html, app.js, ...)
  // TLS, with the gRPC port's files. Empty cert: plaintext.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  http::HttpLimits limits;
  // Host names served besides HttpServer::DefaultAllowedHosts(listen host).
  std::vector<std::string> allowed_hosts;
  int max_event_streams = 32;  // open /api/v1/events connections in all
  // ... per token holder (per client address without tokens).
  int event_streams_per_token = 8;
  absl::Duration session_lifetime = absl::Hours(12);
  int sessions_per_token = 16;  // a further login ends the token's oldest
  // Failed logins per client address, and logins per token.
  LoginThrottle::Options failures_per_address = {10, absl::Seconds(6), 10000};
  LoginThrottle::Options logins_per_token = {30, absl::Seconds(2), 10000};
  // Finished trials the matched view compares at most (each one's curves
  // are read for it); more: 400 pointing at where= and the CLI.
  int matched_max_trials = 2000;
};

class HttpService {
 public:
  // `core` and `auth` (null: no authentication) must outlive the service.
  // UNAVAILABLE when the address cannot be bound, INVALID_ARGUMENT for a bad
  // address, static root, limit or TLS file.
  static absl::StatusOr<std::unique_ptr<HttpService>> Start(
      const HttpConfig& config, core::Coordinator* core,
      const Authenticator* auth);
  ~HttpService();

  int port() const { return server_->port(); }
  // Ends event streams, stops accepting, finishes running requests.
  // Idempotent.
  void Stop();

 private:
  struct Session {
    std::string token;
    absl::Time expires;
  };
  struct StaticFile {
    std::string bytes;
    std::string content_type;
  };
  // An open event stream, as the events loop follows it.
  struct Follower {
    std::shared_ptr<http::ReplyStream> stream;
    std::string sweep;  // "" for the sweep list
    absl::Time since;   // trials changed since then go in the next event
  };

  HttpService(const HttpConfig& config, core::Coordinator* core,
              const Authenticator* auth);
  http::HttpReply Handle(const http::HttpRequest& req);
  http::HttpReply Get(const http::HttpRequest& req);
  // /api/v1/sweeps/NAME/VIEW (results, export.csv and .json, aggregate,
  // curves, heatmaps, matched); nullopt for any other view.
  std::optional<http::HttpReply> SweepSubview(const http::HttpRequest& req,
                                              const std::string& name,
                                              const std::string& view);
  // The caller's key for per-token caps (its token holder, or its address
  // without tokens), or the status to answer with.
  absl::StatusOr<std::string> Authorize(const http::HttpRequest& req) const;
  http::HttpReply Api(const http::HttpRequest& req,
                      const std::function<absl::StatusOr<std::string>()>& body);
  // Api for the views of a whole sweep (table pages, aggregates, curves,
  // heatmaps, matched values): answered from replies_, shared by every open
  // page.
  http::HttpReply SweepView(
      const http::HttpRequest& req,
      const std::function<absl::StatusOr<std::string>()>& body);
  http::HttpReply Export(const http::HttpRequest& req, const std::string& sweep,
                         bool csv);
  // /api/v1/sweeps/NAME/matched: MatchSweep over the coordinator, as JSON.
  absl::StatusOr<std::string> Matched(const http::HttpRequest& req,
                                      const std::string& sweep);
  http::HttpReply Events(const http::HttpRequest& req);
  // /report: the reproduction report (common/report/report.h) of this
  // server's sweeps as one HTML page (http_report.cc); ?sweep=CLAIM=SWEEP
  // as `qkov report --sweep`.
  http::HttpReply ReportPage(const http::HttpRequest& req);
  http::HttpReply Login(const http::HttpRequest& req);
  http::HttpReply Logout(const http::HttpRequest& req);
  http::HttpReply File(const std::string& name, const char* cache_control);
  // Whether a POST's Origin (or, without one, its Referer) is this
  // dashboard.
  static bool SameOrigin(const http::HttpRequest& req);
  // Follows every open stream: one event per change, coalesced; a comment
  // on a quiet stream every 15 s.
  void EventsLoop();
  std::string Event(Follower& f, const std::string* sweeps_json);

  const HttpConfig config_;
  core::Coordinator* core_;
  const Authenticator* auth_;
  std::unique_ptr<http::HttpServer> server_;
  absl::flat_hash_map<std::string, StaticFile> files_;
  ReplyCache replies_{Clock::Real()};
  LoginThrottle failures_;
  LoginThrottle logins_;
  std::atomic<bool> stopping_{false};
  std::thread events_thread_;

  mutable absl::Mutex sessions_mu_;
  absl::flat_hash_map<std::string, Session> sessions_
      ABSL_GUARDED_BY(sessions_mu_);
  // Each token's session ids, oldest first.
  absl::flat_hash_map<std::string, std::deque<std::string>> by_token_
      ABSL_GUARDED_BY(sessions_mu_);

  absl::Mutex streams_mu_;
  std::vector<std::shared_ptr<Follower>> followers_
      ABSL_GUARDED_BY(streams_mu_);
  int open_streams_ ABSL_GUARDED_BY(streams_mu_) = 0;
  absl::flat_hash_map<std::string, int> streams_by_key_
      ABSL_GUARDED_BY(streams_mu_);
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_HTTP_SERVICE_H_
