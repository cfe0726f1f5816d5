// HttpServer: the HTTP/1.1 front of the dashboard, on GNU libmicrohttpd,
// made to face hostile traffic (docs/security.md, "The dashboard's HTTP
// front"). It owns sockets, limits and threads; what a request means is the
// handler's business (server/service/http_service.h).
//
// Every limit is enforced while reading, before anything is buffered beyond
// it: the request line and headers share one fixed per-connection buffer
// (HttpLimits::header_bytes), bodies are counted as they arrive (chunked or
// not), each request has a deadline from the moment its connection waits
// for it, and connections are capped in total and per client address.
// Handlers never see a request that failed a limit, a Host outside the
// allow-list, a path with NUL or invalid UTF-8, or (with a client CA) a
// client without a certificate that chains to it.
//
// Threads: libmicrohttpd's poll() threads (HttpLimits::io_threads) read and
// write every socket and run the handlers of requests marked cheap (pages,
// login: microseconds); a fixed pool (HttpLimits::handler_threads) runs the
// rest while their connections are suspended, so a slow reply never stalls
// another client's socket. Server-sent events are ReplyStreams: a
// connection with nothing to send is suspended until its stream is written.
//
// Thread safety: Start once; Stop from any thread; ReplyStream is
// thread-safe.
#ifndef QKOV_HTTP_HTTP_SERVER_H_
#define QKOV_HTTP_HTTP_SERVER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "http/http_message.h"

struct MHD_Connection;
struct MHD_Daemon;
struct MHD_OptionItem;
struct sockaddr_storage;

namespace qkov::http {

// Every limit of the front, with the defaults docs/security.md lists
// (qkov-server's --http_* flags set them).
struct HttpLimits {
  int max_connections = 256;             // open connections in total
  int max_connections_per_address = 32;  // per client IP address
  // Request line plus headers: libmicrohttpd's per-connection buffer. A
  // longer request line gets 414, longer headers 431.
  int header_bytes = 32 << 10;
  int max_headers = 100;  // header lines; more gets 431
  // Query arguments (`a=1&b=2` is two); more gets 414. libmicrohttpd keeps
  // one record per argument in the header buffer, so a request whose
  // arguments would not fit in half of it is refused the same way.
  int max_query_args = 64;
  int64_t max_body_bytes = 4 << 10;  // POST bodies (the login form); 413
  // From the moment a connection waits for a request (its opening, or the
  // end of the previous reply) to the end of that request's body; then the
  // connection is closed. Bounds slow senders however they pace bytes.
  absl::Duration request_timeout = absl::Seconds(10);
  // No byte either way for this long closes a connection (idle keep-alive,
  // a reader that stopped reading). Suspended replies are exempt.
  absl::Duration idle_timeout = absl::Seconds(10);
  int io_threads = 2;
  int handler_threads = 8;
  // Requests waiting for a handler thread; past it, 503 at once.
  int handler_queue = 256;
  // Requests of one client address in the pool (running or waiting);
  // past it, 429 at once.
  int pending_per_address = 32;
  // Bytes a stream may hold for a client that does not read them; past it
  // the stream ends.
  int64_t max_stream_backlog = 1 << 20;
};

// Counts one reply with `status` (RepliesByCode); the interposed
// MHD_queue_response calls it for every reply queued.
void CountReply(unsigned int status);

class HttpServer {
 public:
  struct Options {
    std::string listen;  // HOST:PORT; port 0 picks a free one
    HttpLimits limits;
    // Host header names served (without port) besides
    // DefaultAllowedHosts(the listen host) and IP literals. Any other Host
    // gets 403: this is what closes DNS rebinding.
    absl::flat_hash_set<std::string> allowed_hosts;
    // PEM files. Empty cert: plaintext. With client_ca, a client must
    // present a certificate that chains to it, or its connection is closed
    // before any handler runs.
    std::string tls_cert;
    std::string tls_key;
    std::string tls_client_ca;
    // Answers a request; runs on the handler pool, or on an I/O thread when
    // `cheap` says so. Must not block on a ReplyStream.
    std::function<HttpReply(const HttpRequest&)> handler;
    // (may be empty: every request goes to the pool)
    std::function<bool(const HttpRequest&)> cheap;
  };

  // INVALID_ARGUMENT for a bad address or TLS file, UNAVAILABLE when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(Options options);
  ~HttpServer();

  int port() const { return port_; }
  // Ends every stream, answers waiting requests with 503, finishes running
  // handlers, closes every connection. Idempotent.
  void Stop();

  // The names a listener on `host` answers to by default: the loopback
  // names for a loopback address; the host itself, this machine's name and
  // any IP literal for others (an IP literal cannot be rebound).
  static absl::flat_hash_set<std::string> DefaultAllowedHosts(
      const std::string& host);

  // Replies this process queued, of every HttpServer and of libmicrohttpd's
  // own (400, 414, 431, ...): (status code, count) for each code sent at
  // least once, in code order; 0 holds codes past 599.
  static std::vector<std::pair<int, int64_t>> RepliesByCode();

 private:
  struct Call;
  struct Tracked;

  explicit HttpServer(Options options);
  // Start's steps: the daemon's options (addresses, limits, callbacks, and
  // TLS read into the *_pem_ members it points at), then the daemon.
  absl::Status DaemonOptions(const sockaddr_storage& address,
                             std::vector<MHD_OptionItem>* items,
                             unsigned int* flags);
  absl::Status StartDaemon(const sockaddr_storage& address, int port);
  // libmicrohttpd's callbacks (static trampolines in the .cc).
  int OnRequest(MHD_Connection* c, const char* url, const char* method,
                const char* upload, size_t* upload_size, void** con_cls);
  // libmicrohttpd's URI log callback: the request's Call, made before the
  // library parses the query (a query past the limits is cut, see .cc).
  void* OnUri(const char* uri);
  void OnCompleted(MHD_Connection* c, void** con_cls);
  void OnConnection(MHD_Connection* c, void** socket_context, bool opened);
  // The checks of a request's headers; a reply when they fail.
  bool Admit(MHD_Connection* c, const char* url, const char* method, Call& call,
             HttpReply* refusal);
  int Queue(MHD_Connection* c, HttpReply reply);
  // Runs `call` on the pool; false when the queue or the client's share is
  // full.
  bool Dispatch(MHD_Connection* c, Call* call);
  void PoolLoop();
  // Every 100 ms: request deadlines, hung-up streams.
  void MonitorLoop();
  bool HostAllowed(absl::string_view host) const;

  const Options options_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
  std::string tls_cert_pem_, tls_key_pem_, tls_ca_pem_;

  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::deque<std::pair<MHD_Connection*, Call*>> queue_;  // by pool_mu_
  absl::flat_hash_map<std::string, int> pending_;        // by pool_mu_
  bool pool_stopping_ = false;                           // by pool_mu_
  std::vector<std::thread> pool_;

  // Open connections (their sockets and request deadlines) and streams.
  absl::Mutex tracked_mu_;
  absl::flat_hash_map<MHD_Connection*, Tracked*> tracked_
      ABSL_GUARDED_BY(tracked_mu_);
  std::vector<std::weak_ptr<ReplyStream>> streams_ ABSL_GUARDED_BY(tracked_mu_);
  int open_streams_ ABSL_GUARDED_BY(tracked_mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(tracked_mu_) = false;
  std::thread monitor_;
  bool stopped_ = false;
};

}  // namespace qkov::http

#endif  // QKOV_HTTP_HTTP_SERVER_H_
