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
#include "common/status_macros.h"

namespace qkov::client {
namespace {

// The paper's colour scale (seaborn coolwarm), as a gnuplot palette.
constexpr char kCoolwarm[] =
    "set palette defined (0 '#3b4cc0', 0.25 '#7b9ff9', 0.5 '#dddddd', 0.75 "
    "'#f49a7b', 1 '#b40426')\n";

// `s` as a gnuplot single-quoted string: a quote is doubled (gnuplot's only
// escape there) and control characters, which would end the command, become
// '?'. Every string from a path or from the server reaches the script
// through this.
std::string Quoted(absl::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs gnuplot on the script with an argument vector (no shell), its
// standard error into OUT.gnuplot.log.
absl::Status Gnuplot(const std::string& script_path, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::string program = "gnuplot";
  std::vector<char*> argv = {program.data(),
                             const_cast<char*>(script_path.c_str()), nullptr};
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run gnuplot (", std::strerror(rc),
                     "); install gnuplot-nox (deploy/install-deps.sh)"));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return absl::InternalError(absl::StrCat("gnuplot failed; see ", log));
  return absl::OkStatus();
}

// Writes OUT.gp and runs it into OUT.png and OUT.svg. `body` reads its data
// as `datafile` (set here to OUT.dat).
absl::Status RunGnuplot(const std::string& out_base, const std::string& body,
                        int width = 1000, int height = 650) {
  const std::string script_path = out_base + ".gp";
  {
    std::ofstream gp(script_path);
    if (!gp)
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", script_path));
    gp << "datafile = " << Quoted(out_base + ".dat") << "\n";
    for (const std::string& term :
         {absl::StrFormat("pngcairo size %d,%d noenhanced font ',11'", width,
                          height),
          absl::StrFormat("svg size %d,%d noenhanced", width, height)}) {
      const bool png = term.rfind("png", 0) == 0;
      gp << "set terminal " << term << "\n";
      gp << "set output " << Quoted(out_base + (png ? ".png" : ".svg")) << "\n";
      gp << body << "\n";
      gp << "unset output\nreset\n";
    }
  }
  const std::string log = out_base + ".gnuplot.log";
  RETURN_IF_ERROR(Gnuplot(script_path, log));
  std::ifstream in(log);
  if (in.peek() == std::ifstream::traits_type::eof()) std::remove(log.c_str());
  return absl::OkStatus();
}

std::string Label(const std::string& metric) {
  if (metric == "distinct_attention") return "distinct-token attention";
  if (metric == "ac") return "AC (attention confidence)";
  if (metric == "acmc") return "ACMC";
  return metric;
}

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
        i, x, low, high, i + 1, i, x, mean, i + 1, Quoted(series[i])));
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
      Quoted(Label(metric)), "\n",
      absl::StrFormat("set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
                      xmin / 1.3, xmax * 1.3, ymin - pad, ymax + pad),
      "set key outside right top\nset grid\nset title ",
      Quoted(absl::StrCat(Label(metric),
                          " vs eta_QK/eta_OV (mean over seeds, 95% CI)")),
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
      Quoted(absl::StrCat(Label(table.reference), " (matched level)")),
      "\nset ylabel ", Quoted(Label(metric)), "\n",
      // A range given high to low runs the axis that way.
      absl::StrFormat("set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
                      reverse ? x_high : x_low, reverse ? x_low : x_high,
                      ymin - pad, ymax + pad),
      "set key outside right top\nset grid\nset title ",
      Quoted(absl::StrCat(Label(metric), " at matched ", Label(table.reference),
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
      Quoted(Label(search.metric())), "\n",
      absl::StrFormat("set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
                      search.lo() / 1.3, search.hi() * 1.3, ymin - pad,
                      ymax + pad),
      absl::StrJoin(arrows, ""), "set key outside right top\nset grid\n",
      "set title ",
      Quoted(absl::StrFormat("ratio search: %s %s %g (probes: seed mean, 95%% "
                             "CI; dotted: the bracket)",
                             Label(search.metric()), search.op(),
                             search.target())),
      "\nplot ");
  std::vector<std::string> parts;
  for (size_t i = 0; i < titles.size(); ++i) {
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2:3:4 with yerrorlines lw 2 pt 7 lc %d "
        "title %s",
        i, i + 1, Quoted(titles[i])));
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
          Quoted(absl::StrFormat("%s, ratio %.4g", params[p], ratios[r])),
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
      "set xlabel 'step'\nset ylabel ", Quoted(Label(metric)), "\n",
      positive && metric.find("loss") != std::string::npos ? "set logscale y\n"
                                                           : "",
      "set key outside right top\nset grid\nset title ",
      Quoted(absl::StrCat("learning curves: ", Label(metric),
                          " (mean over seeds)")),
      "\nplot ");
  std::vector<std::string> parts;
  for (size_t i = 0; i < curves.size(); ++i) {
    parts.push_back(
        absl::StrFormat("datafile index %d using 1:2 with lines lw 2 title %s",
                        i, Quoted(titles[i])));
  }
  body += absl::StrJoin(parts, ", ");
  return RunGnuplot(out_base, body);
}

absl::Status PlotTheory(const std::vector<TheoryCurve>& curves,
                        const std::vector<TrainedArm>& arms,
                        const std::string& out_base) {
  if (curves.empty())
    return absl::FailedPreconditionError("no theory curves to plot");
  std::ofstream dat(out_base + ".dat");
  dat << "# blocks: one per r (loss alpha), then one per trained arm (matched "
         "training loss, distinct-token attention there)\n";
  double lmin = 1;
  for (size_t i = 0; i < curves.size(); ++i) {
    if (i > 0) dat << "\n\n";
    dat << absl::StrFormat("# r = %.6g\n", curves[i].r);
    for (size_t k = 0; k < curves[i].loss.size() && k < curves[i].alpha.size();
         ++k) {
      dat << absl::StrFormat("%.10g %.10g\n", curves[i].loss[k],
                             curves[i].alpha[k]);
      if (curves[i].loss[k] > 0) lmin = std::min(lmin, curves[i].loss[k]);
    }
  }
  for (const TrainedArm& arm : arms) {
    dat << "\n\n# trained " << arm.label << "\n";
    for (size_t k = 0; k < arm.loss.size() && k < arm.attention.size(); ++k) {
      dat << absl::StrFormat("%.10g %.10g\n", arm.loss[k], arm.attention[k]);
      if (arm.loss[k] > 0) lmin = std::min(lmin, arm.loss[k]);
    }
  }
  dat.close();
  std::string body = absl::StrCat(
      "set logscale x\nset xlabel 'loss (decreasing ->)'\nset ylabel "
      "'attention on informative tokens (alpha)'\n",
      absl::StrFormat("set xrange [1.5:%.10g] reverse\nset yrange [0:1.05]\n",
                      lmin / 1.5),
      "set key outside right top\nset grid\nset title 'theory: alpha at the "
      "loss reached, by r = eta_QK/eta_OV",
      arms.empty() ? "" : "; dashed: trained, at matched loss", "'\nplot ");
  std::vector<std::string> parts;
  for (size_t i = 0; i < curves.size(); ++i) {
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2 with lines lw 2 title 'r = %.4g'", i,
        curves[i].r));
  }
  for (size_t a = 0; a < arms.size(); ++a) {
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2 with linespoints dt 2 pt 7 ps 1 title "
        "%s",
        curves.size() + a, Quoted("trained " + arms[a].label)));
  }
  body += absl::StrJoin(parts, ", ");
  return RunGnuplot(out_base, body);
}

namespace {

// "collapsed OV (CACO)" etc.: what the fixed-attention task trains is the OV
// circuit, so its parameterization is read by its OV half.
std::string OvLabel(const std::string& parameterization) {
  if (parameterization.size() == 4 && parameterization.substr(2) == "CO")
    return absl::StrCat("collapsed OV (", parameterization, ")");
  if (parameterization.size() == 4 && parameterization.substr(2) == "FO")
    return absl::StrCat("factorized OV (", parameterization, ")");
  return parameterization;
}

// One gnuplot `plot` command: column `column` of each r's block, one line
// per r.
std::string PlotPerR(const std::vector<double>& rs, const std::string& column) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < rs.size(); ++i)
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:%s with lines lw 2 title 'r = %.4g'", i,
        column, rs[i]));
  return absl::StrCat("plot ", absl::StrJoin(parts, ", "), "\n");
}

}  // namespace

absl::Status PlotFixedAttention(const std::vector<qkov::v1::ResultRow>& rows,
                                const std::string& out_base) {
  absl::StatusOr<std::vector<Group>> groups =
      Aggregate(rows, {"parameterization", "alpha"}, {"loss"}, {"state=done"});
  if (!groups.ok()) return groups.status();
  std::map<std::string, std::vector<std::pair<double, double>>> series;
  for (const Group& g : *groups) {
    double alpha;
    if (g.keys[1].empty() || !absl::SimpleAtod(g.keys[1], &alpha)) continue;
    const Summary& s = g.metrics.at("loss");
    if (s.n > 0) series[g.keys[0]].push_back({alpha, s.mean});
  }
  if (series.empty())
    return absl::FailedPreconditionError(
        "no finished fixed-attention trials to plot");
  std::ofstream dat(out_base + ".dat");
  dat << "# index 2k: alpha loss (mean over seeds) of series k; index 2k+1: "
         "alpha_mid slope = -(dL/dalpha)\n";
  std::vector<std::string> titles;
  bool first = true;
  for (auto& [param, points] : series) {
    std::sort(points.begin(), points.end());
    if (!first) dat << "\n\n";
    first = false;
    dat << "# " << param << "\n";
    for (const auto& [a, l] : points)
      dat << absl::StrFormat("%.10g %.10g\n", a, l);
    dat << "\n\n# " << param << " slope\n";
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      const double da = points[i + 1].first - points[i].first;
      dat << absl::StrFormat("%.10g %.10g\n",
                             (points[i].first + points[i + 1].first) / 2,
                             -(points[i + 1].second - points[i].second) / da);
    }
    titles.push_back(OvLabel(param));
  }
  dat.close();
  std::string body =
      "set multiplot layout 1,2 title 'Fig. 3: attention fixed at alpha, "
      "only OV trained'\nset grid\nset key top right\nset logscale y\n"
      "set xlabel 'alpha (attention mass on the distinct tokens)'\n"
      "set ylabel 'final loss (mean over seeds)'\nplot ";
  std::vector<std::string> parts;
  for (size_t i = 0; i < titles.size(); ++i)
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2 with linespoints lw 2 pt 7 title %s",
        2 * i, Quoted(titles[i])));
  body += absl::StrJoin(parts, ", ");
  body +=
      "\nset ylabel '-dL/dalpha between adjacent alphas'\n"
      "set xlabel 'alpha (midpoint)'\nplot ";
  parts.clear();
  for (size_t i = 0; i < titles.size(); ++i)
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2 with linespoints lw 2 pt 7 title %s",
        2 * i + 1, Quoted(titles[i])));
  body += absl::StrJoin(parts, ", ");
  body += "\nunset multiplot";
  return RunGnuplot(out_base, body, 1300, 550);
}

absl::Status PlotTheoryTime(const std::vector<TheoryTrajectory>& curves,
                            const std::string& out_base) {
  if (curves.empty())
    return absl::FailedPreconditionError("no theory trajectories to plot");
  std::ofstream dat(out_base + ".dat");
  dat << "# one block per r: log10(1+tau) mu_ov mu_qk loss alpha\n";
  std::vector<double> rs;
  for (const TheoryTrajectory& c : curves) rs.push_back(c.r);
  for (size_t i = 0; i < curves.size(); ++i) {
    const TheoryTrajectory& c = curves[i];
    if (i > 0) dat << "\n\n";
    dat << absl::StrFormat("# r = %.6g\n", c.r);
    const size_t n = std::min({c.tau.size(), c.mu_ov.size(), c.mu_qk.size(),
                               c.loss.size(), c.alpha.size()});
    for (size_t k = 0; k < n; ++k)
      dat << absl::StrFormat("%.10g %.10g %.10g %.10g %.10g\n",
                             std::log10(1 + c.tau[k]), c.mu_ov[k], c.mu_qk[k],
                             c.loss[k], c.alpha[k]);
  }
  dat.close();
  std::string body =
      "set multiplot layout 2,2 title 'Fig. 4: the reduced gradient flow, by "
      "r = eta_QK/eta_OV'\nset grid\nset key top left font ',9'\n"
      "set xlabel 'log10(1 + tau)'\nset format y '%g'\n";
  const char* panels[][2] = {{"2", "mu_OV"},
                             {"3", "mu_QK"},
                             {"4", "loss"},
                             {"5", "alpha (attention on informative tokens)"}};
  for (const auto& [column, label] : panels) {
    body += absl::StrCat("set ylabel ", Quoted(label), "\n");
    body +=
        std::string(column) == "4" ? "set logscale y\n" : "unset logscale y\n";
    body += PlotPerR(rs, column);
  }
  body += "unset multiplot";
  return RunGnuplot(out_base, body, 1300, 900);
}

absl::Status PlotTheoryThresholds(const std::vector<TheoryThresholds>& curves,
                                  const std::string& out_base) {
  if (curves.empty())
    return absl::FailedPreconditionError("no theory thresholds to plot");
  std::ofstream dat(out_base + ".dat");
  dat << "# one block per r: loss_threshold mu_ov mu_qk alpha (at the first "
         "time the loss falls below the threshold)\n";
  std::vector<double> rs;
  for (const TheoryThresholds& c : curves) rs.push_back(c.r);
  for (size_t i = 0; i < curves.size(); ++i) {
    const TheoryThresholds& c = curves[i];
    if (i > 0) dat << "\n\n";
    dat << absl::StrFormat("# r = %.6g\n", c.r);
    const size_t n = std::min(
        {c.loss.size(), c.mu_ov.size(), c.mu_qk.size(), c.alpha.size()});
    for (size_t k = 0; k < n; ++k)
      dat << absl::StrFormat("%.10g %.10g %.10g %.10g\n", c.loss[k], c.mu_ov[k],
                             c.mu_qk[k], c.alpha[k]);
  }
  dat.close();
  std::string body =
      "set multiplot layout 1,3 title 'Fig. 4: at each loss threshold, by r "
      "= eta_QK/eta_OV'\nset grid\nset key top left font ',9'\n"
      "set logscale x\nset xrange [*:*] reverse\n"
      "set xlabel 'loss threshold (decreasing ->)'\n";
  const char* panels[][2] = {{"2", "mu_OV"}, {"3", "mu_QK"}, {"4", "alpha"}};
  for (const auto& [column, label] : panels) {
    body += absl::StrCat("set ylabel ", Quoted(label), "\n");
    body += PlotPerR(rs, column);
  }
  body += "unset multiplot";
  return RunGnuplot(out_base, body, 1500, 550);
}

}  // namespace qkov::client
