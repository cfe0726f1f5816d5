// HttpService: the read-only dashboard and its JSON API (docs/dashboard.md),
// served with cpp-httplib beside the gRPC port. Like the gRPC services it is
// an adapter over core::Coordinator: it authenticates, turns query
// parameters into the same request messages, and writes the replies as
// proto3 JSON. It never touches the store.
//
//   GET  /                          sweeps page     (static, the SPA)
//   GET  /sweeps/NAME, /trials/ID   sweep and trial pages (the same SPA)
//   GET  /static/...                the SPA's files and Chart.js
//   GET  /login, POST /login        token form; sets the session cookie
//   POST /logout
//   GET  /api/v1/...                JSON (docs/dashboard.md lists each)
//   GET  /api/v1/events             server-sent events on every change
//
// Thread safety: Start once; Stop from any thread.
#ifndef QKOV_SERVER_SERVICE_HTTP_SERVICE_H_
#define QKOV_SERVER_SERVICE_HTTP_SERVICE_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/coordinator.h"
#include "server/service/auth.h"
#include "server/service/reply_cache.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace qkov::service {

struct HttpConfig {
  std::string listen;      // HOST:PORT; port 0 picks a free one
  std::string static_dir;  // the SPA's files (index.html, app.js, ...)
  // TLS, with the gRPC port's files. Empty cert: plaintext.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  int threads = 48;            // request threads
  int max_event_streams = 32;  // open /api/v1/events connections
  absl::Duration session_lifetime = absl::Hours(12);
};

class HttpService {
 public:
  // `core` and `auth` (null: no authentication) must outlive the service.
  // UNAVAILABLE when the address cannot be bound, INVALID_ARGUMENT for a bad
  // address, static root or TLS file.
  static absl::StatusOr<std::unique_ptr<HttpService>> Start(
      const HttpConfig& config, core::Coordinator* core,
      const Authenticator* auth);
  ~HttpService();

  int port() const { return port_; }
  // Ends event streams, stops accepting, joins the listener. Idempotent.
  void Stop();

 private:
  struct Session {
    std::string token;
    absl::Time expires;
  };

  HttpService(const HttpConfig& config, core::Coordinator* core,
              const Authenticator* auth);
  void Routes();
  // OK (and the caller's identity) or the status to answer with.
  absl::Status Authorize(const httplib::Request& req) const;
  void Api(const httplib::Request& req, httplib::Response& res,
           const std::function<absl::StatusOr<std::string>()>& body);
  // Api for the views of a whole sweep (table pages, aggregates, curves,
  // heatmaps): answered from replies_, shared by every open page.
  void SweepView(const httplib::Request& req, httplib::Response& res,
                 const std::function<absl::StatusOr<std::string>()>& body);
  void Events(const httplib::Request& req, httplib::Response& res);
  void Login(const httplib::Request& req, httplib::Response& res);
  void Logout(const httplib::Request& req, httplib::Response& res);
  void Page(const std::string& file, httplib::Response& res);

  const HttpConfig config_;
  core::Coordinator* core_;
  const Authenticator* auth_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> event_streams_{0};
  ReplyCache replies_{Clock::Real()};

  mutable absl::Mutex sessions_mu_;
  absl::flat_hash_map<std::string, Session> sessions_
      ABSL_GUARDED_BY(sessions_mu_);
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_HTTP_SERVICE_H_
