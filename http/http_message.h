// The messages of the dashboard's HTTP front (http/http_server.h):
// a request as a handler sees it (every limit already enforced), a reply,
// and a reply body written over time (ReplyStream, for server-sent events);
// with the decoding and error replies both sides share.
#ifndef QKOV_HTTP_HTTP_MESSAGE_H_
#define QKOV_HTTP_HTTP_MESSAGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

struct MHD_Connection;

namespace qkov::http {

class HttpServer;

struct HttpRequest {
  std::string method;  // GET, HEAD or POST
  std::string path;    // percent-decoded; valid UTF-8 without NUL
  // The query string's parameters in order, percent- and '+'-decoded.
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;  // at most HttpLimits::max_body_bytes
  // The client's address as a throttling key: IPv4 dotted, IPv6 as its /64.
  std::string client;
  bool tls = false;

  // Case-insensitive; "" when absent.
  std::string Header(absl::string_view name) const;
  bool HasParam(absl::string_view name) const;
  std::string Param(absl::string_view name) const;  // the first; "" if none
  // Every value of `name`, each split on ',' (empty parts dropped).
  std::vector<std::string> Params(absl::string_view name) const;
};

// The body of a reply written over time (server-sent events). Thread-safe.
class ReplyStream {
 public:
  // `on_close` runs once, on a libmicrohttpd thread, when the connection
  // that carried the stream is gone (or at once if it never carried one).
  explicit ReplyStream(std::function<void()> on_close)
      : on_close_(std::move(on_close)) {}
  ~ReplyStream();
  // Queues `bytes` for the client. False (nothing queued) once the stream
  // has ended, or when the client has left more than
  // HttpLimits::max_stream_backlog unread (the stream then ends).
  bool Write(absl::string_view bytes);
  // Ends the stream after what is queued is sent.
  void End();
  bool ended() const;
  // When Write last queued bytes.
  absl::Time last_write() const;

 private:
  friend class HttpServer;
  // The connection's reader: copies up to `max` queued bytes, or suspends
  // the connection when there are none.
  int64_t Read(char* buf, size_t max);
  // The connection is gone: later writes are refused; runs on_close_.
  void Closed();
  // The socket of a suspended stream, or -1 (for the hang-up check).
  int SuspendedFd() const;

  mutable absl::Mutex mu_;
  std::string pending_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool suspended_ ABSL_GUARDED_BY(mu_) = false;
  MHD_Connection* connection_ ABSL_GUARDED_BY(mu_) = nullptr;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t max_backlog_ ABSL_GUARDED_BY(mu_) = 1 << 20;
  absl::Time last_write_ ABSL_GUARDED_BY(mu_) = absl::Now();
  std::function<void()> on_close_;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Bytes that outlive the server (a static file) instead of `body`.
  const std::string* static_body = nullptr;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set for server-sent events: the body is what the stream is written.
  std::shared_ptr<ReplyStream> stream;
};

// %HH-decodes `in`, and '+' to a space with `plus_is_space` (query strings
// and form bodies). False for a broken escape, a NUL or bytes that are not
// UTF-8.
bool PercentDecode(absl::string_view in, bool plus_is_space, std::string* out);

// The HTTP status for an absl::Status code (404 for NOT_FOUND, ...).
int HttpStatusFor(absl::StatusCode code);
// {"error": {"code": 404, "status": "NOT_FOUND", "message": "..."}} with
// the message's control characters escaped.
HttpReply ErrorReply(const absl::Status& status, int http = 0);
// 303 See Other to `to`, not to be cached.
HttpReply RedirectReply(const std::string& to);

}  // namespace qkov::http

#endif  // QKOV_HTTP_HTTP_MESSAGE_H_
