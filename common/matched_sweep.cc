#include "common/matched_sweep.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/aggregate.h"

namespace qkov {
namespace {

bool Finished(const v1::ResultRow& row) {
  return row.state() == v1::DONE || row.state() == v1::DIVERGED ||
         row.state() == v1::STOPPED_EARLY;
}

std::vector<CurvePoint> ToCurve(const v1::MetricSeries& series) {
  std::vector<CurvePoint> out;
  for (int i = 0; i < series.steps_size() && i < series.values_size(); ++i)
    out.push_back({series.steps(i), series.values(i)});
  return out;
}

using Curves = std::map<std::string, std::vector<CurvePoint>>;

absl::StatusOr<Curves> TrialCurves(const SweepSource& source,
                                   const std::string& trial_id,
                                   const std::vector<std::string>& names) {
  v1::GetTrialMetricsRequest req;
  req.set_trial_id(trial_id);
  for (const auto& n : names) req.add_names(n);
  absl::StatusOr<v1::GetTrialMetricsResponse> resp = source.curves(req);
  if (!resp.ok()) return resp.status();
  Curves out;
  for (const auto& series : resp->series())
    out[series.name()] = ToCurve(series);
  return out;
}

}  // namespace

std::vector<std::string> VaryingAxes(const std::vector<v1::ResultRow>& rows) {
  std::vector<std::string> out;
  for (const std::string axis :
       {"arm", "parameterization", "lr_ratio", "eta_ov"}) {
    std::set<std::string> values;
    for (const auto& r : rows) values.insert(KeyOf(r, axis));
    if (values.size() > 1) out.push_back(axis);
  }
  if (out.empty()) out.push_back("parameterization");
  return out;
}

v1::MatchedResponse MatchedToProto(const MatchedTable& table) {
  v1::MatchedResponse out;
  out.set_reference(table.reference);
  out.set_window(table.window);
  out.set_downwards(table.downwards);
  for (const auto& b : table.by) out.add_by(b);
  for (const auto& m : table.metrics) out.add_metrics(m);
  auto summary = [](const Summary& s, v1::MetricSummary* to) {
    to->set_n(s.n);
    to->set_mean(s.mean);
    to->set_std(s.std);
    to->set_ci95(s.ci95);
  };
  for (const MatchedGroup& g : table.groups) {
    if (out.levels_size() == 0 || g.keys == table.groups[0].keys)
      out.add_levels(g.level);
    v1::MatchedGroup* to = out.add_groups();
    for (const auto& k : g.keys) to->add_keys(k);
    to->set_level(g.level);
    to->set_trials(g.trials);
    to->set_reached(g.reached);
    summary(g.step, to->mutable_step());
    for (size_t m = 0; m < table.metrics.size(); ++m)
      summary(g.metrics[m], &(*to->mutable_metrics())[table.metrics[m]]);
  }
  return out;
}

absl::StatusOr<MatchedTable> MatchSweep(const SweepMatchedArgs& args,
                                        const SweepSource& source) {
  const bool auto_levels = args.spec.find('=') == std::string::npos;
  MatchedSpec spec;
  if (auto_levels) {
    spec.reference = args.spec;
    if (spec.reference.empty()) {
      return absl::InvalidArgumentError(
          "--matched: give a curve, CURVE or CURVE=LEVEL[,LEVEL...]");
    }
  } else {
    absl::StatusOr<MatchedSpec> parsed = ParseMatchedSpec(args.spec);
    if (!parsed.ok()) return parsed.status();
    spec = *std::move(parsed);
  }
  absl::StatusOr<std::vector<Filter>> filters = ParseWhere(args.where);
  if (!filters.ok()) return filters.status();
  for (const auto& key : args.by) {
    if (!IsAxisKey(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--by: '", key,
          "' is not an axis (parameterization, lr_ratio, eta_ov, seed, "
          "alpha, arm, state, trial)"));
    }
  }
  v1::QueryResultsRequest req;
  req.set_sweep_name(args.sweep);
  absl::StatusOr<v1::QueryResultsResponse> resp = source.query(req);
  if (!resp.ok()) return resp.status();
  std::vector<v1::ResultRow> rows;
  for (const auto& r : resp->rows()) {
    if (Finished(r) && Matches(r, *filters)) rows.push_back(r);
  }
  if (rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--matched: sweep ", args.sweep, " has no finished trial",
                     args.where.empty() ? "" : " matching --where"));
  }
  if (args.max_trials > 0 && static_cast<int>(rows.size()) > args.max_trials) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--matched: sweep ", args.sweep, " has ", rows.size(),
        " finished trials; this view compares at most ", args.max_trials,
        " (narrow it with where, or use qkov results --matched)"));
  }
  const std::vector<std::string> by =
      args.by.empty() ? VaryingAxes(rows) : args.by;
  std::vector<std::string> metrics = args.metrics;
  if (metrics.empty() && source.default_metrics) {
    for (const auto& m : source.default_metrics(rows))
      if (m != spec.reference) metrics.push_back(m);
  }
  std::vector<std::string> names = metrics;
  names.push_back(spec.reference);
  std::vector<MatchedTrial> trials;
  for (const auto& r : rows) {
    MatchedTrial t;
    for (const auto& key : by) t.keys.push_back(KeyOf(r, key));
    absl::StatusOr<Curves> curves = TrialCurves(source, r.trial_id(), names);
    if (!curves.ok()) return curves.status();
    t.curves = *std::move(curves);
    trials.push_back(std::move(t));
  }
  auto curve_names = [&]() -> std::string {
    absl::StatusOr<Curves> all = TrialCurves(source, rows[0].trial_id(), {});
    if (!all.ok()) return "";
    std::vector<std::string> out;
    for (const auto& [name, curve] : *all) out.push_back(name);
    return absl::StrJoin(out, ", ");
  };
  if (auto_levels) {
    spec.levels =
        DefaultLevels(trials, spec.reference, args.window, args.default_levels);
    if (spec.levels.empty()) {
      // No trial reports the reference (or none as long as the window):
      // MatchTrials names which, with a placeholder level.
      spec.levels.push_back(0);
    }
  }
  return MatchTrials(trials, spec, args.window, metrics, by, curve_names);
}

}  // namespace qkov
