#include "client/plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "client/gnuplot.h"
#include "common/status_macros.h"

namespace qkov::client {
namespace {

// The paper's colour scale (seaborn coolwarm), as a gnuplot palette.
constexpr char kCoolwarm[] =
    "set palette defined (0 '#3b4cc0', 0.25 '#7b9ff9', 0.5 '#dddddd', 0.75 "
    "'#f49a7b', 1 '#b40426')\n";

// The plot commands of one line per data block (`series`, in block order)
// with its confidence band: x, mean, band low and high in those columns.
std::string MeanWithBand(const std::vector<std::string>& series, int x,
                         int mean, int low, int high) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < series.size(); ++i) {
    parts.push_back(absl::StrFormat(
        "datafile index %d using %d:%d:%d with filledcurves fs transparent "
        "solid 0.2 lc %d notitle, "
        "'' index %d using %d:%d with linespoints lw 2 pt 7 lc %d title %s",
        i, x, low, high, i + 1, i, x, mean, i + 1, GnuplotQuoted(series[i])));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::Status PlotRatio(const std::vector<qkov::v1::ResultRow>& rows,
                       const std::string& metric, const std::string& out_base) {
  absl::StatusOr<std::vector<Group>> groups = Aggregate(
      rows, {"parameterization", "lr_ratio"}, {metric}, {"state=done"});
  if (!groups.ok()) return groups.status();
  if (groups->empty())
    return absl::FailedPreconditionError("no finished trials to plot");
  std::ofstream dat(out_base + ".dat");
  dat << "# parameterization lr_ratio mean ci_low ci_high n  (" << metric
      << ", mean over seeds, 95% CI)\n";
  std::vector<std::string> series;
  double xmin = HUGE_VAL, xmax = -HUGE_VAL, ymin = HUGE_VAL, ymax = -HUGE_VAL;
  for (const Group& g : *groups) {
    if (series.empty() || series.back() != g.keys[0]) {
      if (!series.empty()) dat << "\n\n";
      series.push_back(g.keys[0]);
    }
    const Summary& s = g.metrics.at(metric);
    const double ci = std::isnan(s.ci95) ? 0 : s.ci95;
    const double x = std::stod(g.keys[1]);
    dat << absl::StrFormat("%s %.10g %.10g %.10g %.10g %d\n", g.keys[0], x,
                           s.mean, s.mean - ci, s.mean + ci, s.n);
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
    if (!std::isnan(s.mean)) {
      ymin = std::min(ymin, s.mean - ci);
      ymax = std::max(ymax, s.mean + ci);
    }
  }
  dat.close();
  if (!(ymax >= ymin))
    return absl::FailedPreconditionError(
        absl::StrCat("no values of ", metric, " to plot"));
  const double pad = std::max(0.05 * (ymax - ymin), 1e-3);
  std::string body = absl::StrCat(
      "set logscale x\nset xlabel 'eta_QK / eta_OV'\nset ylabel ",
      GnuplotQuoted(MetricLabel(metric)), "\n",
      absl::StrFormat("set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
                      xmin / 1.3, xmax * 1.3, ymin - pad, ymax + pad),
      "set key outside right top\nset grid\nset title ",
      GnuplotQuoted(absl::StrCat(
          MetricLabel(metric), " vs eta_QK/eta_OV (mean over seeds, 95% CI)")),
      "\nplot ");
  body += MeanWithBand(series, 2, 3, 4, 5);
  return RunGnuplot(out_base, body);
}

absl::Status PlotMatched(const MatchedTable& table, size_t m,
                         const std::string& out_base) {
  const std::string& metric = table.metrics[m];
  std::ofstream dat(out_base + ".dat");
  dat << "# level mean ci_low ci_high reached trials  (" << metric << " where "
      << table.reference << ", trailing mean of " << table.window
      << " reports, first reaches the level; mean over the trials that reach "
         "it, 95% CI), one block per arm ("
      << absl::StrJoin(table.by, " ") << ")\n";
  std::vector<std::string> series;
  double xmin = HUGE_VAL, xmax = -HUGE_VAL, ymin = HUGE_VAL, ymax = -HUGE_VAL;
  for (const MatchedGroup& g : table.groups) {
    const std::string arm = absl::StrJoin(g.keys, " ");
    if (series.empty() || series.back() != arm) {
      if (!series.empty()) dat << "\n\n";
      series.push_back(arm);
    }
    const Summary& s = g.metrics[m];
    const double ci = std::isnan(s.ci95) ? 0 : s.ci95;
    dat << absl::StrFormat("%.10g %.10g %.10g %.10g %d %d\n", g.level,
                           g.reached ? s.mean : NAN, s.mean - ci, s.mean + ci,
                           g.reached, g.trials);
    xmin = std::min(xmin, g.level);
    xmax = std::max(xmax, g.level);
    if (g.reached > 0 && !std::isnan(s.mean)) {
      ymin = std::min(ymin, s.mean - ci);
      ymax = std::max(ymax, s.mean + ci);
    }
  }
  dat.close();
  if (!(ymax >= ymin))
    return absl::FailedPreconditionError(
        absl::StrCat("no values of ", metric, " at the matched levels"));
  const double pad = std::max(0.05 * (ymax - ymin), 1e-3);
  const bool log_x = xmin > 0 && xmax / xmin >= 10;
  const double xpad = log_x ? 0 : std::max(0.05 * (xmax - xmin), 1e-6);
  const bool reverse = absl::StrContains(table.reference, "loss");
  const double x_low = log_x ? xmin / 1.3 : xmin - xpad;
  const double x_high = log_x ? xmax * 1.3 : xmax + xpad;
  std::string body = absl::StrCat(
      log_x ? "set logscale x\n" : "", "set xlabel ",
      GnuplotQuoted(
          absl::StrCat(MetricLabel(table.reference), " (matched level)")),
      "\nset ylabel ", GnuplotQuoted(MetricLabel(metric)), "\n",
      // A range given high to low runs the axis that way.
      absl::StrFormat("set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
                      reverse ? x_high : x_low, reverse ? x_low : x_high,
                      ymin - pad, ymax + pad),
      "set key outside right top\nset grid\nset title ",
      GnuplotQuoted(absl::StrCat(MetricLabel(metric), " at matched ",
                                 MetricLabel(table.reference),
                                 " (mean over seeds, 95% CI)")),
      "\nplot ");
  body += MeanWithBand(series, 1, 2, 3, 4);
  return RunGnuplot(out_base, body);
}

absl::Status PlotSearch(const qkov::v1::Sweep& sweep,
                        const std::string& out_base) {
  const qkov::v1::RatioSearch& search = sweep.spec().search();
  std::ofstream dat(out_base + ".dat");
  dat << "# lr_ratio mean ci_low ci_high seeds  (" << search.metric()
      << ", seed mean of each probe, 95% CI), one block per search\n";
  std::vector<std::string> titles, arrows;
  double ymin = search.target(), ymax = search.target();
  for (const qkov::v1::SearchOutcome& o : sweep.searches()) {
    if (!titles.empty()) dat << "\n\n";
    const int lc = static_cast<int>(titles.size()) + 1;
    titles.push_back(
        absl::StrFormat("%s eta_ov=%g: %s",
                        qkov::v1::Parameterization_Name(o.parameterization()),
                        o.eta_ov(), o.state()));
    for (const qkov::v1::SearchProbe& p : o.probes()) {
      const double ci = std::isnan(p.ci95()) ? 0 : p.ci95();
      dat << absl::StrFormat("%.10g %.10g %.10g %.10g %d\n", p.lr_ratio(),
                             p.mean(), p.mean() - ci, p.mean() + ci, p.seeds());
      if (!std::isnan(p.mean())) {
        ymin = std::min(ymin, p.mean() - ci);
        ymax = std::max(ymax, p.mean() + ci);
      }
    }
    if (o.probes_size() == 0) dat << "nan nan nan nan 0\n";
    if (o.state() == "found" || o.state() == "probe_failed") {
      for (double x : {o.below(), o.above()}) {
        arrows.push_back(absl::StrFormat(
            "set arrow from %.10g, graph 0 to %.10g, graph 1 nohead dt 3 lc "
            "%d\n",
            x, x, lc));
      }
    }
  }
  dat.close();
  if (titles.empty())
    return absl::FailedPreconditionError("the sweep has no searches yet");
  const double pad = std::max(0.05 * (ymax - ymin), 1e-3);
  std::string body = absl::StrCat(
      "set logscale x\nset xlabel 'eta_QK / eta_OV'\nset ylabel ",
      GnuplotQuoted(MetricLabel(search.metric())), "\n",
      absl::StrFormat("set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
                      search.lo() / 1.3, search.hi() * 1.3, ymin - pad,
                      ymax + pad),
      absl::StrJoin(arrows, ""), "set key outside right top\nset grid\n",
      "set title ",
      GnuplotQuoted(absl::StrFormat(
          "ratio search: %s %s %g (probes: seed mean, 95%% "
          "CI; dotted: the bracket)",
          MetricLabel(search.metric()), search.op(), search.target())),
      "\nplot ");
  std::vector<std::string> parts;
  for (size_t i = 0; i < titles.size(); ++i) {
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2:3:4 with yerrorlines lw 2 pt 7 lc %d "
        "title %s",
        i, i + 1, GnuplotQuoted(titles[i])));
  }
  parts.push_back(
      absl::StrFormat("%.10g with lines dt 2 lc rgb 'black' "
                      "title 'target'",
                      search.target()));
  body += absl::StrJoin(parts, ", ");
  return RunGnuplot(out_base, body);
}

absl::Status PlotDtapGrid(const std::vector<qkov::v1::Trial>& trials,
                          const std::string& out_base) {
  // (parameterization, ratio) -> summed cells, count.
  std::map<std::pair<std::string, double>, std::pair<std::vector<double>, int>>
      sums;
  const qkov::v1::Heatmap* shape = nullptr;
  for (const auto& t : trials) {
    if (t.state() != qkov::v1::DONE) continue;
    for (const auto& h : t.heatmaps()) {
      if (h.name() != "dtap") continue;
      if (shape == nullptr) shape = &h;
      if (h.values_size() != shape->values_size()) continue;
      auto& [cells, n] =
          sums[{qkov::v1::Parameterization_Name(t.config().parameterization()),
                t.config().lr_ratio()}];
      cells.resize(h.values_size(), 0.0);
      for (int i = 0; i < h.values_size(); ++i) cells[i] += h.values(i);
      ++n;
    }
  }
  if (shape == nullptr)
    return absl::FailedPreconditionError("no DTAP heatmaps to plot");
  std::vector<std::string> params;
  std::set<double> ratio_set;
  for (const auto& [key, v] : sums) {
    if (std::find(params.begin(), params.end(), key.first) == params.end())
      params.push_back(key.first);
    ratio_set.insert(key.second);
  }
  const std::vector<double> ratios(ratio_set.begin(), ratio_set.end());
  const int cols = shape->x_edges_size() - 1, rows = shape->y_edges_size() - 1;
  std::ofstream dat(out_base + ".dat");
  dat << "# blocks: parameterization, lr_ratio; rows: x_bin y_bin percent "
         "(mean over seeds)\n";
  std::vector<std::pair<std::string, double>> panels;
  for (const std::string& p : params) {
    for (double r : ratios) {
      auto it = sums.find({p, r});
      if (it == sums.end()) continue;
      if (!panels.empty()) dat << "\n\n";
      panels.emplace_back(p, r);
      dat << "# " << p << " " << absl::StrFormat("%.10g", r)
          << " n=" << it->second.second << "\n";
      for (int y = 0; y < rows; ++y) {
        for (int x = 0; x < cols; ++x) {
          dat << absl::StrFormat(
              "%d %d %.6f\n", x, y,
              it->second.first[y * cols + x] / it->second.second);
        }
      }
    }
  }
  dat.close();
  std::vector<std::string> xt, yt;
  for (int i = 0; i < cols; ++i)
    xt.push_back(absl::StrFormat("'%.2g-%.2g' %d", shape->x_edges(i),
                                 shape->x_edges(i + 1), i));
  for (int i = 0; i < rows; ++i)
    yt.push_back(absl::StrFormat("'%.2g-%.2g' %d", shape->y_edges(i),
                                 shape->y_edges(i + 1), i));
  std::string body = absl::StrCat(
      kCoolwarm, "set cbrange [5:70]\nset xtics (", absl::StrJoin(xt, ", "),
      ") font ',7'\nset ytics (", absl::StrJoin(yt, ", "), ") font ',7'\n",
      absl::StrFormat("set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\n",
                      cols - 1, rows - 1),
      absl::StrFormat("set multiplot layout %d,%d title 'DTAP: %% of examples "
                      "by distinct-token attention (x) and "
                      "gold-label probability (y), mean over seeds'\n",
                      params.size(), ratios.size()));
  for (size_t p = 0; p < params.size(); ++p) {
    for (size_t r = 0; r < ratios.size(); ++r) {
      auto it = std::find(panels.begin(), panels.end(),
                          std::make_pair(params[p], ratios[r]));
      if (it == panels.end()) {
        body += "set multiplot next\n";
        continue;
      }
      const int index = static_cast<int>(it - panels.begin());
      body += absl::StrFormat(
          "set title %s font ',9'\nunset colorbox\n"
          "plot datafile index %d using 1:2:3 with image notitle, '' index %d "
          "using 1:2:(sprintf('%%.1f',$3)) "
          "with labels font ',7' notitle\n",
          GnuplotQuoted(
              absl::StrFormat("%s, ratio %.4g", params[p], ratios[r])),
          index, index);
    }
  }
  body += "unset multiplot\n";
  return RunGnuplot(out_base, body, 120 + 330 * static_cast<int>(ratios.size()),
                    60 + 230 * static_cast<int>(params.size()));
}

absl::Status PlotCurves(const std::vector<Curve>& curves,
                        const std::string& metric,
                        const std::string& out_base) {
  if (curves.empty()) return absl::FailedPreconditionError("no curves to plot");
  std::ofstream dat(out_base + ".dat");
  dat << "# blocks: parameterization lr_ratio; rows: step mean (" << metric
      << ", mean over seeds)\n";
  std::vector<std::string> titles;
  bool positive = true;
  for (size_t i = 0; i < curves.size(); ++i) {
    if (i > 0) dat << "\n\n";
    titles.push_back(absl::StrFormat(
        "%s ratio %.4g", curves[i].parameterization, curves[i].lr_ratio));
    dat << "# " << titles.back() << "\n";
    for (const auto& [step, values] : curves[i].by_step) {
      const Summary s = Summarize(values);
      if (!(s.mean > 0)) positive = false;
      dat << absl::StrFormat("%d %.10g\n", step, s.mean);
    }
  }
  dat.close();
  std::string body = absl::StrCat(
      "set xlabel 'step'\nset ylabel ", GnuplotQuoted(MetricLabel(metric)),
      "\n",
      positive && metric.find("loss") != std::string::npos ? "set logscale y\n"
                                                           : "",
      "set key outside right top\nset grid\nset title ",
      GnuplotQuoted(absl::StrCat("learning curves: ", MetricLabel(metric),
                                 " (mean over seeds)")),
      "\nplot ");
  std::vector<std::string> parts;
  for (size_t i = 0; i < curves.size(); ++i) {
    parts.push_back(
        absl::StrFormat("datafile index %d using 1:2 with lines lw 2 title %s",
                        i, GnuplotQuoted(titles[i])));
  }
  body += absl::StrJoin(parts, ", ");
  return RunGnuplot(out_base, body);
}

}  // namespace qkov::client
