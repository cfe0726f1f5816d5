#include "client/matched_results.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "client/metric_defaults.h"
#include "common/grpc_status.h"

namespace qkov::client {
namespace {

namespace v1 = ::qkov::v1;

bool Finished(const v1::ResultRow& row) {
  return row.state() == v1::DONE || row.state() == v1::DIVERGED ||
         row.state() == v1::STOPPED_EARLY;
}

// The axes (not seed) that take more than one value among `rows`; the
// parameterization when none does.
std::vector<std::string> VaryingAxes(const std::vector<v1::ResultRow>& rows) {
  std::vector<std::string> out;
  for (const std::string axis : {"parameterization", "lr_ratio", "eta_ov"}) {
    std::set<std::string> values;
    for (const auto& r : rows) values.insert(KeyOf(r, axis));
    if (values.size() > 1) out.push_back(axis);
  }
  if (out.empty()) out.push_back("parameterization");
  return out;
}

std::vector<CurvePoint> ToCurve(const v1::MetricSeries& series) {
  std::vector<CurvePoint> out;
  for (int i = 0; i < series.steps_size() && i < series.values_size(); ++i)
    out.push_back({series.steps(i), series.values(i)});
  return out;
}

// One trial's curves by name.
using Curves = std::map<std::string, std::vector<CurvePoint>>;

absl::StatusOr<Curves> FetchTrialCurves(Connection& conn,
                                        const std::string& trial_id,
                                        const std::vector<std::string>& names) {
  absl::StatusOr<v1::GetTrialMetricsResponse> resp =
      FetchCurves(conn, trial_id, names);
  if (!resp.ok()) return resp.status();
  Curves out;
  for (const auto& series : resp->series())
    out[series.name()] = ToCurve(series);
  return out;
}

std::string CurveNames(Connection& conn, const std::string& trial_id) {
  absl::StatusOr<Curves> all = FetchTrialCurves(conn, trial_id, {});
  if (!all.ok()) return "";
  std::vector<std::string> names;
  for (const auto& [name, curve] : *all) names.push_back(name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<MatchedTable> ComputeMatched(Connection& conn,
                                            const MatchedArgs& args) {
  absl::StatusOr<MatchedSpec> spec = ParseMatchedSpec(args.spec);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::vector<Filter>> filters = ParseWhere(args.where);
  if (!filters.ok()) return filters.status();
  for (const auto& key : args.by) {
    if (!IsAxisKey(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--by: '", key,
          "' is not an axis (parameterization, lr_ratio, eta_ov, seed, "
          "alpha, state, trial)"));
    }
  }
  v1::QueryResultsRequest req;
  req.set_sweep_name(args.sweep);
  v1::QueryResultsResponse resp;
  grpc::Status s = conn.stub()->QueryResults(conn.Context().get(), req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  std::vector<v1::ResultRow> rows;
  for (const auto& r : resp.rows()) {
    if (Finished(r) && Matches(r, *filters)) rows.push_back(r);
  }
  if (rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--matched: sweep ", args.sweep, " has no finished trial",
                     args.where.empty() ? "" : " matching --where"));
  }
  const std::vector<std::string> by =
      args.by.empty() ? VaryingAxes(rows) : args.by;
  std::vector<std::string> metrics = args.metrics;
  if (metrics.empty()) {
    for (const auto& m : MetricDefaultsFor(rows).curves)
      if (m != spec->reference) metrics.push_back(m);
  }
  std::vector<std::string> names = metrics;
  names.push_back(spec->reference);
  std::vector<MatchedTrial> trials;
  for (const auto& r : rows) {
    MatchedTrial t;
    for (const auto& key : by) t.keys.push_back(KeyOf(r, key));
    absl::StatusOr<Curves> curves = FetchTrialCurves(conn, r.trial_id(), names);
    if (!curves.ok()) return curves.status();
    t.curves = *std::move(curves);
    trials.push_back(std::move(t));
  }
  return MatchTrials(trials, *spec, args.window, metrics, by,
                     [&] { return CurveNames(conn, rows[0].trial_id()); });
}

}  // namespace qkov::client
