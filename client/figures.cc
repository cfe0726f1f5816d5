#include "client/figures.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/curve_figures.h"
#include "client/matched_results.h"
#include "client/plot.h"
#include "common/grpc_status.h"
#include "common/task_kind.h"
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

// The trained sweep named by --overlay at matched training loss (trailing
// mean of 5 reports, chosen levels), as the dashboard overlays it.
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

// The sweep's task's curve figures of kind `in.kind` (the ODE's Fig. 4),
// drawn from their description in the task table: one fetch of every
// curve they name per finished trial, lines in the order of lr_ratio.
absl::Status DrawCurveFigures(const FigureInputs& in,
                              std::vector<std::string>* written) {
  const TaskInfo& task = TaskOrDefault(
      in.rows.empty() ? v1::TASK_KIND_UNSPECIFIED
                      : in.rows.front().config().training().task());
  std::vector<const CurveFigure*> figures;
  std::set<std::string> names;
  for (const CurveFigure& f : task.curve_figures) {
    if (f.kind != in.kind) continue;
    figures.push_back(&f);
    names.insert(f.x);
    for (const CurvePanel& p : f.panels) names.insert(p.y);
  }
  if (figures.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "sweep '", TerminalSafe(in.args.sweep), "' (task ", task.name,
        ") has no figure of kind '", std::string(in.kind), "'"));
  std::vector<std::pair<double, CurvesByStep>> trials;
  for (const auto& r : in.rows) {
    if (r.state() != v1::DONE) continue;
    absl::StatusOr<v1::GetTrialMetricsResponse> m =
        FetchCurves(in.conn, r.trial_id(), {names.begin(), names.end()});
    if (!m.ok()) return m.status();
    CurvesByStep curves;
    for (const auto& series : m->series()) {
      auto& by_step = curves[series.name()];
      for (int i = 0; i < series.steps_size() && i < series.values_size(); ++i)
        by_step[series.steps(i)] = series.values(i);
    }
    trials.emplace_back(r.config().lr_ratio(), std::move(curves));
  }
  std::stable_sort(
      trials.begin(), trials.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const CurveFigure* f : figures) {
    std::vector<CurveLine> lines;
    for (const auto& [ratio, curves] : trials)
      lines.push_back(PairByStep(*f, ratio, curves));
    std::vector<TrainedArm> arms;
    if (f->overlay_matched) {
      absl::StatusOr<std::vector<TrainedArm>> overlay = OverlayArms(in);
      if (!overlay.ok()) return overlay.status();
      arms = *std::move(overlay);
    }
    const std::string base = Base(in, f->name);
    if (absl::Status s = PlotCurveFigure(*f, lines, arms, base); !s.ok())
      return s;
    written->push_back(base);
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<FigureKind>& FigureKinds() {
  static std::vector<FigureKind>* const kinds = new std::vector<FigureKind>{
      {"ratio", "the sweep's rows; --metrics (default: the task's)", true,
       DrawRatio},
      {"search", "an adaptive sweep (docs/adaptive.md)", false, DrawSearch},
      {"dtap", "finished trials' attention heatmaps", true, DrawDtap},
      {"curves", "finished trials' curves; --metrics (default: the task's)",
       true, DrawCurves},
      {"fixed", "a fixed-attention sweep's losses", true, DrawFixed},
      {"matched", "--matched CURVE[=LEVEL,...], --window, --by, --metrics",
       false, DrawMatched},
  };
  static const bool tasks_added = [] {
    // Then each kind of the tasks' own figures, in the task table's order.
    for (const TaskInfo& task : Tasks()) {
      for (const CurveFigure& f : task.curve_figures) {
        const bool seen =
            std::any_of(kinds->begin(), kinds->end(),
                        [&](const FigureKind& k) { return k.name == f.kind; });
        if (!seen)
          kinds->push_back({f.kind,
                            "the task's own figures (its package's "
                            "curve_figures); --overlay a trained sweep",
                            true, DrawCurveFigures});
      }
    }
    return true;
  }();
  (void)tasks_added;
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
