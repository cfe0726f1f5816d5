#include "client/figures.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/matched_results.h"
#include "client/plot.h"
#include "common/grpc_status.h"
#include "common/text.h"

namespace qkov::client {
namespace {

namespace v1 = ::qkov::v1;

std::string Base(const FigureInputs& in, const std::string& name) {
  return absl::StrCat(in.args.out_dir, "/", name);
}

// The matched-quantity figure of every metric (docs/cli.md, qkov results
// --matched).
absl::Status DrawMatched(const FigureInputs& in,
                         std::vector<std::string>* written) {
  const PlotArgs& a = in.args;
  if (a.matched.empty())
    return absl::InvalidArgumentError(
        "--kind matched needs --matched CURVE[=LEVEL,...]");
  absl::StatusOr<MatchedTable> table = ComputeMatched(
      in.conn, {a.sweep, a.matched, a.window, a.metrics, a.by, {}});
  if (!table.ok()) return table.status();
  for (size_t m = 0; m < table->metrics.size(); ++m) {
    const std::string base = Base(in, "matched_" + table->metrics[m]);
    if (absl::Status s = PlotMatched(*table, m, base); !s.ok()) return s;
    written->push_back(base);
  }
  return absl::OkStatus();
}

// Each metric's seed mean against the ratio.
absl::Status DrawRatio(const FigureInputs& in,
                       std::vector<std::string>* written) {
  std::vector<std::string> metrics = in.args.metrics;
  if (metrics.empty()) metrics = in.defaults.ratio;
  for (const auto& m : metrics) {
    const std::string base = Base(in, "ratio_" + m);
    if (absl::Status s = PlotRatio(in.rows, m, base); !s.ok()) return s;
    written->push_back(base);
  }
  return absl::OkStatus();
}

// An adaptive sweep's probes; `all` skips a grid.
absl::Status DrawSearch(const FigureInputs& in,
                        std::vector<std::string>* written) {
  v1::GetSweepRequest req;
  req.set_name(in.args.sweep);
  v1::Sweep sweep;
  grpc::Status s =
      in.conn.stub()->GetSweep(in.conn.Context().get(), req, &sweep);
  if (!s.ok()) return FromGrpcStatus(s);
  if (!sweep.spec().has_search()) {
    if (in.all) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "sweep '", TerminalSafe(in.args.sweep), "' is a grid, not a search"));
  }
  const std::string base = Base(in, "search");
  if (absl::Status p = PlotSearch(sweep, base); !p.ok()) return p;
  written->push_back(base);
  return absl::OkStatus();
}

// The distinct-token attention grid of every finished trial.
absl::Status DrawDtap(const FigureInputs& in,
                      std::vector<std::string>* written) {
  std::vector<v1::Trial> trials;
  for (const auto& r : in.rows) {
    if (r.state() != v1::DONE) continue;
    v1::GetTrialRequest req;
    req.set_trial_id(r.trial_id());
    v1::Trial t;
    grpc::Status s = in.conn.stub()->GetTrial(in.conn.Context().get(), req, &t);
    if (!s.ok()) return FromGrpcStatus(s);
    trials.push_back(std::move(t));
  }
  const std::string base = Base(in, "dtap_grid");
  if (absl::Status s = PlotDtapGrid(trials, base); !s.ok()) return s;
  written->push_back(base);
  return absl::OkStatus();
}

// Learning curves, one line per (parameterization, ratio) over its seeds.
absl::Status DrawCurves(const FigureInputs& in,
                        std::vector<std::string>* written) {
  std::vector<std::string> metrics = in.args.metrics;
  if (metrics.empty() || in.all) metrics = in.defaults.curves;
  for (const auto& m : metrics) {
    std::map<std::pair<std::string, double>, Curve> by_group;
    for (const auto& r : in.rows) {
      if (r.state() != v1::DONE) continue;
      absl::StatusOr<v1::GetTrialMetricsResponse> curves =
          FetchCurves(in.conn, r.trial_id(), {m});
      if (!curves.ok()) return curves.status();
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
    const std::string base = Base(in, "curves_" + m);
    if (absl::Status s = PlotCurves(curves, m, base); !s.ok()) return s;
    written->push_back(base);
  }
  return absl::OkStatus();
}

// The fixed-attention task's losses (the paper's Fig. 3).
absl::Status DrawFixed(const FigureInputs& in,
                       std::vector<std::string>* written) {
  const std::string base = Base(in, "fixed_attention_loss");
  if (absl::Status s = PlotFixedAttention(in.rows, base); !s.ok()) return s;
  written->push_back(base);
  return absl::OkStatus();
}

// A finished trial's named curves, by name.
absl::StatusOr<std::map<std::string, std::vector<double>>> CurveValues(
    Connection& conn, const v1::ResultRow& r,
    const std::vector<std::string>& names) {
  absl::StatusOr<v1::GetTrialMetricsResponse> m =
      FetchCurves(conn, r.trial_id(), names);
  if (!m.ok()) return m.status();
  std::map<std::string, std::vector<double>> values;
  for (const auto& series : m->series())
    values[series.name()].assign(series.values().begin(),
                                 series.values().end());
  return values;
}

// The trained sweep named by --overlay at matched training loss (trailing
// mean of 5 reports, chosen levels), as the dashboard's theory page
// overlays it.
absl::StatusOr<std::vector<TrainedArm>> OverlayArms(const FigureInputs& in) {
  std::vector<TrainedArm> arms;
  if (in.args.overlay.empty()) return arms;
  absl::StatusOr<MatchedTable> matched =
      ComputeMatched(in.conn, {in.args.overlay,
                               "train_loss",
                               5,
                               {"distinct_attention"},
                               {"parameterization", "lr_ratio"},
                               {}});
  if (!matched.ok()) return matched.status();
  for (const MatchedGroup& g : matched->groups) {
    const std::string label = absl::StrCat(g.keys[0], " r=", g.keys[1]);
    if (arms.empty() || arms.back().label != label)
      arms.push_back({label, {}, {}});
    if (g.reached == 0) continue;
    arms.back().loss.push_back(g.level);
    arms.back().attention.push_back(g.metrics[0].mean);
  }
  return arms;
}

// The reduced ODE (the paper's Fig. 4): the trajectories against time, the
// values at each loss threshold, and alpha against the loss with any
// trained sweep overlaid.
absl::Status DrawTheory(const FigureInputs& in,
                        std::vector<std::string>* written) {
  std::vector<TheoryTrajectory> trajectories;
  std::vector<TheoryThresholds> thresholds;
  std::vector<TheoryCurve> curves;
  for (const auto& r : in.rows) {
    if (r.state() != v1::DONE) continue;
    absl::StatusOr<std::map<std::string, std::vector<double>>> v =
        CurveValues(in.conn, r,
                    {"theory_tau", "theory_mu_ov", "theory_mu_qk",
                     "theory_loss", "theory_alpha", "threshold_loss",
                     "threshold_mu_ov", "threshold_mu_qk", "threshold_alpha"});
    if (!v.ok()) return v.status();
    auto take = [&](const char* name) { return (*v)[name]; };
    const double ratio = r.config().lr_ratio();
    trajectories.push_back({ratio, take("theory_tau"), take("theory_mu_ov"),
                            take("theory_mu_qk"), take("theory_loss"),
                            take("theory_alpha")});
    thresholds.push_back({ratio, take("threshold_loss"),
                          take("threshold_mu_ov"), take("threshold_mu_qk"),
                          take("threshold_alpha")});
    curves.push_back({ratio, take("threshold_loss"), take("threshold_alpha")});
  }
  auto by_r = [](const auto& a, const auto& b) { return a.r < b.r; };
  std::sort(trajectories.begin(), trajectories.end(), by_r);
  std::sort(thresholds.begin(), thresholds.end(), by_r);
  std::sort(curves.begin(), curves.end(), by_r);
  absl::StatusOr<std::vector<TrainedArm>> arms = OverlayArms(in);
  if (!arms.ok()) return arms.status();
  const std::string time = Base(in, "theory_time");
  const std::string at = Base(in, "theory_thresholds");
  const std::string alpha = Base(in, "theory_alpha");
  if (absl::Status s = PlotTheoryTime(trajectories, time); !s.ok()) return s;
  written->push_back(time);
  if (absl::Status s = PlotTheoryThresholds(thresholds, at); !s.ok()) return s;
  written->push_back(at);
  if (absl::Status s = PlotTheory(curves, *arms, alpha); !s.ok()) return s;
  written->push_back(alpha);
  return absl::OkStatus();
}

}  // namespace

const std::vector<FigureKind>& FigureKinds() {
  static const std::vector<FigureKind>* const kinds =
      new std::vector<FigureKind>{
          {"ratio", "the sweep's rows; --metrics (default: the task's)", true,
           DrawRatio},
          {"search", "an adaptive sweep (docs/adaptive.md)", false, DrawSearch},
          {"dtap", "finished trials' attention heatmaps", true, DrawDtap},
          {"curves", "finished trials' curves; --metrics (default: the task's)",
           true, DrawCurves},
          {"fixed", "a fixed-attention sweep's losses", true, DrawFixed},
          {"theory", "an ODE sweep's trajectories; --overlay a trained sweep",
           true, DrawTheory},
          {"matched", "--matched CURVE[=LEVEL,...], --window, --by, --metrics",
           false, DrawMatched},
      };
  return *kinds;
}

std::vector<std::string> FigureKindNames() {
  std::vector<std::string> names = {"all"};
  for (const FigureKind& k : FigureKinds()) names.emplace_back(k.name);
  return names;
}

const FigureKind* FindFigureKind(std::string_view name) {
  for (const FigureKind& k : FigureKinds())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace qkov::client
