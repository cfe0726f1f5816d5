// HttpService's /report page: the reproduction report (docs/report.md) of
// this server's sweeps, built in process from the coordinator, as the HTML
// `qkov report` writes. The page carries no script; its CSP allows only its
// own inline styles.
#include "absl/strings/str_cat.h"
#include "common/report/report.h"
#include "common/text.h"
#include "server/service/http_service.h"

namespace qkov::service {

namespace v1 = ::qkov::v1;

http::HttpReply HttpService::ReportPage(const http::HttpRequest& req) {
  if (!Authorize(req).ok()) return http::RedirectReply("/login");
  report::ReportArgs args;
  for (const std::string& p : req.Params("sweep")) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size()) {
      return http::ErrorReply(absl::InvalidArgumentError(absl::StrCat(
          "sweep: '", TerminalSafe(p.substr(0, 200)), "' is not CLAIM=SWEEP")));
    }
    args.sweeps[p.substr(0, eq)] = p.substr(eq + 1);
  }
  report::ReportSource source;
  source.server = "this server";
  source.list_sweeps = [this] { return core_->sweeps().ListSweeps(); };
  source.get_sweep = [this](const std::string& name) {
    return core_->sweeps().GetSweep(name);
  };
  source.match = [this](const v1::MatchSweepRequest& r) {
    return core_->results().MatchSweep(r, config_.matched_max_trials);
  };
  source.query = [this](const v1::QueryResultsRequest& r) {
    return core_->results().QueryResults(r);
  };
  source.get_trial = [this](const std::string& id) {
    return core_->sweeps().GetTrial(id);
  };
  source.curves = [this](const v1::GetTrialMetricsRequest& r) {
    return core_->results().GetTrialMetrics(r);
  };
  absl::StatusOr<report::Report> built = report::BuildReport(source, args);
  if (!built.ok()) return http::ErrorReply(built.status());
  http::HttpReply reply;
  reply.content_type = "text/html; charset=utf-8";
  reply.body = report::ReportHtml(*built, /*in_dashboard=*/true);
  reply.headers.emplace_back("Cache-Control", "no-store");
  reply.headers.emplace_back(
      "Content-Security-Policy",
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
      "frame-ancestors 'none'; form-action 'none'");
  return reply;
}

}  // namespace qkov::service
