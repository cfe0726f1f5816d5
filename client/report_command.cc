#include "client/report_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/report/report.h"
#include "common/text.h"

namespace qkov::client {
namespace {

namespace v1 = ::qkov::v1;

// A unary call of the sweep service as a StatusOr.
template <typename Response, typename Request, typename Method>
absl::StatusOr<Response> Call(Connection& conn, Method method,
                              const Request& req) {
  Response resp;
  grpc::Status s = (conn.stub()->*method)(conn.Context().get(), req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

report::ReportSource SourceOf(Connection& conn) {
  using Stub = v1::SweepService::Stub;
  report::ReportSource source;
  source.server = conn.address();
  source.list_sweeps = [&conn] {
    return Call<v1::ListSweepsResponse>(conn, &Stub::ListSweeps,
                                        v1::ListSweepsRequest());
  };
  source.get_sweep = [&conn](const std::string& name) {
    v1::GetSweepRequest req;
    req.set_name(name);
    return Call<v1::Sweep>(conn, &Stub::GetSweep, req);
  };
  source.match = [&conn](const v1::MatchSweepRequest& req) {
    return Call<v1::MatchedResponse>(conn, &Stub::MatchSweep, req);
  };
  source.query = [&conn](const v1::QueryResultsRequest& req) {
    return Call<v1::QueryResultsResponse>(conn, &Stub::QueryResults, req);
  };
  source.get_trial = [&conn](const std::string& id) {
    v1::GetTrialRequest req;
    req.set_trial_id(id);
    return Call<v1::Trial>(conn, &Stub::GetTrial, req);
  };
  source.curves = [&conn](const v1::GetTrialMetricsRequest& req) {
    return Call<v1::GetTrialMetricsResponse>(conn, &Stub::GetTrialMetrics, req);
  };
  return source;
}

}  // namespace

int Report(Connection& conn, const std::vector<std::string>& sweep_flags,
           const std::string& out_dir) {
  report::ReportArgs args;
  for (const std::string& f : sweep_flags) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size()) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("--sweep: '", TerminalSafe(f), "' is not CLAIM=SWEEP")));
    }
    args.sweeps[f.substr(0, eq)] = f.substr(eq + 1);
  }
  absl::StatusOr<report::Report> built =
      report::BuildReport(SourceOf(conn), args);
  if (!built.ok()) return ReportError(built.status(), conn.address());
  if (mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ReportError(absl::PermissionDeniedError(
        absl::StrCat("--out: cannot create ", out_dir)));
  }
  for (const auto& [name, text] : {std::pair<std::string, std::string>{
                                       "report.md", ReportMarkdown(*built)},
                                   {"report.html", ReportHtml(*built)},
                                   {"report.json", ReportJson(*built)}}) {
    const std::string path = out_dir + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      return ReportError(
          absl::PermissionDeniedError(absl::StrCat("cannot write ", path)));
    }
  }
  for (const report::ClaimResult& c : built->claims) {
    std::printf("%-30s %-18s %s\n", c.claim->id.c_str(),
                VerdictName(c.judgement.verdict).c_str(),
                c.evidence.sweep.empty() ? c.command.c_str()
                                         : c.evidence.sweep.c_str());
  }
  std::printf("report: %s/report.md, %s/report.html, %s/report.json\n",
              out_dir.c_str(), out_dir.c_str(), out_dir.c_str());
  return kExitOk;
}

}  // namespace qkov::client
