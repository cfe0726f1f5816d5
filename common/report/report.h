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
#include "common/report/levels.h"

namespace qkov::report {

// The scale a claim's sweep ran at, read from its spec and its arms'
// trials, beside the paper's (Claim::paper_scale).
struct Scale {
  int64_t steps = 0;  // the most optimizer steps an arm's trial took
  double epochs = 0;  // where the task counts them
  std::vector<std::string> base_rates;  // eta_OV of the arms, distinct
  // The optimizer's weight decay of the arms, distinct: arms alike in it
  // print one value, the paper's HateXplain arms two.
  std::vector<std::string> weight_decays;
  int batch = 0;
  int64_t train_examples = 0, eval_examples = 0;  // 0: fresh batches / none
  std::string model;                              // "1 layer, d_model 64", ...
  int faster_seeds = 0, baseline_seeds = 0;
  // Below the paper's scale: fewer steps, seeds or training examples than
  // the paper's, each named.
  std::vector<std::string> below;
};

struct Evidence {
  std::string sweep;
  std::string preset;  // the preset it was submitted from, where recorded
  // Every sweep of the claim's task in the database, with whether it holds
  // the arms (and how many trials each), the one used first.
  std::vector<std::string> considered;
  int64_t trials = 0;  // in the sweep
  std::vector<std::string> faster_trials, baseline_trials;
  // The sweep's arms (SweepAxes.arms) the two sides' trials belong to, by
  // name; empty for a sweep without arms.
  std::vector<std::string> faster_arms, baseline_arms;
  // Every trial of each arm by state (done, diverged, failed, cancelled,
  // queued, running, ...), and the trials not done, "ID (state)".
  std::map<std::string, int> faster_states, baseline_states;
  std::vector<std::string> not_done;
  Scale scale;
  int attempts = 0;  // of the arms' trials
  // Their attempts' wall time, start to end, summed: the worker time the
  // arms took (one core each where workers ran one trial on one thread).
  double attempt_hours = 0;
  std::vector<std::string> code_versions;  // distinct, of those attempts
  std::vector<std::string> config_hashes;  // distinct, of the arms' trials
};

struct ClaimResult {
  const Claim* claim = nullptr;
  Judgement judgement;
  Evidence evidence;
  qkov::v1::MatchedResponse table;
  LevelChoice levels;  // a matched claim's (ChooseLevels)
  std::string note;    // why not run (no sweep, or the comparison's error)
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
  std::function<absl::StatusOr<qkov::v1::GetTrialMetricsResponse>(
      const qkov::v1::GetTrialMetricsRequest&)>
      curves;
};

struct ReportArgs {
  // CLAIM=SWEEP: judge the claim on that sweep instead of the one SweepsFor
  // chooses.
  std::map<std::string, std::string> sweeps;
};

// The sweeps of `listed` that can serve `claim`, best first: those of the
// claim's task whose trials hold both arms (a claim against the paper's
// numbers: a finished trial at one of its levels), ordered by the finished
// trials of the smaller arm, then by the trials in both arms, then newest
// first. `considered` gets a line for each sweep of the task, whether it
// serves or not.
absl::StatusOr<std::vector<std::string>> SweepsFor(
    const ReportSource& source, const Claim& claim,
    const qkov::v1::ListSweepsResponse& listed,
    std::vector<std::string>* considered);

// "0.3491 ± 0.00087": the mean to the decimal place of its CI's second
// significant digit; without a CI, 4 significant digits.
std::string ValueWithCi(double mean, double ci95);

// INVALID_ARGUMENT for an unknown claim in args.sweeps; the source's errors
// but MatchSweep's, which leave that claim "not run" with the message.
absl::StatusOr<Report> BuildReport(const ReportSource& source,
                                   const ReportArgs& args);

std::string ReportMarkdown(const Report& r);
// `in_dashboard`: the page the dashboard serves at /report, whose header
// links back to the dashboard.
std::string ReportHtml(const Report& r, bool in_dashboard = false);
std::string ReportJson(const Report& r);

}  // namespace qkov::report

#endif  // QKOV_COMMON_REPORT_REPORT_H_
