#include "http/http_server.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "http/http_addresses.h"

namespace qkov::http {

namespace {

constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
    "form-action 'self'";

// libmicrohttpd decodes %HH in paths and query arguments by default, which
// would turn %00 into a silent end of string. Keeping the escapes lets
// Admit decode them itself and refuse NUL and invalid UTF-8.
size_t KeepEscapes(void*, MHD_Connection*, char* s) { return std::strlen(s); }

// The security headers of every reply: the dashboard's own (Queue) and the
// ones libmicrohttpd writes itself (the MHD_queue_response below).
void AddSecurityHeaders(MHD_Response* r) {
  static constexpr std::pair<const char*, const char*> kHeaders[] = {
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "same-origin"},
      {"Content-Security-Policy", kContentSecurityPolicy},
  };
  for (const auto& [name, value] : kHeaders)
    if (MHD_get_response_header(r, name) == nullptr)
      MHD_add_response_header(r, name, value);
}

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", TerminalSafe(path)));
  }
  return text.str();
}

// Replies queued, by status code (HttpServer::RepliesByCode).
std::array<std::atomic<int64_t>, 600> reply_counts{};

struct StreamHolder {
  HttpServer* server;
  std::shared_ptr<ReplyStream> stream;
};

}  // namespace

void CountReply(unsigned int status) {
  reply_counts[status < reply_counts.size() ? status : 0].fetch_add(
      1, std::memory_order_relaxed);
}

std::vector<std::pair<int, int64_t>> HttpServer::RepliesByCode() {
  std::vector<std::pair<int, int64_t>> out;
  for (size_t code = 0; code < reply_counts.size(); ++code) {
    const int64_t n = reply_counts[code].load(std::memory_order_relaxed);
    if (n > 0) out.emplace_back(static_cast<int>(code), n);
  }
  return out;
}

struct HttpServer::Call {
  HttpRequest request;
  bool admitted = false;       // Admit ran (the first OnRequest of the request)
  int query_args = 0;          // counted before libmicrohttpd parses them
  bool query_refused = false;  // too many: the query was cut before parsing
  int64_t body_limit = 0;
  bool refused = false;            // a reply was queued before the body ended
  std::optional<HttpReply> reply;  // from a pool thread, queued on resume
};

struct HttpServer::Tracked {
  int fd = -1;
  bool reading = true;  // waiting for a request or reading one
  absl::Time since;     // ... since then
  bool cut = false;     // shut down for its deadline
};

// --- HttpServer ---

HttpServer::HttpServer(Options options) : options_(std::move(options)) {}

absl::flat_hash_set<std::string> HttpServer::DefaultAllowedHosts(
    const std::string& host) {
  absl::flat_hash_set<std::string> names = {"localhost"};
  const std::string h = absl::AsciiStrToLower(host);
  const bool wildcard = h.empty() || h == "0.0.0.0" || h == "::";
  if (!wildcard && !IsIpLiteral(h)) names.insert(h);
  if (wildcard) {
    char name[256] = {0};
    if (gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0') {
      names.insert(absl::AsciiStrToLower(name));
      addrinfo hints{};
      hints.ai_flags = AI_CANONNAME;
      addrinfo* info = nullptr;
      if (getaddrinfo(name, nullptr, &hints, &info) == 0) {
        if (info != nullptr && info->ai_canonname != nullptr)
          names.insert(absl::AsciiStrToLower(info->ai_canonname));
        freeaddrinfo(info);
      }
    }
  }
  return names;
}

bool HttpServer::HostAllowed(absl::string_view host) const {
  const std::string name = HostName(host);
  if (name.empty()) return false;
  // A rebinding page reaches us under its own DNS name; an IP literal
  // cannot be rebound, so every literal is served.
  return IsIpLiteral(name) || options_.allowed_hosts.contains(name);
}

namespace {

// --http_listen's HOST:PORT (an IPv6 host in brackets), resolved to the
// address to bind; `port` 0 picks one.
struct ListenAddress {
  std::string host;
  int port = 0;
  sockaddr_storage address{};
};

absl::StatusOr<ListenAddress> ResolveListen(const std::string& listen) {
  ListenAddress out;
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_listen: '", TerminalSafe(listen), "' is not HOST:PORT"));
  }
  out.host = listen.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* resolved = nullptr;
  const std::string port_text = std::to_string(out.port);
  if (getaddrinfo(out.host.empty() ? nullptr : out.host.c_str(),
                  port_text.c_str(), &hints, &resolved) != 0 ||
      resolved == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_listen: cannot resolve '", TerminalSafe(out.host), "'"));
  }
  std::memcpy(&out.address, resolved->ai_addr, resolved->ai_addrlen);
  freeaddrinfo(resolved);
  return out;
}

absl::Status CheckLimits(const HttpLimits& l) {
  if (l.io_threads < 1 || l.handler_threads < 1 || l.max_connections < 1 ||
      l.max_connections_per_address < 1 || l.header_bytes < 1024 ||
      l.max_headers < 1 || l.max_query_args < 1 || l.max_body_bytes < 0 ||
      l.request_timeout < absl::Seconds(1) ||
      l.idle_timeout < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "dashboard limits: threads, connections and timeouts must be "
        "positive, the header buffer at least 1024 bytes");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(Options options) {
  absl::StatusOr<ListenAddress> listen = ResolveListen(options.listen);
  if (!listen.ok()) return listen.status();
  if (absl::Status s = CheckLimits(options.limits); !s.ok()) return s;
  if (options.tls_cert.empty() != options.tls_key.empty())
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  absl::flat_hash_set<std::string> names = DefaultAllowedHosts(listen->host);
  for (const std::string& name : options.allowed_hosts)
    names.insert(absl::AsciiStrToLower(name));
  options.allowed_hosts = std::move(names);
  std::unique_ptr<HttpServer> s(new HttpServer(std::move(options)));
  if (absl::Status st = s->StartDaemon(listen->address, listen->port); !st.ok())
    return st;
  for (int i = 0; i < s->options_.limits.handler_threads; ++i)
    s->pool_.emplace_back([p = s.get()] { p->PoolLoop(); });
  s->monitor_ = std::thread([p = s.get()] { p->MonitorLoop(); });
  return s;
}

absl::Status HttpServer::DaemonOptions(const sockaddr_storage& address,
                                       std::vector<MHD_OptionItem>* items,
                                       unsigned int* flags) {
  const Options& o = options_;
  const HttpLimits& l = o.limits;
  // poll(), not epoll: libmicrohttpd 0.9.75's epoll loop misses a client's
  // end of input after a request line it cannot parse and holds the
  // connection until the request deadline
  // (HttpAttackTest.UnparsableRequestLinesAreClosedAtOnce). With at most a
  // few hundred connections per thread, poll() costs nothing measurable.
  *flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_SUSPEND_RESUME;
  if (address.ss_family == AF_INET6) *flags |= MHD_USE_IPv6;
  *items = {
      {MHD_OPTION_SOCK_ADDR, 0, const_cast<sockaddr_storage*>(&address)},
      {MHD_OPTION_THREAD_POOL_SIZE, l.io_threads, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, l.max_connections, nullptr},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT, l.max_connections_per_address,
       nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, l.header_bytes, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT,
       static_cast<intptr_t>(absl::ToInt64Seconds(l.idle_timeout)), nullptr},
      {MHD_OPTION_UNESCAPE_CALLBACK, reinterpret_cast<intptr_t>(&KeepEscapes),
       nullptr},
  };
  auto uri_seen = +[](void* cls, const char* uri, MHD_Connection*) -> void* {
    return static_cast<HttpServer*>(cls)->OnUri(uri);
  };
  items->push_back({MHD_OPTION_URI_LOG_CALLBACK,
                    reinterpret_cast<intptr_t>(uri_seen), this});
  auto completed = +[](void* cls, MHD_Connection* c, void** con_cls,
                       MHD_RequestTerminationCode) {
    static_cast<HttpServer*>(cls)->OnCompleted(c, con_cls);
  };
  auto connection = +[](void* cls, MHD_Connection* c, void** socket_context,
                        MHD_ConnectionNotificationCode code) {
    static_cast<HttpServer*>(cls)->OnConnection(
        c, socket_context, code == MHD_CONNECTION_NOTIFY_STARTED);
  };
  items->push_back({MHD_OPTION_NOTIFY_COMPLETED,
                    reinterpret_cast<intptr_t>(completed), this});
  items->push_back({MHD_OPTION_NOTIFY_CONNECTION,
                    reinterpret_cast<intptr_t>(connection), this});
  if (!o.tls_cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPem(o.tls_cert, "--tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem(o.tls_key, "--tls_key");
    if (!key.ok()) return key.status();
    tls_cert_pem_ = *std::move(cert);
    tls_key_pem_ = *std::move(key);
    *flags |= MHD_USE_TLS;
    items->push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, tls_cert_pem_.data()});
    items->push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, tls_key_pem_.data()});
    items->push_back({MHD_OPTION_HTTPS_PRIORITIES, 0,
                      const_cast<char*>("NORMAL:-VERS-ALL:+VERS-TLS1.3:"
                                        "+VERS-TLS1.2")});
    if (!o.tls_client_ca.empty()) {
      absl::StatusOr<std::string> ca =
          ReadPem(o.tls_client_ca, "--tls_client_ca");
      if (!ca.ok()) return ca.status();
      tls_ca_pem_ = *std::move(ca);
      items->push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, tls_ca_pem_.data()});
    }
  }
  items->push_back({MHD_OPTION_END, 0, nullptr});
  return absl::OkStatus();
}

absl::Status HttpServer::StartDaemon(const sockaddr_storage& address,
                                     int port) {
  std::vector<MHD_OptionItem> items;
  unsigned int flags = 0;
  if (absl::Status s = DaemonOptions(address, &items, &flags); !s.ok())
    return s;
  auto on_request = +[](void* cls, MHD_Connection* c, const char* url,
                        const char* method, const char*, const char* upload,
                        size_t* upload_size, void** con_cls) {
    return static_cast<MHD_Result>(static_cast<HttpServer*>(cls)->OnRequest(
        c, url, method, upload, upload_size, con_cls));
  };
  daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, on_request, this,
                             MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
  if (daemon_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "--http_listen: cannot listen on ", TerminalSafe(options_.listen),
        options_.tls_cert.empty() ? ""
                                  : " (or GnuTLS refused --tls_cert/--tls_key/"
                                    "--tls_client_ca)"));
  }
  const MHD_DaemonInfo* info =
      MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  port_ = info == nullptr ? port : info->port;
  return absl::OkStatus();
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (stopped_ || daemon_ == nullptr) return;
  stopped_ = true;
  {
    absl::MutexLock lock(&tracked_mu_);
    stopping_ = true;
  }
  if (monitor_.joinable()) monitor_.join();
  // Requests still waiting for a thread are answered at once; the running
  // ones finish (each resumes its connection).
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    pool_stopping_ = true;
    for (auto& [c, call] : queue_) {
      call->reply = ErrorReply(
          absl::UnavailableError("dashboard: the server is shutting down"));
      MHD_resume_connection(c);
    }
    queue_.clear();
  }
  pool_cv_.notify_all();
  for (std::thread& t : pool_) t.join();
  // Streams end; libmicrohttpd must not stop with a suspended connection.
  std::vector<std::shared_ptr<ReplyStream>> streams;
  {
    absl::MutexLock lock(&tracked_mu_);
    for (const auto& w : streams_)
      if (auto s = w.lock()) streams.push_back(std::move(s));
  }
  for (const auto& s : streams) s->End();
  {
    // Give the ended streams a moment to send their tails.
    absl::MutexLock lock(&tracked_mu_);
    auto closed = [this]() ABSL_SHARED_LOCKS_REQUIRED(tracked_mu_) {
      return open_streams_ == 0;
    };
    tracked_mu_.AwaitWithTimeout(absl::Condition(&closed), absl::Seconds(1));
  }
  MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

void HttpServer::OnConnection(MHD_Connection* c, void** socket_context,
                              bool opened) {
  absl::MutexLock lock(&tracked_mu_);
  if (opened) {
    auto* t = new Tracked;
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    t->fd = info == nullptr ? -1 : info->connect_fd;
    t->since = absl::Now();
    tracked_[c] = t;
    *socket_context = t;
    return;
  }
  // libmicrohttpd tells of a close before it closes the socket, so the
  // monitor never shuts down a descriptor that another connection reuses.
  tracked_.erase(c);
  delete static_cast<Tracked*>(*socket_context);
  *socket_context = nullptr;
}

void* HttpServer::OnUri(const char* uri) {
  auto* call = new Call;
  const char* query = std::strchr(uri, '?');
  if (query == nullptr) return call;
  const size_t length = std::strlen(uri);
  call->query_args =
      1 + static_cast<int>(std::count(query + 1, uri + length, '&'));
  // libmicrohttpd 0.9.75 stores each argument as a record in the
  // connection's buffer; when the buffer runs out it queues a 431 and then
  // goes on waiting for headers, so the client hangs until the request
  // deadline. A query past the limits is cut here, before the library
  // parses it (`uri` is its writable read buffer; it writes there itself
  // next), and Admit answers 414.
  const HttpLimits& l = options_.limits;
  constexpr int64_t kRecordBytes = 64;  // one argument's record, aligned
  if (call->query_args > l.max_query_args ||
      static_cast<int64_t>(length) + kRecordBytes * call->query_args >
          l.header_bytes / 2) {
    call->query_refused = true;
    const_cast<char*>(query)[1] = '\0';
  }
  return call;
}

void HttpServer::OnCompleted(MHD_Connection* c, void** con_cls) {
  delete static_cast<Call*>(*con_cls);
  *con_cls = nullptr;
  absl::MutexLock lock(&tracked_mu_);
  auto it = tracked_.find(c);
  if (it == tracked_.end()) return;
  it->second->reading = true;
  it->second->since = absl::Now();
}

bool HttpServer::Admit(MHD_Connection* c, const char* url, const char* method,
                       Call& call, HttpReply* refusal) {
  HttpRequest& req = call.request;
  req.method = method;
  if (req.method != "GET" && req.method != "HEAD" && req.method != "POST") {
    *refusal =
        ErrorReply(absl::UnimplementedError(absl::StrCat(
                       "dashboard: ", TerminalSafe(req.method.substr(0, 32)),
                       " is not allowed; the dashboard is read-only")),
                   405);
    refusal->headers.emplace_back("Allow", "GET, HEAD, POST");
    return false;
  }
  req.tls = !options_.tls_cert.empty();
  if (req.tls && !options_.tls_client_ca.empty()) {
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    unsigned int verdict = 1;
    if (info == nullptr || info->tls_session == nullptr ||
        gnutls_certificate_verify_peers2(
            static_cast<gnutls_session_t>(info->tls_session), &verdict) != 0 ||
        verdict != 0) {
      refusal->status = 0;  // close without a word, as a refused handshake
      return false;
    }
  }
  auto collect =
      +[](void* cls, MHD_ValueKind, const char* key, const char* value) {
        auto* headers =
            static_cast<std::vector<std::pair<std::string, std::string>>*>(cls);
        headers->emplace_back(key, value == nullptr ? "" : value);
        return MHD_YES;
      };
  MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &req.headers);
  if (static_cast<int>(req.headers.size()) > options_.limits.max_headers) {
    *refusal = ErrorReply(absl::InvalidArgumentError(absl::StrCat(
                              "dashboard: more than ",
                              options_.limits.max_headers, " header lines")),
                          431);
    return false;
  }
  const std::string host = req.Header("Host");
  if (host.empty()) {
    *refusal = ErrorReply(
        absl::InvalidArgumentError("dashboard: the request has no Host"));
    return false;
  }
  if (!HostAllowed(host)) {
    *refusal = ErrorReply(absl::PermissionDeniedError(absl::StrCat(
        "dashboard: Host '", TerminalSafe(host.substr(0, 200)),
        "' is not a name of this server (qkov-server --http_allowed_hosts)")));
    return false;
  }
  if (!PercentDecode(url, /*query=*/false, &req.path)) {
    *refusal = ErrorReply(absl::InvalidArgumentError(
        "dashboard: the path has a NUL, a broken %-escape or bytes that are "
        "not UTF-8"));
    return false;
  }
  if (call.query_refused) {
    *refusal =
        ErrorReply(absl::InvalidArgumentError(absl::StrCat(
                       "dashboard: the query has ", call.query_args,
                       " arguments; at most ", options_.limits.max_query_args,
                       " fit, fewer in a long address")),
                   414);
    return false;
  }
  std::vector<std::pair<std::string, std::string>> raw_query;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &raw_query);
  for (const auto& [k, v] : raw_query) {
    std::string key, value;
    if (!PercentDecode(k, true, &key) || !PercentDecode(v, true, &value)) {
      *refusal = ErrorReply(absl::InvalidArgumentError(
          "dashboard: a query parameter has a NUL, a broken %-escape or "
          "bytes that are not UTF-8"));
      return false;
    }
    req.query.emplace_back(std::move(key), std::move(value));
  }
  const MHD_ConnectionInfo* peer =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  req.client = ClientKey(peer == nullptr ? nullptr : peer->client_addr);
  call.body_limit = req.method == "POST" ? options_.limits.max_body_bytes : 0;
  const std::string length = req.Header("Content-Length");
  int64_t declared = 0;
  if (!length.empty() &&
      (!absl::SimpleAtoi(length, &declared) || declared > call.body_limit)) {
    *refusal =
        ErrorReply(absl::InvalidArgumentError(absl::StrCat(
                       "dashboard: a ", req.method, " body may hold at most ",
                       call.body_limit, " bytes")),
                   413);
    return false;
  }
  return true;
}

int HttpServer::OnRequest(MHD_Connection* c, const char* url,
                          const char* method, const char* upload,
                          size_t* upload_size, void** con_cls) {
  auto* call = static_cast<Call*>(*con_cls);
  if (call == nullptr) {  // OnUri runs first; kept should it ever not
    call = new Call;
    *con_cls = call;
  }
  if (!call->admitted) {
    call->admitted = true;
    HttpReply refusal;
    if (!Admit(c, url, method, *call, &refusal)) {
      if (refusal.status == 0) return MHD_NO;
      call->refused = true;
      return Queue(c, std::move(refusal));
    }
    return MHD_YES;
  }
  if (*upload_size > 0) {
    const size_t n = *upload_size;
    *upload_size = 0;
    if (call->refused) return MHD_YES;
    if (static_cast<int64_t>(call->request.body.size() + n) >
        call->body_limit) {
      // A chunked or unannounced body past the limit: stop reading here.
      call->refused = true;
      return Queue(c, ErrorReply(absl::InvalidArgumentError(absl::StrCat(
                                     "dashboard: a ", call->request.method,
                                     " body may hold at most ",
                                     call->body_limit, " bytes")),
                                 413));
    }
    call->request.body.append(upload, n);
    return MHD_YES;
  }
  if (call->refused) return MHD_YES;
  if (call->reply.has_value()) {
    HttpReply reply = *std::move(call->reply);
    call->reply.reset();
    return Queue(c, std::move(reply));
  }
  {
    // The whole request is in: its deadline no longer applies.
    absl::MutexLock lock(&tracked_mu_);
    auto it = tracked_.find(c);
    if (it != tracked_.end()) it->second->reading = false;
  }
  if (options_.cheap && options_.cheap(call->request))
    return Queue(c, options_.handler(call->request));
  if (!Dispatch(c, call)) {
    // Dispatch set the reply saying why.
    HttpReply reply = *std::move(call->reply);
    call->reply.reset();
    return Queue(c, std::move(reply));
  }
  return MHD_YES;
}

bool HttpServer::Dispatch(MHD_Connection* c, Call* call) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (pool_stopping_) {
    call->reply = ErrorReply(
        absl::UnavailableError("dashboard: the server is shutting down"));
    return false;
  }
  if (static_cast<int>(queue_.size()) >= options_.limits.handler_queue) {
    call->reply = ErrorReply(absl::UnavailableError(absl::StrCat(
        "dashboard: ", queue_.size(), " requests are waiting; retry")));
    call->reply->headers.emplace_back("Retry-After", "1");
    return false;
  }
  int& pending = pending_[call->request.client];
  if (pending >= options_.limits.pending_per_address) {
    call->reply = ErrorReply(absl::ResourceExhaustedError(absl::StrCat(
        "dashboard: this address has ", pending, " requests in progress")));
    call->reply->headers.emplace_back("Retry-After", "1");
    return false;
  }
  ++pending;
  // Suspended before it is queued, so a fast pool thread never resumes a
  // connection that is not suspended yet.
  MHD_suspend_connection(c);
  queue_.emplace_back(c, call);
  pool_cv_.notify_one();
  return true;
}

void HttpServer::PoolLoop() {
  while (true) {
    std::pair<MHD_Connection*, Call*> job;
    {
      std::unique_lock<std::mutex> lock(pool_mu_);
      pool_cv_.wait(lock, [this] { return pool_stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = queue_.front();
      queue_.pop_front();
    }
    HttpReply reply = options_.handler(job.second->request);
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      auto it = pending_.find(job.second->request.client);
      if (it != pending_.end() && --it->second <= 0) pending_.erase(it);
    }
    job.second->reply = std::move(reply);
    MHD_resume_connection(job.first);
  }
}

int HttpServer::Queue(MHD_Connection* c, HttpReply reply) {
  MHD_Response* r = nullptr;
  if (reply.stream != nullptr) {
    int fd = -1;
    {
      absl::MutexLock lock(&tracked_mu_);
      auto it = tracked_.find(c);
      if (it != tracked_.end()) fd = it->second->fd;
      streams_.push_back(reply.stream);
      ++open_streams_;
    }
    {
      absl::MutexLock lock(&reply.stream->mu_);
      reply.stream->connection_ = c;
      reply.stream->fd_ = fd;
      reply.stream->max_backlog_ = options_.limits.max_stream_backlog;
    }
    auto* holder = new StreamHolder{this, reply.stream};
    r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, 4096,
        +[](void* cls, uint64_t, char* buf, size_t max) -> ssize_t {
          return static_cast<StreamHolder*>(cls)->stream->Read(buf, max);
        },
        holder,
        +[](void* cls) {
          auto* h = static_cast<StreamHolder*>(cls);
          h->stream->Closed();
          {
            absl::MutexLock lock(&h->server->tracked_mu_);
            --h->server->open_streams_;
          }
          delete h;
        });
  } else if (reply.static_body != nullptr) {
    r = MHD_create_response_from_buffer(
        reply.static_body->size(), const_cast<char*>(reply.static_body->data()),
        MHD_RESPMEM_PERSISTENT);
  } else {
    auto* body = new std::string(std::move(reply.body));
    r = MHD_create_response_from_buffer_with_free_callback_cls(
        body->size(), body->data(),
        +[](void* cls) { delete static_cast<std::string*>(cls); }, body);
  }
  if (r == nullptr) return MHD_NO;
  AddSecurityHeaders(r);
  MHD_add_response_header(r, "Content-Type", reply.content_type.c_str());
  for (const auto& [k, v] : reply.headers)
    MHD_add_response_header(r, k.c_str(), v.c_str());
  const MHD_Result queued =
      MHD_queue_response(c, static_cast<unsigned int>(reply.status), r);
  MHD_destroy_response(r);
  return queued;
}

void HttpServer::MonitorLoop() {
  const absl::Duration deadline = options_.limits.request_timeout;
  while (true) {
    std::vector<std::shared_ptr<ReplyStream>> hung_up;
    {
      absl::MutexLock lock(&tracked_mu_);
      tracked_mu_.AwaitWithTimeout(absl::Condition(&stopping_),
                                   absl::Milliseconds(100));
      if (stopping_) return;
      const absl::Time now = absl::Now();
      for (auto& [c, t] : tracked_) {
        if (!t->reading || t->cut || t->fd < 0 || now - t->since < deadline)
          continue;
        // libmicrohttpd sees the end of the socket and closes the
        // connection itself.
        ::shutdown(t->fd, SHUT_RDWR);
        t->cut = true;
      }
      for (auto it = streams_.begin(); it != streams_.end();) {
        std::shared_ptr<ReplyStream> s = it->lock();
        if (s == nullptr) {
          it = streams_.erase(it);
          continue;
        }
        ++it;
        // A suspended connection is not polled: look for a hang-up here.
        const int fd = s->SuspendedFd();
        if (fd < 0) continue;
        pollfd p = {fd, POLLRDHUP, 0};
        if (::poll(&p, 1, 0) > 0 &&
            (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0)
          hung_up.push_back(std::move(s));
      }
    }
    for (const auto& s : hung_up) s->End();
  }
}

}  // namespace qkov::http

// libmicrohttpd answers some requests itself, before the dashboard sees them
// (400 for a malformed request line or header, 414, 431, 505), with no way
// to add headers to those replies. It queues them through its own exported
// MHD_queue_response, which it calls through the PLT; defining the symbol
// here puts every reply, its and ours, through AddSecurityHeaders first.
// HttpAttackTest.LibraryRepliesCarrySecurityHeaders fails if a libmicrohttpd
// build stops routing its replies through here.
extern "C" MHD_Result MHD_queue_response(MHD_Connection* connection,
                                         unsigned int status_code,
                                         MHD_Response* response) {
  using QueueFn = MHD_Result (*)(MHD_Connection*, unsigned int, MHD_Response*);
  static const QueueFn library_queue =
      reinterpret_cast<QueueFn>(dlsym(RTLD_NEXT, "MHD_queue_response"));
  if (library_queue == nullptr) return MHD_NO;
  if (response != nullptr) qkov::http::AddSecurityHeaders(response);
  const MHD_Result queued = library_queue(connection, status_code, response);
  if (queued == MHD_YES) qkov::http::CountReply(status_code);
  return queued;
}
