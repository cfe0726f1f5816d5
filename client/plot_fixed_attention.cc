// qkov plot's figure of the fixed-attention task (the paper's Fig. 3;
// client/plot.h).
#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/gnuplot.h"
#include "client/plot.h"

namespace qkov::client {

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

}  // namespace qkov::client
