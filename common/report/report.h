// The reproduction report (docs/report.md): each claim of the paper
// (claims.h) judged on the sweeps of a results database: the server's matched
// comparison (MatchSweep) of the claim's sweep, the verdict by the claim's
// rule, and the evidence behind each number (sweep, trial ids per arm,
// attempts, code versions, config hashes, matched levels). Written as
// Markdown, as one self-contained HTML file (inline SVG, no external asset),
// and as JSON with every number at full precision. `qkov report` builds it
// over gRPC, the dashboard's /report page in the server's process: both
// through a ReportSource.
#ifndef QKOV_COMMON_REPORT_REPORT_H_
#define QKOV_COMMON_REPORT_REPORT_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/report/claims.h"

namespace qkov::report {

struct Evidence {
  std::string sweep;
  int64_t trials = 0;  // in the sweep
  std::vector<std::string> faster_trials, baseline_trials;
  int attempts = 0;                        // of the arms' trials
  std::vector<std::string> code_versions;  // distinct, of those attempts
  std::vector<std::string> config_hashes;  // distinct, of the arms' trials
};

struct ClaimResult {
  const Claim* claim = nullptr;
  Judgement judgement;
  Evidence evidence;
  qkov::v1::MatchedResponse table;
  std::string note;  // why not run (no sweep, or the comparison's error)
  // The command that reproduces the comparison, or that runs the claim.
  std::string command;
};

struct Report {
  std::string server;
  std::vector<ClaimResult> claims;
};

// Where the report reads a database: the coordinator's calls, over a
// channel (the CLI) or in process (the dashboard).
struct ReportSource {
  std::string server;  // named in the report
  std::function<absl::StatusOr<qkov::v1::ListSweepsResponse>()> list_sweeps;
  std::function<absl::StatusOr<qkov::v1::Sweep>(const std::string&)> get_sweep;
  std::function<absl::StatusOr<qkov::v1::MatchedResponse>(
      const qkov::v1::MatchSweepRequest&)>
      match;
  std::function<absl::StatusOr<qkov::v1::QueryResultsResponse>(
      const qkov::v1::QueryResultsRequest&)>
      query;
  std::function<absl::StatusOr<qkov::v1::Trial>(const std::string&)> get_trial;
};

struct ReportArgs {
  // CLAIM=SWEEP: judge the claim on that sweep instead of its preset's.
  std::map<std::string, std::string> sweeps;
};

// INVALID_ARGUMENT for an unknown claim in args.sweeps; the source's errors
// but MatchSweep's, which leave that claim "not run" with the message.
absl::StatusOr<Report> BuildReport(const ReportSource& source,
                                   const ReportArgs& args);

std::string ReportMarkdown(const Report& r);
std::string ReportHtml(const Report& r);
std::string ReportJson(const Report& r);

}  // namespace qkov::report

#endif  // QKOV_COMMON_REPORT_REPORT_H_
