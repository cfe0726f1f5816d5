#include "server/service/http_service.h"

#include <google/protobuf/util/json_util.h>
#include <httplib.h>
#include <openssl/rand.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/text.h"

namespace qkov::service {

namespace v1 = ::qkov::v1;

namespace {

constexpr char kSessionCookie[] = "qkov_session";
constexpr int kMaxSessions = 10000;

int HttpCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

// {"error": {"code": 404, "status": "NOT_FOUND", "message": "..."}}
std::string ErrorJson(int http, const absl::Status& s) {
  const std::string name = absl::StatusCodeToString(s.code());  // NOT_FOUND
  const nlohmann::json body = {{"error",
                                {{"code", http},
                                 {"status", name},
                                 {"message", TerminalSafe(s.message())}}}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void SendError(httplib::Response& res, const absl::Status& s) {
  res.status = HttpCode(s.code());
  res.set_content(ErrorJson(res.status, s), "application/json");
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(m, &out, options);
  if (!st.ok())
    return absl::InternalError(absl::StrCat("JSON: ", st.ToString()));
  return out;
}

template <typename T>
absl::StatusOr<std::string> JsonOf(absl::StatusOr<T> reply) {
  if (!reply.ok()) return reply.status();
  return ToJson(*reply);
}

// An integer query parameter in [lo, hi]; `fallback` when absent.
absl::StatusOr<int64_t> IntParam(const httplib::Request& req, const char* name,
                                 int64_t fallback, int64_t lo, int64_t hi) {
  if (!req.has_param(name)) return fallback;
  int64_t v;
  const std::string text = req.get_param_value(name);
  if (!absl::SimpleAtoi(text, &v) || v < lo || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": '", TerminalSafe(text.substr(0, 64)),
                     "' is not an integer in [", lo, ", ", hi, "]"));
  }
  return v;
}

std::vector<std::string> Params(const httplib::Request& req, const char* name) {
  std::vector<std::string> out;
  const size_t n = req.get_param_value_count(name);
  for (size_t i = 0; i < n; ++i) {
    for (absl::string_view part :
         absl::StrSplit(req.get_param_value(name, i), ',', absl::SkipEmpty()))
      out.emplace_back(part);
  }
  return out;
}

// The value of cookie `name` in a Cookie header, "" when absent.
std::string CookieValue(const std::string& header, absl::string_view name) {
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, name) && absl::ConsumePrefix(&part, "="))
      return std::string(part);
  }
  return "";
}

std::string NewSessionId() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return "";
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

void SecurityHeaders(httplib::Response& res) {
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; "
                 "frame-ancestors 'none'; form-action 'self'");
}

absl::StatusOr<std::pair<std::string, int>> SplitHostPort(
    const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_listen: '", TerminalSafe(listen), "' is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::make_pair(host, port);
}

}  // namespace

HttpService::HttpService(const HttpConfig& config, core::Coordinator* core,
                         const Authenticator* auth)
    : config_(config), core_(core), auth_(auth) {}

absl::StatusOr<std::unique_ptr<HttpService>> HttpService::Start(
    const HttpConfig& config, core::Coordinator* core,
    const Authenticator* auth) {
  ASSIGN_OR_RETURN(auto host_port, SplitHostPort(config.listen));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(
          std::filesystem::path(config.static_dir) / "index.html", ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_static_dir: ", TerminalSafe(config.static_dir),
                     " holds no index.html (the dashboard's files)"));
  }
  std::unique_ptr<HttpService> s(new HttpService(config, core, auth));
  if (config.tls_cert.empty() != config.tls_key.empty())
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  if (config.tls_cert.empty()) {
    s->server_ = std::make_unique<httplib::Server>();
  } else {
    auto ssl = std::make_unique<httplib::SSLServer>(
        config.tls_cert.c_str(), config.tls_key.c_str(),
        config.tls_client_ca.empty() ? nullptr : config.tls_client_ca.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(
          "--http_listen: OpenSSL refused --tls_cert/--tls_key/"
          "--tls_client_ca for the dashboard");
    }
    s->server_ = std::move(ssl);
  }
  const int threads = config.threads;
  s->server_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  s->server_->set_payload_max_length(64 << 10);
  s->Routes();
  const auto& [host, port] = host_port;
  if (port == 0) {
    s->port_ = s->server_->bind_to_any_port(host.c_str());
  } else if (s->server_->bind_to_port(host.c_str(), port)) {
    s->port_ = port;
  }
  if (s->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "--http_listen: cannot listen on ", TerminalSafe(config.listen)));
  }
  httplib::Server* server = s->server_.get();
  s->listener_ = std::thread([server] { server->listen_after_bind(); });
  return s;
}

HttpService::~HttpService() { Stop(); }

void HttpService::Stop() {
  if (stopping_.exchange(true)) return;
  if (server_ != nullptr) server_->stop();
  if (listener_.joinable()) listener_.join();
}

absl::Status HttpService::Authorize(const httplib::Request& req) const {
  if (auth_ == nullptr) return absl::OkStatus();
  const std::string value = req.get_header_value("Authorization");
  absl::string_view header = value;
  if (!header.empty()) {
    if (!absl::ConsumePrefix(&header, "Bearer "))
      return absl::UnauthenticatedError(
          "dashboard: Authorization header is not 'Bearer TOKEN'");
    return auth_->CheckToken(header, Permission::kRead, "dashboard");
  }
  const std::string id =
      CookieValue(req.get_header_value("Cookie"), kSessionCookie);
  if (id.empty()) {
    return absl::UnauthenticatedError(
        "dashboard: log in at /login or send 'Authorization: Bearer TOKEN'");
  }
  std::string token;
  {
    absl::MutexLock lock(&sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.expires < absl::Now())
      return absl::UnauthenticatedError(
          "dashboard: the session has expired; log in again at /login");
    token = it->second.token;
  }
  return auth_->CheckToken(token, Permission::kRead, "dashboard");
}

void HttpService::Api(
    const httplib::Request& req, httplib::Response& res,
    const std::function<absl::StatusOr<std::string>()>& body) {
  SecurityHeaders(res);
  res.set_header("Cache-Control", "no-store");
  if (absl::Status a = Authorize(req); !a.ok()) return SendError(res, a);
  absl::StatusOr<std::string> json = body();
  if (!json.ok()) return SendError(res, json.status());
  res.set_content(*json, "application/json");
}

void HttpService::SweepView(
    const httplib::Request& req, httplib::Response& res,
    const std::function<absl::StatusOr<std::string>()>& body) {
  // params is ordered by name; lengths keep "a=b&c" and "a=b" "c" apart.
  std::string key = req.path;
  for (const auto& [k, v] : req.params)
    absl::StrAppend(&key, "\n", k.size(), ":", k, v.size(), ":", v);
  std::optional<ReplyCache::Reply> reply;
  Api(req, res, [&]() -> absl::StatusOr<std::string> {
    ASSIGN_OR_RETURN(reply, replies_.Get(key, body));
    return std::move(reply->body);
  });
  if (!reply.has_value()) return;
  res.set_header("Age", absl::StrCat(absl::ToInt64Seconds(reply->age)));
  // A kept reply may predate the change that made the page ask: say when
  // the server computes it again (docs/dashboard.md).
  if (reply->age > absl::ZeroDuration()) {
    res.set_header("X-Qkov-Recompute-In-Ms",
                   absl::StrCat(absl::ToInt64Milliseconds(reply->expires)));
  }
}

void HttpService::Page(const std::string& file, httplib::Response& res) {
  std::ifstream in(std::filesystem::path(config_.static_dir) / file,
                   std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    return SendError(res, absl::InternalError(absl::StrCat(
                              "dashboard: ", file, " is missing from ",
                              config_.static_dir)));
  }
  SecurityHeaders(res);
  res.set_header("Cache-Control", "no-cache");
  res.set_content(text.str(), "text/html; charset=utf-8");
}

void HttpService::Login(const httplib::Request& req, httplib::Response& res) {
  SecurityHeaders(res);
  res.set_header("Cache-Control", "no-store");
  if (auth_ == nullptr) {
    res.status = 303;
    res.set_header("Location", "/");
    return;
  }
  const std::string token = req.get_param_value("token");
  absl::Status ok = auth_->CheckToken(token, Permission::kRead, "login");
  const std::string id = ok.ok() ? NewSessionId() : "";
  if (!ok.ok() || id.empty()) {
    res.status = 303;
    res.set_header("Location", ok.code() == absl::StatusCode::kPermissionDenied
                                   ? "/login?failed=role"
                                   : "/login?failed=token");
    return;
  }
  {
    absl::MutexLock lock(&sessions_mu_);
    const absl::Time now = absl::Now();
    if (sessions_.size() >= kMaxSessions) {
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        auto here = it++;
        if (here->second.expires < now) sessions_.erase(here);
      }
      if (sessions_.size() >= kMaxSessions) sessions_.clear();
    }
    sessions_[id] = Session{token, now + config_.session_lifetime};
  }
  res.status = 303;
  res.set_header("Location", "/");
  res.set_header("Set-Cookie",
                 absl::StrCat(kSessionCookie, "=", id,
                              "; Path=/; HttpOnly; SameSite=Strict; Max-Age=",
                              absl::ToInt64Seconds(config_.session_lifetime),
                              config_.tls_cert.empty() ? "" : "; Secure"));
}

void HttpService::Logout(const httplib::Request& req, httplib::Response& res) {
  SecurityHeaders(res);
  const std::string id =
      CookieValue(req.get_header_value("Cookie"), kSessionCookie);
  if (!id.empty()) {
    absl::MutexLock lock(&sessions_mu_);
    sessions_.erase(id);
  }
  res.status = 303;
  res.set_header("Location", "/login");
  res.set_header(
      "Set-Cookie",
      absl::StrCat(kSessionCookie,
                   "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"));
}

// One event per change (coalesced over 200 ms, or 200 times the CPU the last
// event took when that is longer), a comment every 15 s to keep
// proxies from closing an idle stream. `event: sweeps` carries the sweep
// list; with ?sweep=NAME, `event: progress` carries that sweep and the trials
// that changed since the last event (id, state, last step; the
// Coordinator::kBriefProgressTrials most recently changed, newest first).
void HttpService::Events(const httplib::Request& req, httplib::Response& res) {
  SecurityHeaders(res);
  res.set_header("Cache-Control", "no-store");
  if (absl::Status a = Authorize(req); !a.ok()) return SendError(res, a);
  const std::string sweep = req.get_param_value("sweep");
  if (!sweep.empty()) {
    if (absl::Status s = core_->GetSweep(sweep).status(); !s.ok())
      return SendError(res, s);
  }
  if (event_streams_.fetch_add(1) >= config_.max_event_streams) {
    event_streams_.fetch_sub(1);
    return SendError(res, absl::ResourceExhaustedError(absl::StrCat(
                              "events: ", config_.max_event_streams,
                              " streams are open; close a dashboard tab")));
  }
  struct Stream {
    absl::Time since = absl::Now();
    bool first = true;
    absl::Duration cost;  // CPU of the last event
  };
  auto stream = std::make_shared<Stream>();
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, sweep, stream](size_t, httplib::DataSink& sink) {
        if (stopping_) return false;
        if (!stream->first) {
          // Wait for a change in 1 s slices, so Stop() is never held up.
          bool changed = false;
          for (int i = 0; i < 15 && !changed && !stopping_; ++i)
            changed = core_->WaitForChange(absl::Now() + absl::Seconds(1));
          if (stopping_) return false;
          if (!changed) {
            static constexpr char kPing[] = ": ping\n\n";
            return sink.write(kPing, sizeof(kPing) - 1);
          }
          // Coalesce: 200 ms, or longer after a costly event, so that a
          // stream costs at most what a shared view does (ReplyCache); in
          // 200 ms slices, so Stop() is never held up.
          const absl::Time next =
              absl::Now() + std::max(absl::Milliseconds(200),
                                     ReplyCache::ReuseFor(stream->cost));
          while (!stopping_ && absl::Now() < next)
            absl::SleepFor(
                std::min(absl::Milliseconds(200), next - absl::Now()));
          if (stopping_) return false;
        }
        stream->first = false;
        const absl::Duration cpu0 = ThreadCpuTime();
        std::string event;
        if (sweep.empty()) {
          absl::StatusOr<std::string> json = JsonOf(core_->ListSweeps());
          if (!json.ok()) return false;
          event = absl::StrCat("event: sweeps\ndata: ", *json, "\n\n");
        } else {
          absl::Time since = stream->since;
          absl::StatusOr<v1::SweepProgress> p =
              core_->Progress(sweep, &since, /*brief=*/true);
          if (!p.ok()) return false;
          stream->since = since;
          absl::StatusOr<std::string> json = ToJson(*p);
          if (!json.ok()) return false;
          event = absl::StrCat("event: progress\ndata: ", *json, "\n\n");
        }
        stream->cost = ThreadCpuTime() - cpu0;
        return sink.write(event.data(), event.size());
      },
      [this](bool) { event_streams_.fetch_sub(1); });
}

void HttpService::Routes() {
  httplib::Server& s = *server_;
  s.set_mount_point("/static", config_.static_dir);
  s.set_file_request_handler(
      [](const httplib::Request&, httplib::Response& res) {
        SecurityHeaders(res);
        res.set_header("Cache-Control", "no-cache");
      });
  s.Get("/", [this](const httplib::Request&, httplib::Response& res) {
    Page("index.html", res);
  });
  s.Get(R"(/(sweeps|trials)/[^/]+)",
        [this](const httplib::Request&, httplib::Response& res) {
          Page("index.html", res);
        });
  s.Get("/login", [this](const httplib::Request&, httplib::Response& res) {
    Page("login.html", res);
  });
  s.Post("/login", [this](const httplib::Request& req, httplib::Response& res) {
    Login(req, res);
  });
  s.Post("/logout", [this](const httplib::Request& req,
                           httplib::Response& res) { Logout(req, res); });

  s.Get("/api/v1/sweeps",
        [this](const httplib::Request& req, httplib::Response& res) {
          Api(req, res, [&] { return JsonOf(core_->ListSweeps()); });
        });
  s.Get(R"(/api/v1/sweeps/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          Api(req, res,
              [&] { return JsonOf(core_->GetSweep(req.matches[1].str())); });
        });
  s.Get(R"(/api/v1/sweeps/([^/]+)/results)", [this](const httplib::Request& req,
                                                    httplib::Response& res) {
    SweepView(req, res, [&]() -> absl::StatusOr<std::string> {
      v1::QueryResultsRequest q;
      q.set_sweep_name(req.matches[1].str());
      for (const auto& m : Params(req, "metric")) q.add_metrics(m);
      for (const auto& w : Params(req, "where")) q.add_where(w);
      q.set_sort_by(req.get_param_value("sort"));
      q.set_descending(req.get_param_value("order") == "desc");
      ASSIGN_OR_RETURN(int64_t offset,
                       IntParam(req, "offset", 0, 0, int64_t{1} << 40));
      ASSIGN_OR_RETURN(int64_t limit, IntParam(req, "limit", 100, 1, 1000));
      q.set_offset(offset);
      q.set_limit(limit);
      return JsonOf(core_->QueryResults(q));
    });
  });
  s.Get(R"(/api/v1/sweeps/([^/]+)/export\.(json|csv))",
        [this](const httplib::Request& req, httplib::Response& res) {
          const bool csv = req.matches[2] == "csv";
          Api(req, res, [&]() -> absl::StatusOr<std::string> {
            v1::QueryResultsRequest q;
            q.set_sweep_name(req.matches[1].str());
            ASSIGN_OR_RETURN(v1::QueryResultsResponse rows,
                             core_->QueryResults(q));
            if (!csv) return ToJson(rows);
            std::set<std::string> metrics;
            for (const auto& r : rows.rows())
              for (const auto& [k, v] : r.values()) metrics.insert(k);
            std::string out =
                "trial,parameterization,lr_ratio,eta_ov,seed,state";
            for (const auto& m : metrics) absl::StrAppend(&out, ",", m);
            out += "\n";
            for (const auto& r : rows.rows()) {
              absl::StrAppend(
                  &out, r.trial_id(), ",",
                  v1::Parameterization_Name(r.config().parameterization()), ",",
                  r.config().lr_ratio(), ",", r.config().eta_ov(), ",",
                  r.config().seed(), ",", v1::TrialState_Name(r.state()));
              for (const auto& m : metrics) {
                auto it = r.values().find(m);
                out += ",";
                if (it != r.values().end()) absl::StrAppend(&out, it->second);
              }
              out += "\n";
            }
            return out;
          });
          if (res.status == 200 || res.status == -1) {
            res.set_header(
                "Content-Disposition",
                absl::StrCat("attachment; filename=\"",
                             csv ? "results.csv" : "results.json", "\""));
            if (csv) {
              std::string body = std::move(res.body);
              res.set_content(body, "text/csv");
            }
          }
        });
  s.Get(R"(/api/v1/sweeps/([^/]+)/aggregate)",
        [this](const httplib::Request& req, httplib::Response& res) {
          SweepView(req, res, [&] {
            v1::AggregateResultsRequest q;
            q.set_sweep_name(req.matches[1].str());
            for (const auto& b : Params(req, "by")) q.add_by(b);
            for (const auto& m : Params(req, "metric")) q.add_metrics(m);
            for (const auto& w : Params(req, "where")) q.add_where(w);
            return JsonOf(core_->AggregateResults(q));
          });
        });
  s.Get(R"(/api/v1/sweeps/([^/]+)/curves)",
        [this](const httplib::Request& req, httplib::Response& res) {
          SweepView(req, res, [&]() -> absl::StatusOr<std::string> {
            v1::SweepCurvesRequest q;
            q.set_sweep_name(req.matches[1].str());
            q.set_metric(req.get_param_value("metric"));
            ASSIGN_OR_RETURN(int64_t offset,
                             IntParam(req, "offset", 0, 0, int64_t{1} << 40));
            ASSIGN_OR_RETURN(int64_t limit, IntParam(req, "limit", 50, 1, 500));
            ASSIGN_OR_RETURN(int64_t points,
                             IntParam(req, "max_points", 200, 2, 10000));
            q.set_offset(offset);
            q.set_limit(limit);
            q.set_max_points(static_cast<int32_t>(points));
            return JsonOf(core_->SweepCurves(q));
          });
        });
  s.Get(R"(/api/v1/sweeps/([^/]+)/heatmaps)",
        [this](const httplib::Request& req, httplib::Response& res) {
          SweepView(req, res, [&]() -> absl::StatusOr<std::string> {
            v1::SweepHeatmapsRequest q;
            q.set_sweep_name(req.matches[1].str());
            q.set_name(req.get_param_value("name"));
            ASSIGN_OR_RETURN(int64_t per_group,
                             IntParam(req, "per_group", 50, 1, 1000));
            q.set_per_group(static_cast<int32_t>(per_group));
            return JsonOf(core_->SweepHeatmaps(q));
          });
        });
  s.Get(R"(/api/v1/trials/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          Api(req, res,
              [&] { return JsonOf(core_->GetTrial(req.matches[1].str())); });
        });
  s.Get(R"(/api/v1/trials/([^/]+)/metrics)",
        [this](const httplib::Request& req, httplib::Response& res) {
          Api(req, res, [&] {
            v1::GetTrialMetricsRequest q;
            q.set_trial_id(req.matches[1].str());
            for (const auto& n : Params(req, "name")) q.add_names(n);
            return JsonOf(core_->GetTrialMetrics(q));
          });
        });
  s.Get("/api/v1/events", [this](const httplib::Request& req,
                                 httplib::Response& res) { Events(req, res); });

  // Everything else: a JSON 404 (or 405 for a known path with another
  // method), never an empty page.
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    SecurityHeaders(res);
    const absl::Status st =
        res.status == 404
            ? absl::NotFoundError(absl::StrCat(
                  "no such page: ", TerminalSafe(req.path.substr(0, 200))))
            : absl::Status(res.status == 400
                               ? absl::StatusCode::kInvalidArgument
                               : absl::StatusCode::kUnknown,
                           absl::StrCat("HTTP ", res.status));
    res.set_content(ErrorJson(res.status, st), "application/json");
  });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SendError(res, absl::InternalError("dashboard: internal error"));
      });
  s.set_pre_routing_handler([](const httplib::Request& req,
                               httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD" ||
        (req.method == "POST" &&
         (req.path == "/login" || req.path == "/logout")))
      return httplib::Server::HandlerResponse::Unhandled;
    SecurityHeaders(res);
    res.status = 405;
    res.set_header("Allow", "GET");
    res.set_content(
        ErrorJson(405, absl::Status(
                           absl::StatusCode::kUnimplemented,
                           absl::StrCat("dashboard: ", TerminalSafe(req.method),
                                        " is not allowed; the "
                                        "dashboard is read-only"))),
        "application/json");
    return httplib::Server::HandlerResponse::Handled;
  });
}

}  // namespace qkov::service
