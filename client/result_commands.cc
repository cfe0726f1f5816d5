// The qkov commands that read results (client/commands.h): qkov results
// (rows, aggregates over seeds, matched comparisons, ratio searches), qkov
// trials and qkov trial.
#include <google/protobuf/util/time_util.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/commands.h"
#include "client/matched_results.h"
#include "client/metric_defaults.h"
#include "client/table.h"
#include "common/aggregate.h"
#include "common/grpc_status.h"
#include "common/sweep_file.h"
#include "common/text.h"

namespace qkov::client {
namespace {

namespace v1 = ::qkov::v1;

std::string StateName(v1::TrialState s) {
  std::string n = v1::TrialState_Name(s);
  return absl::AsciiStrToLower(n);
}

void PrintAs(const Table& t, const std::string& format) {
  if (format == "csv") {
    t.PrintCsv(std::cout);
  } else {
    t.Print(std::cout);
  }
}

// Aggregated on the server: only the groups cross the wire.

}  // namespace

int AggregatedResults(Connection& conn, const ResultsArgs& args) {
  std::vector<std::string> metrics = args.metrics;
  if (metrics.empty()) {
    v1::GetSweepRequest get;
    get.set_name(args.sweep);
    v1::Sweep sweep;
    grpc::Status s = conn.stub()->GetSweep(conn.Context().get(), get, &sweep);
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
    metrics = MetricDefaultsFor(sweep.spec().training().task()).summary;
  }
  v1::AggregateResultsRequest req;
  req.set_sweep_name(args.sweep);
  for (const auto& k : args.by) req.add_by(k);
  for (const auto& m : metrics) req.add_metrics(m);
  for (const auto& w : args.where) req.add_where(w);
  v1::AggregateResultsResponse resp;
  grpc::Status s =
      conn.stub()->AggregateResults(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::vector<std::string> header = args.by;
  header.push_back("n");
  for (const auto& m : metrics) {
    header.push_back(m + " mean");
    header.push_back("std");
    header.push_back("ci95");
  }
  Table t(header);
  const auto number = args.format == "csv" ? CsvNumber : FormatNumber;
  for (const v1::ResultGroup& g : resp.groups()) {
    std::vector<std::string> row(g.keys().begin(), g.keys().end());
    int64_t n = 0;
    for (const auto& [m, summary] : g.metrics()) n = std::max(n, summary.n());
    row.push_back(absl::StrCat(n));
    for (const auto& m : metrics) {
      const v1::MetricSummary& sm = g.metrics().at(m);
      row.push_back(number(sm.mean()));
      row.push_back(number(sm.std()));
      row.push_back(number(sm.ci95()));
    }
    t.AddRow(row);
  }
  PrintAs(t, args.format);
  return kExitOk;
}

namespace {

// "search: smallest lr_ratio in [1, 100] with mean distinct_attention >= 0.6
// (resolution 1.2, 3 seeds a probe)".
std::string SearchTitle(const v1::RatioSearch& r) {
  return absl::StrCat("search: smallest lr_ratio in [", FormatNumber(r.lo()),
                      ", ", FormatNumber(r.hi()), "] with seed-mean ",
                      TerminalSafe(r.metric()), " ", TerminalSafe(r.op()), " ",
                      FormatNumber(r.target()), " (resolution ",
                      FormatNumber(r.resolution()), ", ", r.seeds_per_probe(),
                      " seeds a probe)");
}

// One row per search: its state, the bracket, and the metric (seed mean
// +- 95% CI half width) at either end ("-" for an end it does not have: no
// probe below, or none reaching the target).
Table SearchTable(const v1::Sweep& sweep) {
  Table t({"param", "eta_ov", "state", "below", "above", "factor", "mean@below",
           "ci95", "mean@above", "ci95", "probes", "non_monotone"});
  for (const v1::SearchOutcome& o : sweep.searches()) {
    const v1::SearchProbe* below = nullptr;
    const v1::SearchProbe* above = nullptr;
    for (const v1::SearchProbe& p : o.probes()) {
      if (p.lr_ratio() == o.below()) below = &p;
      if (p.lr_ratio() == o.above() && p.reached()) above = &p;
    }
    std::vector<std::string> nm;
    for (double r : o.non_monotone()) nm.push_back(FormatNumber(r));
    t.AddRow({ParameterizationLabel(o.parameterization()),
              FormatNumber(o.eta_ov()), o.state(),
              below ? FormatNumber(o.below()) : "-",
              above ? FormatNumber(o.above()) : "-",
              below && above ? FormatNumber(o.above() / o.below()) : "-",
              below ? FormatNumber(below->mean()) : "-",
              below ? FormatNumber(below->ci95()) : "-",
              above ? FormatNumber(above->mean()) : "-",
              above ? FormatNumber(above->ci95()) : "-",
              absl::StrCat(o.probes_size()),
              nm.empty() ? "-" : absl::StrJoin(nm, " ")});
  }
  return t;
}

}  // namespace

int Searches(Connection& conn, const std::string& sweep_name,
             const std::string& format) {
  v1::GetSweepRequest req;
  req.set_name(sweep_name);
  v1::Sweep sweep;
  grpc::Status s = conn.stub()->GetSweep(conn.Context().get(), req, &sweep);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  if (!sweep.spec().has_search()) {
    return ReportError(absl::FailedPreconditionError(absl::StrCat(
        "sweep '", TerminalSafe(sweep_name), "' is a grid, not a search")));
  }
  PrintAs(SearchTable(sweep), format);
  return kExitOk;
}

int MatchedResults(Connection& conn, const ResultsArgs& args) {
  absl::StatusOr<MatchedTable> table =
      ComputeMatched(conn, {args.sweep, args.matched, args.window, args.metrics,
                            args.by, args.where});
  if (!table.ok()) return ReportError(table.status(), conn.address());
  std::vector<std::string> header = table->by;
  for (const char* h : {"level", "reached", "step"}) header.push_back(h);
  for (const auto& m : table->metrics) {
    header.push_back(m + " mean");
    header.push_back("ci95");
  }
  Table t(header);
  const auto number = args.format == "csv" ? CsvNumber : FormatNumber;
  int unreached = 0;
  for (const MatchedGroup& g : table->groups) {
    std::vector<std::string> row = g.keys;
    row.push_back(number(g.level));
    row.push_back(absl::StrCat(g.reached, "/", g.trials));
    unreached += g.trials - g.reached;
    auto cell = [&g, number](double v) {
      return g.reached == 0 ? std::string("-") : number(v);
    };
    row.push_back(cell(g.step.mean));
    for (const Summary& m : g.metrics) {
      row.push_back(cell(m.mean));
      row.push_back(cell(m.ci95));
    }
    t.AddRow(row);
  }
  if (args.format == "table") {
    std::cout << "At the first step where " << table->reference
              << " (trailing mean of " << table->window << " report"
              << (table->window == 1 ? "" : "s")
              << ") reaches each level; mean over the trials that reach it, "
                 "95% CI:\n";
  }
  PrintAs(t, args.format);
  if (args.format == "table" && unreached > 0) {
    std::cout << unreached
              << " trial-level pairs never reached their level: counted in "
                 "'reached', left out of the means\n";
  }
  return kExitOk;
}

int Results(Connection& conn, const ResultsArgs& args) {
  if (!args.matched.empty()) return MatchedResults(conn, args);
  if (!args.by.empty()) return AggregatedResults(conn, args);
  v1::QueryResultsRequest req;
  req.set_sweep_name(args.sweep);
  for (const auto& w : args.where) req.add_where(w);
  v1::QueryResultsResponse resp;
  grpc::Status s = conn.stub()->QueryResults(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::vector<std::string> metrics = args.metrics;
  const MetricDefaults& defaults = MetricDefaultsFor(resp.rows());
  if (metrics.empty()) metrics = defaults.results;
  // A sweep with arms (docs/sweep-files.md, "Arms") shows each trial's.
  const bool arms =
      std::any_of(resp.rows().begin(), resp.rows().end(),
                  [](const v1::ResultRow& r) { return r.config().has_arm(); });
  std::vector<std::string> header = {"trial",  "param", "lr_ratio",
                                     "eta_ov", "seed",  "state"};
  if (arms) header.insert(header.begin() + 1, "arm");
  header.insert(header.end(), metrics.begin(), metrics.end());
  Table t(header);
  const auto number = args.format == "csv" ? CsvNumber : FormatNumber;
  for (const v1::ResultRow& r : resp.rows()) {
    std::vector<std::string> row = {
        r.trial_id(),
        ParameterizationLabel(r.config().parameterization()),
        number(r.config().lr_ratio()),
        number(r.config().eta_ov()),
        absl::StrCat(r.config().seed()),
        StateName(r.state())};
    if (arms) row.insert(row.begin() + 1, TerminalSafe(r.config().arm()));
    for (const std::string& m : metrics) {
      auto it = r.values().find(m);
      row.push_back(it == r.values().end() ? "-" : number(it->second));
    }
    t.AddRow(row);
  }
  PrintAs(t, args.format);
  if (args.format == "table") {
    // An adaptive sweep's answer follows its trials (`qkov search` prints
    // it alone, in any format).
    v1::GetSweepRequest sreq;
    sreq.set_name(args.sweep);
    v1::Sweep sweep;
    s = conn.stub()->GetSweep(conn.Context().get(), sreq, &sweep);
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
    if (sweep.spec().has_search()) {
      std::cout << "\n" << SearchTitle(sweep.spec().search()) << "\n";
      SearchTable(sweep).Print(std::cout);
    }
  }
  return kExitOk;
}

int Trials(Connection& conn, const std::string& sweep,
           const std::string& state) {
  v1::ListTrialsRequest req;
  req.set_sweep_name(sweep);
  if (!state.empty()) {
    v1::TrialState st;
    if (!v1::TrialState_Parse(absl::AsciiStrToUpper(state), &st)) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("--state: unknown state '", state,
                       "' (queued, running, done, failed, diverged, preempted, "
                       "cancelled, stopped_early)")));
    }
    req.set_state(st);
  }
  std::vector<std::vector<std::string>> rows;
  bool arms = false;  // a sweep with arms shows each trial's
  while (true) {
    v1::ListTrialsResponse resp;
    grpc::Status s = conn.stub()->ListTrials(conn.Context().get(), req, &resp);
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
    for (const v1::Trial& tr : resp.trials()) {
      arms = arms || tr.config().has_arm();
      rows.push_back({tr.trial_id(), TerminalSafe(tr.config().arm()),
                      absl::StrCat(tr.ordinal()),
                      ParameterizationLabel(tr.config().parameterization()),
                      FormatNumber(tr.config().lr_ratio()),
                      FormatNumber(tr.config().eta_ov()),
                      absl::StrCat(tr.config().seed()), StateName(tr.state()),
                      absl::StrCat(tr.attempts()),
                      absl::StrCat(tr.last_step())});
    }
    if (resp.next_page_token().empty()) break;
    req.set_page_token(resp.next_page_token());
  }
  std::vector<std::string> header = {"trial",    "arm",    "ordinal", "param",
                                     "lr_ratio", "eta_ov", "seed",    "state",
                                     "attempts", "step"};
  if (!arms) header.erase(header.begin() + 1);
  Table t(header);
  for (std::vector<std::string>& row : rows) {
    if (!arms) row.erase(row.begin() + 1);
    t.AddRow(row);
  }
  t.Print(std::cout);
  return kExitOk;
}

int ShowTrial(Connection& conn, const std::string& trial_id) {
  v1::GetTrialRequest req;
  req.set_trial_id(trial_id);
  v1::Trial t;
  grpc::Status s = conn.stub()->GetTrial(conn.Context().get(), req, &t);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::printf("trial %s (sweep %s, #%lld): %s after %d attempt(s), step %lld\n",
              TerminalSafe(t.trial_id()).c_str(),
              TerminalSafe(t.sweep_name()).c_str(),
              static_cast<long long>(t.ordinal()), StateName(t.state()).c_str(),
              t.attempts(), static_cast<long long>(t.last_step()));
  std::printf("config_hash %s\n# the trial as a sweep file of one point:\n",
              TerminalSafe(t.config_hash()).c_str());
  for (absl::string_view line :
       absl::StrSplit(TrialSweepText(t.sweep_name(), t.config()), '\n'))
    std::printf("%s\n", TerminalSafe(line).c_str());
  std::map<std::string, double> sorted(t.results().begin(), t.results().end());
  if (!sorted.empty()) {
    Table r({"result", "value"});
    for (const auto& [k, v] : sorted) r.AddRow({k, FormatNumber(v)});
    r.Print(std::cout);
  }
  Table a({"attempt", "worker", "state", "started", "error"});
  for (const auto& at : t.attempt_history()) {
    a.AddRow({absl::StrCat(at.attempt()), at.worker_id(), at.state(),
              google::protobuf::util::TimeUtil::ToString(at.started_at()),
              at.error()});
  }
  std::printf("\n");
  a.Print(std::cout);
  {
    v1::GetTrialMetricsRequest mreq;
    mreq.set_trial_id(trial_id);
    for (const char* n :
         {"train_loss", "train_accuracy", "distinct_attention", "lr_qk"})
      mreq.add_names(n);
    v1::GetTrialMetricsResponse curves;
    grpc::Status ms =
        conn.stub()->GetTrialMetrics(conn.Context().get(), mreq, &curves);
    if (!ms.ok()) return ReportError(FromGrpcStatus(ms), conn.address());
    if (curves.series_size() > 0) {
      std::vector<std::string> header = {"step"};
      for (const auto& c : curves.series()) header.push_back(c.name());
      Table ct(header);
      const int points = curves.series(0).steps_size();
      const int stride = std::max(1, points / 12);
      for (int i = 0; i < points; i += stride) {
        std::vector<std::string> row = {
            absl::StrCat(curves.series(0).steps(i))};
        for (const auto& c : curves.series())
          row.push_back(i < c.values_size() ? FormatNumber(c.values(i)) : "-");
        ct.AddRow(row);
      }
      std::printf(
          "\ncurves (every %d-th report; all points: qkov export --per "
          "point)\n",
          stride);
      ct.Print(std::cout);
    }
  }
  for (const auto& h : t.heatmaps()) {
    std::printf(
        "\n%s heatmap (rows: %s high->low, cols: %s low->high, %% of "
        "examples)\n",
        TerminalSafe(h.name()).c_str(), TerminalSafe(h.y_label()).c_str(),
        TerminalSafe(h.x_label()).c_str());
    const int cols = h.x_edges_size() - 1, rows = h.y_edges_size() - 1;
    for (int r = rows - 1; r >= 0; --r) {
      std::printf("  [%.2f,%.2f] ", h.y_edges(r), h.y_edges(r + 1));
      for (int c = 0; c < cols; ++c)
        std::printf(" %6.2f", h.values(r * cols + c));
      std::printf("\n");
    }
  }
  return kExitOk;
}

}  // namespace qkov::client
