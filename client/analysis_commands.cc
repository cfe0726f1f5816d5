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
#include "client/figures.h"
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

// The columns naming a trial's settings: its arm first in a sweep with arms
// (docs/sweep-files.md, "Arms").
std::vector<std::string> AxisColumns(const std::vector<v1::ResultRow>& rows) {
  std::vector<std::string> axes = {"parameterization", "lr_ratio", "eta_ov",
                                   "seed", "state"};
  if (std::any_of(rows.begin(), rows.end(),
                  [](const v1::ResultRow& r) { return r.config().has_arm(); }))
    axes.insert(axes.begin(), "arm");
  return axes;
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
  const std::vector<std::string> axes = AxisColumns(*rows);
  const bool arms = axes.front() == "arm";
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
        out << "  {\"trial_id\": " << JsonQuote(r.trial_id());
        if (arms) out << ", \"arm\": " << JsonQuote(r.config().arm());
        out << ", \"parameterization\": "
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
  std::vector<const FigureKind*> kinds;
  const bool all = args.kind == "all";
  if (!all) {
    const FigureKind* kind = FindFigureKind(args.kind);
    if (kind == nullptr)
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("unknown figure kind '", TerminalSafe(args.kind), "'")));
    kinds.push_back(kind);
  }
  std::error_code ec;
  std::filesystem::create_directories(args.out_dir, ec);
  if (ec)
    return ReportError(absl::PermissionDeniedError(
        absl::StrCat("cannot create ", args.out_dir)));
  std::vector<v1::ResultRow> rows;
  if (all || kinds.front()->needs_rows) {
    absl::StatusOr<std::vector<v1::ResultRow>> read =
        FetchRows(conn, args.sweep);
    if (!read.ok()) return ReportError(read.status(), conn.address());
    rows = *std::move(read);
  }
  const MetricDefaults& defaults = MetricDefaultsFor(rows);
  if (all) {
    for (const std::string& name : defaults.figures) {
      const FigureKind* kind = FindFigureKind(name);
      if (kind == nullptr)
        return ReportError(absl::InternalError(
            absl::StrCat("the task table names figure kind '", name,
                         "', which no "
                         "figure draws")));
      kinds.push_back(kind);
    }
  }
  std::vector<std::string> written;
  for (const FigureKind* kind : kinds) {
    const FigureInputs in{conn, args, rows, defaults, all, kind->name};
    if (absl::Status s = kind->draw(in, &written); !s.ok())
      return ReportError(s, conn.address());
  }
  for (const auto& w : written)
    std::printf("%s.png %s.svg %s.dat\n", w.c_str(), w.c_str(), w.c_str());
  return kExitOk;
}

}  // namespace qkov::client
