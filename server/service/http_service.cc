#include "server/service/http_service.h"

#include <google/protobuf/util/json_util.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/matched_sweep.h"
#include "common/sha256.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "server/service/http_json.h"

namespace qkov::service {

namespace v1 = ::qkov::v1;

namespace {

// Every file the static root may hold, in all.
constexpr size_t kMaxStaticBytes = 16 << 20;

absl::StatusOr<int64_t> IntParam(const http::HttpRequest& req, const char* name,
                                 int64_t fallback, int64_t lo, int64_t hi) {
  if (!req.HasParam(name)) return fallback;
  int64_t v;
  const std::string text = req.Param(name);
  if (!absl::SimpleAtoi(text, &v) || v < lo || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": '", TerminalSafe(text.substr(0, 64)),
                     "' is not an integer in [", lo, ", ", hi, "]"));
  }
  return v;
}

std::string ContentType(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".json") return "application/json";
  return "application/octet-stream";
}

}  // namespace

HttpService::HttpService(const HttpConfig& config, core::Coordinator* core,
                         const Authenticator* auth)
    : config_(config),
      core_(core),
      auth_(auth),
      failures_(config.failures_per_address, Clock::Real()),
      logins_(config.logins_per_token, Clock::Real()) {}

absl::StatusOr<std::unique_ptr<HttpService>> HttpService::Start(
    const HttpConfig& config, core::Coordinator* core,
    const Authenticator* auth) {
  std::unique_ptr<HttpService> s(new HttpService(config, core, auth));
  // The static root is read once: requests name files in this table and
  // never reach the file system.
  std::error_code ec;
  size_t total = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(config.static_dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    total += bytes.str().size();
    if (!in || total > kMaxStaticBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http_static_dir: cannot read ",
                       TerminalSafe(entry.path().string()),
                       " (or the files pass ", kMaxStaticBytes, " bytes)"));
    }
    s->files_[entry.path().filename().string()] =
        StaticFile{bytes.str(), ContentType(entry.path())};
  }
  if (ec || !s->files_.contains("index.html") ||
      !s->files_.contains("login.html")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_static_dir: ", TerminalSafe(config.static_dir),
                     " holds no index.html (the dashboard's files)"));
  }
  if (config.sessions_per_token < 1 || config.event_streams_per_token < 1 ||
      config.max_event_streams < 1 ||
      config.session_lifetime < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "dashboard: session and event-stream caps and the session lifetime "
        "must be positive");
  }

  http::HttpServer::Options o;
  o.listen = config.listen;
  o.limits = config.limits;
  o.tls_cert = config.tls_cert;
  o.tls_key = config.tls_key;
  o.tls_client_ca = config.tls_client_ca;
  o.allowed_hosts.insert(config.allowed_hosts.begin(),
                         config.allowed_hosts.end());
  HttpService* self = s.get();
  o.handler = [self](const http::HttpRequest& req) {
    return self->Handle(req);
  };
  // Everything but the API answers in microseconds from memory.
  o.cheap = [](const http::HttpRequest& req) {
    return !absl::StartsWith(req.path, "/api/");
  };
  ASSIGN_OR_RETURN(s->server_, http::HttpServer::Start(std::move(o)));
  s->events_thread_ = std::thread([self] { self->EventsLoop(); });
  return s;
}

HttpService::~HttpService() { Stop(); }

void HttpService::Stop() {
  if (stopping_.exchange(true)) return;
  if (events_thread_.joinable()) events_thread_.join();
  if (server_ != nullptr) server_->Stop();
}

http::HttpReply HttpService::Api(
    const http::HttpRequest& req,
    const std::function<absl::StatusOr<std::string>()>& body) {
  if (absl::Status a = Authorize(req).status(); !a.ok())
    return http::ErrorReply(a);
  absl::StatusOr<std::string> json = body();
  if (!json.ok()) return http::ErrorReply(json.status());
  http::HttpReply reply;
  reply.body = *std::move(json);
  reply.headers.emplace_back("Cache-Control", "no-store");
  return reply;
}

http::HttpReply HttpService::SweepView(
    const http::HttpRequest& req,
    const std::function<absl::StatusOr<std::string>()>& body) {
  // Parameters sorted by name; lengths keep "a=b&c" and "a=b" "c" apart.
  std::vector<std::pair<std::string, std::string>> params = req.query;
  std::stable_sort(
      params.begin(), params.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string key = req.path;
  for (const auto& [k, v] : params)
    absl::StrAppend(&key, "\n", k.size(), ":", k, v.size(), ":", v);
  std::optional<ReplyCache::Reply> kept;
  http::HttpReply reply = Api(req, [&]() -> absl::StatusOr<std::string> {
    ASSIGN_OR_RETURN(kept, replies_.Get(key, body));
    return std::move(kept->body);
  });
  if (!kept.has_value()) return reply;
  reply.headers.emplace_back("Age",
                             absl::StrCat(absl::ToInt64Seconds(kept->age)));
  // A kept reply may predate the change that made the page ask: say when
  // the server computes it again (docs/dashboard.md).
  if (kept->age > absl::ZeroDuration()) {
    reply.headers.emplace_back(
        "X-Qkov-Recompute-In-Ms",
        absl::StrCat(absl::ToInt64Milliseconds(kept->expires)));
  }
  return reply;
}

http::HttpReply HttpService::File(const std::string& name,
                                  const char* cache_control) {
  auto it = files_.find(name);
  if (it == files_.end()) {
    return http::ErrorReply(absl::NotFoundError(absl::StrCat(
        "no such page: /static/", TerminalSafe(name.substr(0, 200)))));
  }
  http::HttpReply reply;
  reply.static_body = &it->second.bytes;
  reply.content_type = it->second.content_type;
  reply.headers.emplace_back("Cache-Control", cache_control);
  return reply;
}

http::HttpReply HttpService::Export(const http::HttpRequest& req,
                                    const std::string& sweep, bool csv) {
  // Spreadsheet formulas in text cells are neutralised unless ?raw=1.
  const bool raw = req.Param("raw") == "1";
  http::HttpReply reply = Api(req, [&]() -> absl::StatusOr<std::string> {
    v1::QueryResultsRequest q;
    q.set_sweep_name(sweep);
    ASSIGN_OR_RETURN(v1::QueryResultsResponse rows,
                     core_->results().QueryResults(q));
    if (!csv) return ToJson(rows);
    std::set<std::string> metrics;
    for (const auto& r : rows.rows())
      for (const auto& [k, v] : r.values()) metrics.insert(k);
    std::string out = "trial,parameterization,lr_ratio,eta_ov,seed,state";
    for (const auto& m : metrics) absl::StrAppend(&out, ",", CsvField(m, !raw));
    out += "\n";
    for (const auto& r : rows.rows()) {
      absl::StrAppend(&out, CsvField(r.trial_id(), !raw), ",",
                      v1::Parameterization_Name(r.config().parameterization()),
                      ",", r.config().lr_ratio(), ",", r.config().eta_ov(), ",",
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
  if (reply.status != 200) return reply;
  reply.headers.emplace_back(
      "Content-Disposition",
      absl::StrCat("attachment; filename=\"",
                   csv ? "results.csv" : "results.json", "\""));
  if (csv) reply.content_type = "text/csv";
  return reply;
}

absl::StatusOr<std::string> HttpService::Matched(const http::HttpRequest& req,
                                                 const std::string& sweep) {
  SweepMatchedArgs args;
  args.sweep = sweep;
  args.spec = req.Param("curve");
  if (args.spec.empty()) {
    return absl::InvalidArgumentError(
        "matched: curve (the reference curve, e.g. train_loss) is required");
  }
  std::vector<std::string> levels = req.Params("level");
  if (!levels.empty())
    absl::StrAppend(&args.spec, "=", absl::StrJoin(levels, ","));
  ASSIGN_OR_RETURN(int64_t window, IntParam(req, "window", 1, 1, 10000));
  args.window = static_cast<int>(window);
  ASSIGN_OR_RETURN(int64_t num_levels, IntParam(req, "num_levels", 5, 1, 50));
  args.default_levels = static_cast<int>(num_levels);
  args.metrics = req.Params("metric");
  if (args.metrics.empty()) {
    return absl::InvalidArgumentError(
        "matched: at least one metric is required");
  }
  for (const auto& b : req.Params("by")) {
    for (absl::string_view key : absl::StrSplit(b, ',', absl::SkipEmpty()))
      args.by.emplace_back(key);
  }
  args.where = req.Params("where");
  args.max_trials = config_.matched_max_trials;
  SweepSource source;
  source.query = [this](const v1::QueryResultsRequest& q) {
    return core_->results().QueryResults(q);
  };
  source.curves = [this](const v1::GetTrialMetricsRequest& q) {
    return core_->results().GetTrialMetrics(q);
  };
  absl::StatusOr<MatchedTable> matched = MatchSweep(args, source);
  if (!matched.ok()) {
    // MatchSweep names the CLI's flags; here they are query parameters.
    std::string message(matched.status().message());
    for (const auto& [flag, param] :
         {std::pair<const char*, const char*>{"--matched: ", "matched: "},
          {"--window: ", "window: "},
          {"--by: ", "by: "},
          {" matching --where", " matching where="}}) {
      message = absl::StrReplaceAll(message, {{flag, param}});
    }
    return absl::Status(matched.status().code(), message);
  }
  const v1::MatchedResponse out = MatchedToProto(*matched);
  return ToJson(out);
}

http::HttpReply HttpService::Handle(const http::HttpRequest& req) {
  if (req.method != "POST") return Get(req);
  if (req.path == "/login") return Login(req);
  if (req.path == "/logout") return Logout(req);
  http::HttpReply r = http::ErrorReply(
      absl::UnimplementedError(
          "dashboard: POST is not allowed; the dashboard is read-only"),
      405);
  r.headers.emplace_back("Allow", "GET, HEAD");
  return r;
}

// /api/v1/sweeps/NAME/VIEW; nullopt for a view there is none of.
std::optional<http::HttpReply> HttpService::SweepSubview(
    const http::HttpRequest& req, const std::string& name,
    const std::string& view) {
  if (view == "results") {
    return SweepView(req, [&]() -> absl::StatusOr<std::string> {
      v1::QueryResultsRequest q;
      q.set_sweep_name(name);
      for (const auto& m : req.Params("metric")) q.add_metrics(m);
      for (const auto& w : req.Params("where")) q.add_where(w);
      q.set_sort_by(req.Param("sort"));
      q.set_descending(req.Param("order") == "desc");
      ASSIGN_OR_RETURN(int64_t offset,
                       IntParam(req, "offset", 0, 0, int64_t{1} << 40));
      ASSIGN_OR_RETURN(int64_t limit, IntParam(req, "limit", 100, 1, 1000));
      q.set_offset(offset);
      q.set_limit(limit);
      return JsonOf(core_->results().QueryResults(q));
    });
  }
  if (view == "export.csv" || view == "export.json")
    return Export(req, name, view == "export.csv");
  if (view == "aggregate") {
    return SweepView(req, [&] {
      v1::AggregateResultsRequest q;
      q.set_sweep_name(name);
      for (const auto& b : req.Params("by")) q.add_by(b);
      for (const auto& m : req.Params("metric")) q.add_metrics(m);
      for (const auto& w : req.Params("where")) q.add_where(w);
      return JsonOf(core_->results().AggregateResults(q));
    });
  }
  if (view == "curves") {
    return SweepView(req, [&]() -> absl::StatusOr<std::string> {
      v1::SweepCurvesRequest q;
      q.set_sweep_name(name);
      q.set_metric(req.Param("metric"));
      ASSIGN_OR_RETURN(int64_t offset,
                       IntParam(req, "offset", 0, 0, int64_t{1} << 40));
      ASSIGN_OR_RETURN(int64_t limit, IntParam(req, "limit", 50, 1, 500));
      ASSIGN_OR_RETURN(int64_t points,
                       IntParam(req, "max_points", 200, 2, 10000));
      q.set_offset(offset);
      q.set_limit(limit);
      q.set_max_points(static_cast<int32_t>(points));
      return JsonOf(core_->results().SweepCurves(q));
    });
  }
  if (view == "heatmaps") {
    return SweepView(req, [&]() -> absl::StatusOr<std::string> {
      v1::SweepHeatmapsRequest q;
      q.set_sweep_name(name);
      q.set_name(req.Param("name"));
      ASSIGN_OR_RETURN(int64_t per_group,
                       IntParam(req, "per_group", 50, 1, 1000));
      q.set_per_group(static_cast<int32_t>(per_group));
      return JsonOf(core_->results().SweepHeatmaps(q));
    });
  }
  if (view == "matched")
    return SweepView(req, [&] { return Matched(req, name); });
  return std::nullopt;
}

http::HttpReply HttpService::Get(const http::HttpRequest& req) {
  const std::string& path = req.path;
  std::vector<std::string> parts = absl::StrSplit(path, '/');
  // "/a/b" splits into "", "a", "b"; an empty segment is never a name.
  const bool named = parts.size() >= 3 && !parts[2].empty();
  auto not_found = [&] {
    return http::ErrorReply(absl::NotFoundError(
        absl::StrCat("no such page: ", TerminalSafe(path.substr(0, 200)))));
  };
  if (path == "/") return File("index.html", "no-cache");
  if (path == "/login") return File("login.html", "no-cache");
  if (path == "/report") return ReportPage(req);
  if (parts.size() == 3 && named &&
      (parts[1] == "sweeps" || parts[1] == "trials"))
    return File("index.html", "no-cache");
  if (parts.size() == 3 && parts[1] == "static")
    return File(parts[2], "no-cache");
  if (parts.size() < 4 || parts[1] != "api" || parts[2] != "v1")
    return not_found();
  // /api/v1/RESOURCE[/NAME[/VIEW]]
  const std::string& resource = parts[3];
  const std::string name = parts.size() > 4 ? parts[4] : "";
  const std::string view = parts.size() > 5 ? parts[5] : "";
  if (parts.size() > 6 || (parts.size() > 4 && name.empty()))
    return not_found();
  if (resource == "events" && parts.size() == 4) return Events(req);
  if (resource == "sweeps" && parts.size() == 4)
    return Api(req, [&] { return JsonOf(core_->sweeps().ListSweeps()); });
  if (resource == "leasing" && parts.size() == 4)
    return Api(req, [&] { return JsonOf(core_->sweeps().Leasing({})); });
  if (resource == "tasks" && parts.size() == 4)
    return Api(req, [] { return absl::StatusOr<std::string>(TasksJson()); });
  if (resource == "sweeps" && parts.size() == 5)
    return Api(req, [&] { return JsonOf(core_->sweeps().GetSweep(name)); });
  if (resource == "sweeps" && parts.size() == 6) {
    std::optional<http::HttpReply> reply = SweepSubview(req, name, view);
    return reply.has_value() ? *std::move(reply) : not_found();
  }
  if (resource == "trials" && parts.size() == 5)
    return Api(req, [&] { return JsonOf(core_->sweeps().GetTrial(name)); });
  if (resource == "trials" && view == "metrics") {
    return Api(req, [&] {
      v1::GetTrialMetricsRequest q;
      q.set_trial_id(name);
      for (const auto& n : req.Params("name")) q.add_names(n);
      return JsonOf(core_->results().GetTrialMetrics(q));
    });
  }
  return not_found();
}

}  // namespace qkov::service
