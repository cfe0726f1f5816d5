#include "client/curve_figures.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/gnuplot.h"

namespace qkov::client {
namespace {

double DrawnX(const CurveFigure& figure, double x) {
  return figure.x_log10_1p ? std::log10(1 + x) : x;
}

absl::Status WriteData(const CurveFigure& figure,
                       const std::vector<CurveLine>& lines,
                       const std::vector<TrainedArm>& arms,
                       const std::string& path) {
  std::ofstream dat(path);
  std::vector<std::string> columns = {
      figure.x_log10_1p ? absl::StrCat("log10(1+", figure.x, ")") : figure.x};
  for (const CurvePanel& p : figure.panels) columns.push_back(p.y);
  dat << "# one block per r: " << absl::StrJoin(columns, " ");
  if (!arms.empty())
    dat << "; then one per trained arm: matched training loss, "
           "distinct-token attention there";
  dat << "\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const CurveLine& line = lines[i];
    if (i > 0) dat << "\n\n";
    dat << absl::StrFormat("# r = %.6g\n", line.r);
    for (size_t k = 0; k < line.x.size(); ++k) {
      dat << absl::StrFormat("%.10g", DrawnX(figure, line.x[k]));
      for (const std::vector<double>& y : line.y)
        dat << absl::StrFormat(" %.10g", y[k]);
      dat << "\n";
    }
  }
  for (const TrainedArm& arm : arms) {
    dat << "\n\n# trained " << arm.label << "\n";
    for (size_t k = 0; k < arm.loss.size() && k < arm.attention.size(); ++k)
      dat << absl::StrFormat("%.10g %.10g\n", arm.loss[k], arm.attention[k]);
  }
  dat.close();
  if (!dat) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The gnuplot `plot` command of panel `p`: one line per r, and on the first
// panel the trained arms.
std::string PanelPlot(const std::vector<CurveLine>& lines,
                      const std::vector<TrainedArm>& arms, size_t p) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < lines.size(); ++i)
    parts.push_back(absl::StrFormat(
        "datafile index %d using 1:%d with lines lw 2 title 'r = %.4g'", i,
        p + 2, lines[i].r));
  if (p == 0) {
    for (size_t a = 0; a < arms.size(); ++a)
      parts.push_back(absl::StrFormat(
          "datafile index %d using 1:2 with linespoints dt 2 pt 7 ps 1 title "
          "%s",
          lines.size() + a, GnuplotQuoted("trained " + arms[a].label)));
  }
  return absl::StrCat("plot ", absl::StrJoin(parts, ", "), "\n");
}

}  // namespace

CurveLine PairByStep(const CurveFigure& figure, double r,
                     const CurvesByStep& curves) {
  CurveLine line;
  line.r = r;
  line.y.resize(figure.panels.size());
  auto x = curves.find(figure.x);
  if (x == curves.end()) return line;
  std::vector<const std::map<int64_t, double>*> ys;
  for (const CurvePanel& p : figure.panels) {
    auto y = curves.find(p.y);
    if (y == curves.end()) return line;
    ys.push_back(&y->second);
  }
  for (const auto& [step, value] : x->second) {
    std::vector<double> at;
    for (const auto* y : ys) {
      auto v = y->find(step);
      if (v == y->end()) break;
      at.push_back(v->second);
    }
    if (at.size() != ys.size()) continue;
    line.x.push_back(value);
    for (size_t p = 0; p < at.size(); ++p) line.y[p].push_back(at[p]);
  }
  return line;
}

absl::Status PlotCurveFigure(const CurveFigure& figure,
                             const std::vector<CurveLine>& lines,
                             const std::vector<TrainedArm>& arms,
                             const std::string& out_base) {
  if (lines.empty())
    return absl::FailedPreconditionError(
        absl::StrCat("no finished trials to draw ", figure.name, " from"));
  if (absl::Status s = WriteData(figure, lines, arms, out_base + ".dat");
      !s.ok())
    return s;
  const size_t panels = figure.panels.size();
  const size_t columns = std::min<size_t>(figure.columns, panels);
  const size_t rows = (panels + columns - 1) / columns;
  std::string body =
      panels > 1
          ? absl::StrFormat("set multiplot layout %d,%d title %s\n", rows,
                            columns, GnuplotQuoted(figure.title))
          : absl::StrCat("set title ", GnuplotQuoted(figure.title), "\n");
  absl::StrAppend(&body, "set grid\nset format y '%g'\n",
                  arms.empty() ? "set key top left font ',9'\n"
                               : "set key outside right top\n",
                  "set xlabel ", GnuplotQuoted(figure.x_label), "\n");
  if (figure.log_x) body += "set logscale x\n";
  if (figure.reverse_x) body += "set xrange [*:*] reverse\n";
  for (size_t p = 0; p < panels; ++p) {
    const CurvePanel& panel = figure.panels[p];
    absl::StrAppend(&body, "set ylabel ", GnuplotQuoted(panel.label), "\n",
                    panel.log_y ? "set logscale y\n" : "unset logscale y\n",
                    PanelPlot(lines, arms, p));
  }
  if (panels > 1) body += "unset multiplot\n";
  if (panels == 1) return RunGnuplot(out_base, body);
  return RunGnuplot(out_base, body, std::max<int>(1300, 500 * columns),
                    rows == 1 ? 550 : 450 * static_cast<int>(rows));
}

}  // namespace qkov::client
