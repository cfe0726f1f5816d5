// qkov export, sql and plot: results out of the coordinator into files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/commands.h"
#include "client/matched_results.h"
#include "client/metric_defaults.h"
#include "client/plot.h"
#include "client/table.h"
#include "common/aggregate.h"
#include "common/grpc_status.h"
#include "common/text.h"

namespace qkov::client {
namespace {

namespace v1 = ::qkov::v1;

std::string JsonNumber(double v) {
  return std::isfinite(v) ? absl::StrFormat("%.17g", v) : "null";
}
// Every row of the sweep, in pages of 10,000 (one answer of a 100,000-trial
// sweep would pass the server's message limit).
absl::StatusOr<std::vector<v1::ResultRow>> FetchRows(Connection& conn,
                                                     const std::string& sweep) {
  constexpr int64_t kPage = 10000;
  std::vector<v1::ResultRow> rows;
  for (int64_t offset = 0;; offset += kPage) {
    v1::QueryResultsRequest req;
    req.set_sweep_name(sweep);
    req.set_offset(offset);
    req.set_limit(kPage);
    v1::QueryResultsResponse resp;
    grpc::Status s =
        conn.stub()->QueryResults(conn.Context().get(), req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    for (v1::ResultRow& r : *resp.mutable_rows()) rows.push_back(std::move(r));
    if (resp.rows_size() < kPage) break;
  }
  return rows;
}

}  // namespace

int Export(Connection& conn, const ExportArgs& args) {
  absl::StatusOr<std::vector<v1::ResultRow>> rows = FetchRows(conn, args.sweep);
  if (!rows.ok()) return ReportError(rows.status(), conn.address());
  std::ofstream file;
  if (!args.out.empty()) {
    file.open(args.out);
    if (!file)
      return ReportError(
          absl::PermissionDeniedError(absl::StrCat("cannot write ", args.out)));
  }
  std::ostream& out = args.out.empty() ? std::cout : file;
  const bool json = args.format == "json";
  const std::vector<std::string> axes = {"parameterization", "lr_ratio",
                                         "eta_ov", "seed", "state"};
  if (args.per == "trial") {
    std::set<std::string> names;
    for (const auto& r : *rows)
      for (const auto& [k, v] : r.values()) names.insert(k);
    if (json)
      out << "[\n";
    else {
      out << "trial_id";
      for (const auto& a : axes) out << "," << a;
      for (const auto& n : names) out << "," << n;
      out << "\n";
    }
    for (size_t i = 0; i < rows->size(); ++i) {
      const v1::ResultRow& r = (*rows)[i];
      if (json) {
        out << "  {\"trial_id\": " << JsonQuote(r.trial_id())
            << ", \"parameterization\": "
            << JsonQuote(KeyOf(r, "parameterization"))
            << ", \"lr_ratio\": " << JsonNumber(r.config().lr_ratio())
            << ", \"eta_ov\": " << JsonNumber(r.config().eta_ov())
            << ", \"seed\": " << r.config().seed()
            << ", \"state\": " << JsonQuote(KeyOf(r, "state"))
            << ", \"results\": {";
        bool first = true;
        for (const auto& n : names) {
          auto it = r.values().find(n);
          if (it == r.values().end()) continue;
          out << (first ? "" : ", ") << JsonQuote(n) << ": "
              << JsonNumber(it->second);
          first = false;
        }
        out << "}}" << (i + 1 < rows->size() ? "," : "") << "\n";
      } else {
        out << r.trial_id();
        for (const auto& a : axes) out << "," << KeyOf(r, a);
        for (const auto& n : names) {
          auto it = r.values().find(n);
          out << "," << (it == r.values().end() ? "" : CsvNumber(it->second));
        }
        out << "\n";
      }
    }
    if (json) out << "]\n";
    return kExitOk;
  }
  // One row per metric point.
  if (json)
    out << "[\n";
  else
    out << "trial_id,parameterization,lr_ratio,eta_ov,seed,name,step,value\n";
  bool first = true;
  for (const auto& r : *rows) {
    absl::StatusOr<v1::GetTrialMetricsResponse> curves =
        FetchCurves(conn, r.trial_id(), {});
    if (!curves.ok()) return ReportError(curves.status(), conn.address());
    for (const auto& series : curves->series()) {
      for (int i = 0; i < series.steps_size(); ++i) {
        if (json) {
          out << (first ? "" : ",\n")
              << "  {\"trial_id\": " << JsonQuote(r.trial_id())
              << ", \"parameterization\": "
              << JsonQuote(KeyOf(r, "parameterization"))
              << ", \"lr_ratio\": " << JsonNumber(r.config().lr_ratio())
              << ", \"eta_ov\": " << JsonNumber(r.config().eta_ov())
              << ", \"seed\": " << r.config().seed()
              << ", \"name\": " << JsonQuote(series.name())
              << ", \"step\": " << series.steps(i)
              << ", \"value\": " << JsonNumber(series.values(i)) << "}";
        } else {
          out << r.trial_id() << "," << KeyOf(r, "parameterization") << ","
              << KeyOf(r, "lr_ratio") << "," << KeyOf(r, "eta_ov") << ","
              << r.config().seed() << "," << series.name() << ","
              << series.steps(i) << "," << CsvNumber(series.values(i)) << "\n";
        }
        first = false;
      }
    }
  }
  if (json) out << "\n]\n";
  return kExitOk;
}

int Sql(Connection& conn, const std::string& sql, const std::string& format) {
  v1::QuerySqlRequest req;
  req.set_sql(sql);
  v1::QuerySqlResponse resp;
  grpc::Status s = conn.stub()->QuerySql(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  Table t(
      std::vector<std::string>(resp.columns().begin(), resp.columns().end()));
  for (const auto& row : resp.rows()) {
    std::vector<std::string> cells;
    for (const auto& v : row.values()) {
      switch (v.kind_case()) {
        case v1::SqlValue::kIntValue:
          cells.push_back(absl::StrCat(v.int_value()));
          break;
        case v1::SqlValue::kDoubleValue:
          cells.push_back(absl::StrFormat("%.10g", v.double_value()));
          break;
        case v1::SqlValue::kTextValue:
          cells.push_back(v.text_value());
          break;
        case v1::SqlValue::kBlobValue:
          cells.push_back(
              absl::StrCat("x'", absl::BytesToHexString(v.blob_value()), "'"));
          break;
        default:
          cells.push_back("NULL");
      }
    }
    t.AddRow(cells);
  }
  if (format == "csv") {
    t.PrintCsv(std::cout);
  } else {
    t.Print(std::cout);
  }
  if (resp.truncated())
    std::fprintf(stderr,
                 "qkov: output truncated at %zu rows (server limit: %s)\n",
                 t.size(), resp.truncated_by().c_str());
  return kExitOk;
}

int Plot(Connection& conn, const PlotArgs& args) {
  std::error_code ec;
  std::filesystem::create_directories(args.out_dir, ec);
  if (ec)
    return ReportError(absl::PermissionDeniedError(
        absl::StrCat("cannot create ", args.out_dir)));
  if (args.kind == "matched") {
    if (args.matched.empty()) {
      return ReportError(absl::InvalidArgumentError(
          "--kind matched needs --matched CURVE[=LEVEL,...]"));
    }
    absl::StatusOr<MatchedTable> table = ComputeMatched(
        conn,
        {args.sweep, args.matched, args.window, args.metrics, args.by, {}});
    if (!table.ok()) return ReportError(table.status(), conn.address());
    for (size_t m = 0; m < table->metrics.size(); ++m) {
      const std::string base = args.out_dir + "/matched_" + table->metrics[m];
      if (absl::Status s = PlotMatched(*table, m, base); !s.ok())
        return ReportError(s);
      std::printf("%s.png %s.svg %s.dat\n", base.c_str(), base.c_str(),
                  base.c_str());
    }
    return kExitOk;
  }
  absl::StatusOr<std::vector<v1::ResultRow>> rows = FetchRows(conn, args.sweep);
  if (!rows.ok()) return ReportError(rows.status(), conn.address());
  bool theory = false, fixed = false;
  for (const auto& r : *rows) {
    theory |= r.config().training().task() == v1::TASK_THEORY;
    fixed |= r.config().training().task() == v1::TASK_FIXED_ATTENTION;
  }
  // A theory or fixed-attention sweep's "all" is its own figure.
  const bool all = args.kind == "all" && !theory && !fixed;
  const MetricDefaults& defaults = MetricDefaultsFor(*rows);
  std::vector<std::string> written;
  auto check = [&](const absl::Status& s, const std::string& base) {
    if (!s.ok()) return ReportError(s);
    written.push_back(base);
    return kExitOk;
  };
  if (all || args.kind == "ratio") {
    std::vector<std::string> metrics = args.metrics;
    if (metrics.empty()) metrics = defaults.ratio;
    for (const auto& m : metrics) {
      const std::string base = args.out_dir + "/ratio_" + m;
      if (int rc = check(PlotRatio(*rows, m, base), base); rc != kExitOk)
        return rc;
    }
  }
  if (all || args.kind == "search") {
    v1::GetSweepRequest req;
    req.set_name(args.sweep);
    v1::Sweep sweep;
    grpc::Status s = conn.stub()->GetSweep(conn.Context().get(), req, &sweep);
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
    if (sweep.spec().has_search()) {
      const std::string base = args.out_dir + "/search";
      if (int rc = check(PlotSearch(sweep, base), base); rc != kExitOk)
        return rc;
    } else if (args.kind == "search") {
      return ReportError(absl::FailedPreconditionError(absl::StrCat(
          "sweep '", TerminalSafe(args.sweep), "' is a grid, not a search")));
    }
  }
  if (all || args.kind == "dtap") {
    std::vector<v1::Trial> trials;
    for (const auto& r : *rows) {
      if (r.state() != v1::DONE) continue;
      v1::GetTrialRequest req;
      req.set_trial_id(r.trial_id());
      v1::Trial t;
      grpc::Status s = conn.stub()->GetTrial(conn.Context().get(), req, &t);
      if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
      trials.push_back(std::move(t));
    }
    const std::string base = args.out_dir + "/dtap_grid";
    if (int rc = check(PlotDtapGrid(trials, base), base); rc != kExitOk)
      return rc;
  }
  if (all || args.kind == "curves") {
    std::vector<std::string> metrics = args.metrics;
    if (metrics.empty() || all) metrics = defaults.curves;
    for (const auto& m : metrics) {
      std::map<std::pair<std::string, double>, Curve> by_group;
      for (const auto& r : *rows) {
        if (r.state() != v1::DONE) continue;
        absl::StatusOr<v1::GetTrialMetricsResponse> curves =
            FetchCurves(conn, r.trial_id(), {m});
        if (!curves.ok()) return ReportError(curves.status(), conn.address());
        Curve& c =
            by_group[{KeyOf(r, "parameterization"), r.config().lr_ratio()}];
        c.parameterization = KeyOf(r, "parameterization");
        c.lr_ratio = r.config().lr_ratio();
        for (const auto& series : curves->series()) {
          for (int i = 0; i < series.steps_size(); ++i)
            c.by_step[series.steps(i)].push_back(series.values(i));
        }
      }
      std::vector<Curve> curves;
      for (auto& [k, c] : by_group) curves.push_back(std::move(c));
      const std::string base = args.out_dir + "/curves_" + m;
      if (int rc = check(PlotCurves(curves, m, base), base); rc != kExitOk)
        return rc;
    }
  }
  if (args.kind == "fixed" || (args.kind == "all" && fixed)) {
    const std::string base = args.out_dir + "/fixed_attention_loss";
    if (int rc = check(PlotFixedAttention(*rows, base), base); rc != kExitOk)
      return rc;
  }
  if (args.kind == "theory" || (args.kind == "all" && theory)) {
    // Fig. 4: the trajectories against time, and the values at each loss
    // threshold.
    std::vector<TheoryTrajectory> trajectories;
    std::vector<TheoryThresholds> thresholds;
    for (const auto& r : *rows) {
      if (r.state() != v1::DONE ||
          r.config().training().task() != v1::TASK_THEORY)
        continue;
      absl::StatusOr<v1::GetTrialMetricsResponse> m = FetchCurves(
          conn, r.trial_id(),
          {"theory_tau", "theory_mu_ov", "theory_mu_qk", "theory_loss",
           "theory_alpha", "threshold_loss", "threshold_mu_ov",
           "threshold_mu_qk", "threshold_alpha"});
      if (!m.ok()) return ReportError(m.status(), conn.address());
      TheoryTrajectory t;
      TheoryThresholds h;
      t.r = h.r = r.config().lr_ratio();
      const std::map<std::string, std::vector<double>*> into = {
          {"theory_tau", &t.tau},        {"theory_mu_ov", &t.mu_ov},
          {"theory_mu_qk", &t.mu_qk},    {"theory_loss", &t.loss},
          {"theory_alpha", &t.alpha},    {"threshold_loss", &h.loss},
          {"threshold_mu_ov", &h.mu_ov}, {"threshold_mu_qk", &h.mu_qk},
          {"threshold_alpha", &h.alpha}};
      for (const auto& series : m->series()) {
        auto it = into.find(series.name());
        if (it != into.end())
          it->second->assign(series.values().begin(), series.values().end());
      }
      trajectories.push_back(std::move(t));
      thresholds.push_back(std::move(h));
    }
    auto by_r = [](const auto& a, const auto& b) { return a.r < b.r; };
    std::sort(trajectories.begin(), trajectories.end(), by_r);
    std::sort(thresholds.begin(), thresholds.end(), by_r);
    std::string base = args.out_dir + "/theory_time";
    if (int rc = check(PlotTheoryTime(trajectories, base), base); rc != kExitOk)
      return rc;
    base = args.out_dir + "/theory_thresholds";
    if (int rc = check(PlotTheoryThresholds(thresholds, base), base);
        rc != kExitOk)
      return rc;
  }
  if (args.kind == "theory" || (args.kind == "all" && theory)) {
    std::vector<TheoryCurve> curves;
    for (const auto& r : *rows) {
      if (r.state() != v1::DONE ||
          r.config().training().task() != v1::TASK_THEORY)
        continue;
      absl::StatusOr<v1::GetTrialMetricsResponse> m = FetchCurves(
          conn, r.trial_id(), {"threshold_loss", "threshold_alpha"});
      if (!m.ok()) return ReportError(m.status(), conn.address());
      TheoryCurve c;
      c.r = r.config().lr_ratio();
      for (const auto& series : m->series()) {
        auto& target = series.name() == "threshold_loss" ? c.loss : c.alpha;
        target.assign(series.values().begin(), series.values().end());
      }
      curves.push_back(std::move(c));
    }
    std::sort(
        curves.begin(), curves.end(),
        [](const TheoryCurve& a, const TheoryCurve& b) { return a.r < b.r; });
    std::vector<TrainedArm> arms;
    if (!args.overlay.empty()) {
      // The trained sweep at matched training loss (trailing mean of 5
      // reports, chosen levels), as the dashboard's theory page overlays it.
      absl::StatusOr<MatchedTable> matched =
          ComputeMatched(conn, {args.overlay,
                                "train_loss",
                                5,
                                {"distinct_attention"},
                                {"parameterization", "lr_ratio"},
                                {}});
      if (!matched.ok()) return ReportError(matched.status(), conn.address());
      for (const MatchedGroup& g : matched->groups) {
        const std::string label = absl::StrCat(g.keys[0], " r=", g.keys[1]);
        if (arms.empty() || arms.back().label != label)
          arms.push_back({label, {}, {}});
        if (g.reached == 0) continue;
        arms.back().loss.push_back(g.level);
        arms.back().attention.push_back(g.metrics[0].mean);
      }
    }
    const std::string base = args.out_dir + "/theory_alpha";
    if (int rc = check(PlotTheory(curves, arms, base), base); rc != kExitOk)
      return rc;
  }
  for (const auto& w : written)
    std::printf("%s.png %s.svg %s.dat\n", w.c_str(), w.c_str(), w.c_str());
  return kExitOk;
}

}  // namespace qkov::client
