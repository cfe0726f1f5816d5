// `qkov plot`'s figures of a task's own curves, drawn from the description
// its package gives in the task table (common/task_info.h, CurveFigure):
// the client knows how to draw such a figure, never which task has one.
// The dashboard draws the same description (server/dashboard/figures.js).
#ifndef QKOV_CLIENT_CURVE_FIGURES_H_
#define QKOV_CLIENT_CURVE_FIGURES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/task_info.h"

namespace qkov::client {

// One finished trial's line in each panel of a figure.
struct CurveLine {
  double r = 0;           // its lr_ratio, the line's label
  std::vector<double> x;  // as reported (the figure's transform is drawing's)
  std::vector<std::vector<double>> y;  // one per panel, paired with x
};

// A trial's curves by name, each as step -> value.
using CurvesByStep = std::map<std::string, std::map<int64_t, double>>;

// The figure's line of one trial: the steps at which it reported the x
// curve and every panel's y curve, in step order.
CurveLine PairByStep(const CurveFigure& figure, double r,
                     const CurvesByStep& curves);

// A trained sweep's arm on a figure with overlay_matched: its
// distinct-token attention where its training loss first reaches each
// level, mean over seeds (the matched values of `qkov results --matched`).
struct TrainedArm {
  std::string label;              // "CACO r=20"
  std::vector<double> loss;       // the levels its trials reached
  std::vector<double> attention;  // the mean there
};

// Writes OUT.dat (one block per line: x as drawn, then each panel's y; then
// one block per arm: loss, attention), OUT.gp, OUT.png and OUT.svg: the
// panels `figure.columns` to a row, one line per element of `lines` in
// each, the arms dashed on the first panel. FAILED_PRECONDITION when there
// is no line.
absl::Status PlotCurveFigure(const CurveFigure& figure,
                             const std::vector<CurveLine>& lines,
                             const std::vector<TrainedArm>& arms,
                             const std::string& out_base);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_CURVE_FIGURES_H_
