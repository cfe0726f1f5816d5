// qkov plot's figures of the theory: the ODE's attention at matched loss
// with trained arms overlaid, the fixed-attention task, the ODE against
// time and at loss thresholds (client/plot.h).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/gnuplot.h"
#include "client/plot.h"

namespace qkov::client {

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
        curves.size() + a, GnuplotQuoted("trained " + arms[a].label)));
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
        2 * i, GnuplotQuoted(titles[i])));
  body += absl::StrJoin(parts, ", ");
  body +=
      "\nset ylabel '-dL/dalpha between adjacent alphas'\n"
      "set xlabel 'alpha (midpoint)'\nplot ";
  parts.clear();
  for (size_t i = 0; i < titles.size(); ++i)
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:2 with linespoints lw 2 pt 7 title %s",
        2 * i + 1, GnuplotQuoted(titles[i])));
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
    body += absl::StrCat("set ylabel ", GnuplotQuoted(label), "\n");
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
    body += absl::StrCat("set ylabel ", GnuplotQuoted(label), "\n");
    body += PlotPerR(rs, column);
  }
  body += "unset multiplot";
  return RunGnuplot(out_base, body, 1500, 550);
}

}  // namespace qkov::client
