// `qkov report` (docs/report.md): each claim of the paper (claims.h) judged
// on the sweeps of a results database, over gRPC: the server's matched
// comparison (MatchSweep) of the claim's sweep, the verdict by the claim's
// rule, and the evidence behind each number (sweep, trial ids per arm,
// attempts, code versions, config hashes, matched levels). Written as
// Markdown, as one self-contained HTML file (inline SVG, no external asset),
// and as JSON with every number at full precision.
#ifndef QKOV_CLIENT_REPORT_REPORT_H_
#define QKOV_CLIENT_REPORT_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/connection.h"
#include "client/report/claims.h"

namespace qkov::client::report {

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

struct ReportArgs {
  // CLAIM=SWEEP: judge the claim on that sweep instead of its preset's.
  std::map<std::string, std::string> sweeps;
};

absl::StatusOr<Report> BuildReport(Connection& conn, const ReportArgs& args);

std::string ReportMarkdown(const Report& r);
std::string ReportHtml(const Report& r);
std::string ReportJson(const Report& r);

// `qkov report [--sweep CLAIM=SWEEP]... [--out DIR]`: writes DIR/report.md,
// report.html and report.json, prints one line per claim; the CLI's exit
// code.
int RunReport(Connection& conn, const std::vector<std::string>& sweep_flags,
              const std::string& out_dir);

}  // namespace qkov::client::report

#endif  // QKOV_CLIENT_REPORT_REPORT_H_
