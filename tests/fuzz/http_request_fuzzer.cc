// Raw bytes to the dashboard, as a hostile client sends them: a real
// HttpService (libmicrohttpd, our routing, Host allow-list, path and query
// decoding, login bodies, sessions, the JSON API) on loopback, over a
// Coordinator with a real SQLite file holding a sweep, with tokens. Each
// input is written to a fresh connection, whose sending side is then
// closed. Properties: no crash, no leak in the server; a whole request (a
// head that ends, no body announced) is answered or closed within 1.5 s,
// never left to the request deadline; an answer is an HTTP/1.1 status
// line, never 500, and carries the security headers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "server/core/coordinator.h"
#include "server/service/auth.h"
#include "server/service/http_service.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/fuzz_sweep.h"

namespace {

constexpr char kTokens[] =
    "admin admin-token-0123456789 root\n"
    "read-only reader-token-0123456789 reader\n"
    "worker worker-token-0123456789 farm\n";

struct Fixture {
  std::unique_ptr<qkov::storage::ResultsStore> store;
  std::unique_ptr<qkov::core::Coordinator> core;
  std::unique_ptr<qkov::service::Authenticator> auth;
  std::unique_ptr<qkov::service::HttpService> http;

  Fixture() {
    store = std::move(
        *qkov::storage::ResultsStore::Open(qkov::fuzz::ScratchDir() + "/h.db"));
    core = std::make_unique<qkov::core::Coordinator>(
        store.get(), qkov::Clock::Real(), qkov::core::CoordinatorOptions());
    qkov::fuzz::SubmitFuzzSweep(core.get(), 1);
    auth = std::move(*qkov::service::Authenticator::Load(
        qkov::fuzz::WriteScratch("tokens", kTokens)));
    qkov::service::HttpConfig config;
    config.listen = "127.0.0.1:0";
    config.static_dir = QKOV_DASHBOARD_DIR;
    // Logins are not throttled here, so the fuzzer reaches what follows one.
    config.failures_per_address = {1 << 30, absl::Milliseconds(1), 100};
    config.logins_per_token = {1 << 30, absl::Milliseconds(1), 100};
    // An unfinished request (the fuzzer closes its side after the input)
    // is cut sooner than the default 10 s, and the server may hold as many
    // of them as a second of fuzzing leaves open.
    config.limits.request_timeout = absl::Seconds(3);
    config.limits.max_connections = 768;
    config.limits.max_connections_per_address = 768;
    auto started =
        qkov::service::HttpService::Start(config, core.get(), auth.get());
    if (!started.ok()) {
      std::fprintf(stderr, "%s\n", started.status().ToString().c_str());
      std::abort();
    }
    http = *std::move(started);
  }
};

// Where the first reply in `r` ends: the head's end plus its Content-Length,
// or the head's end for a reply without one (an event stream); npos while
// the head is incomplete.
size_t FirstReplyEnd(const std::string& r) {
  const size_t head = r.find("\r\n\r\n");
  if (head == std::string::npos) return std::string::npos;
  const std::string key = "\r\nContent-Length: ";
  const size_t at = r.find(key);
  if (at == std::string::npos || at > head) return head + 4;
  return head + 4 + std::strtoull(r.c_str() + at + key.size(), nullptr, 10);
}

// Whether the input's first request is whole: its head ends with a blank
// line and it announces no body (a body may still be on its way).
bool WholeRequest(absl::string_view in) {
  const size_t end = in.find("\r\n\r\n");
  if (end == absl::string_view::npos) return false;
  const std::string head = absl::AsciiStrToLower(in.substr(0, end));
  return head.find("content-length:") == std::string::npos &&
         head.find("transfer-encoding:") == std::string::npos;
}

// connect(), finished when a signal interrupts it (libFuzzer's timer,
// SIGALRM, fires every few seconds): the connection goes on in the
// background, and its outcome is the socket's error once it is writable.
bool Connect(int fd, const sockaddr_in& to) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) == 0)
    return true;
  if (errno != EINTR) return false;
  pollfd p = {fd, POLLOUT, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, 5000);
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) {
    errno = ready == 0 ? ETIMEDOUT : errno;
    return false;
  }
  int error = 0;
  socklen_t len = sizeof(error);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) return false;
  errno = error;
  return error == 0;
}

// Why the last connection could not be made (Exchange's -2).
std::string connect_error;

// Sends the input, closes the sending side, and reads until the first reply
// is whole or the server closes; `*first` is how long the first byte (or
// the close) took. -1: nothing within `wait`; -2: cannot connect.
int Exchange(int port, const uint8_t* data, size_t size, absl::Duration wait,
             std::string* reply, absl::Duration* first) {
  const absl::Time start = absl::Now();
  *first = absl::InfiniteDuration();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  // Each connection from the next of 62,500 loopback addresses
  // (127.1.1.1 up): a connection the server closes first leaves its side
  // in TIME_WAIT for a minute, and tens of thousands of inputs a minute
  // from one address would use up its local ports.
  static uint32_t next = 0;
  const uint32_t n = next++ % 62500;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr =
      htonl((127u << 24) | (1u << 16) | ((n / 250 + 1) << 8) | (n % 250 + 1));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      !Connect(fd, a)) {
    connect_error =
        absl::StrCat("connection ", next, " from 127.1.", n / 250 + 1, ".",
                     n % 250 + 1, ": ", std::strerror(errno));
    ::close(fd);
    return -2;
  }
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server closed early (a refusal): fine
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  // `wait` for the first byte; once the reply has begun, 5 s for the rest.
  absl::Time deadline = absl::Now() + wait;
  char buf[65536];
  int result = 0;
  while (true) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) {
      result = reply->empty() ? -1 : 0;
      break;
    }
    pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (reply->empty()) *first = absl::Now() - start;
    if (n <= 0) break;
    if (reply->empty()) deadline = absl::Now() + absl::Seconds(5);
    reply->append(buf, static_cast<size_t>(n));
    const size_t end = FirstReplyEnd(*reply);
    if (end != std::string::npos && reply->size() >= end) break;
  }
  // Closed with a reset: no TIME_WAIT, so a long run never runs out of
  // local ports.
  const linger reset = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  ::close(fd);
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* f = new Fixture;
  // A whole request is answered (or refused by a close) at once, long
  // before the 3 s request deadline would cut it. An unfinished one may wait
  // for the rest until that deadline: its reply, if any, is read for 20 ms.
  const bool whole = WholeRequest(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  std::string reply;
  absl::Duration first;
  const int r = Exchange(f->http->port(), data, size,
                         whole ? absl::Seconds(5) : absl::Milliseconds(20),
                         &reply, &first);
  QKOV_FUZZ_CHECK(r != -2, "cannot connect to the dashboard: " + connect_error);
  if (whole) {
    QKOV_FUZZ_CHECK(r != -1, "no answer and no close within 5 s");
    QKOV_FUZZ_CHECK(first < absl::Milliseconds(1500),
                    "a whole request waited " + absl::FormatDuration(first));
  }
  if (reply.empty()) return 0;  // closed without a word: allowed
  QKOV_FUZZ_CHECK(reply.rfind("HTTP/1.1 ", 0) == 0 && reply.size() >= 12,
                  reply.substr(0, 64));
  const std::string status = reply.substr(9, 3);
  QKOV_FUZZ_CHECK(status != "500", reply.substr(0, 512));
  const std::string head = reply.substr(0, reply.find("\r\n\r\n"));
  for (const char* h :
       {"\r\nX-Content-Type-Options: nosniff", "\r\nX-Frame-Options: DENY",
        "\r\nReferrer-Policy: same-origin", "\r\nContent-Security-Policy: "})
    QKOV_FUZZ_CHECK(head.find(h) != std::string::npos,
                    std::string(h + 2) + " missing from " + head);
  return 0;
}
