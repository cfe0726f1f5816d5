// Figures with gnuplot (Debian's gnuplot-nox; docs/dependencies.md says why):
// each plot writes NAME.dat (the exact numbers drawn, for re-plotting),
// NAME.gp (the gnuplot script), NAME.png and NAME.svg.
#ifndef QKOV_CLIENT_PLOT_H_
#define QKOV_CLIENT_PLOT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/aggregate.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::client {

// A metric against eta_QK/eta_OV (log axis), one series per
// parameterization, mean over seeds with its 95% confidence band.
absl::Status PlotRatio(const std::vector<qkov::v1::ResultRow>& rows,
                       const std::string& metric, const std::string& out_base);

// DTAP heatmaps, mean over seeds: one panel per (parameterization, ratio),
// parameterizations in rows, ratios in columns, the paper's colour scale
// (coolwarm, 5..70 %), each cell labelled with its value.
absl::Status PlotDtapGrid(const std::vector<qkov::v1::Trial>& trials,
                          const std::string& out_base);

// Learning curves: `metric` against step, one series per
// (parameterization, ratio), mean over seeds at each step.
struct Curve {
  std::string parameterization;
  double lr_ratio;
  std::map<int64_t, std::vector<double>> by_step;
};
absl::Status PlotCurves(const std::vector<Curve>& curves,
                        const std::string& metric, const std::string& out_base);

// Theory curves (docs/paper.md §4): attention alpha against the loss at which
// the reduced gradient flow first reaches it, one curve per r; with the trained
// models' (final loss, distinct-token attention) overlaid as labelled points,
// mean over seeds per (parameterization, ratio).
struct TheoryCurve {
  double r;
  std::vector<double> loss;
  std::vector<double> alpha;
};
struct TrainedPoint {
  std::string label;
  double loss;
  double attention;
};
absl::Status PlotTheory(const std::vector<TheoryCurve>& curves,
                        const std::vector<TrainedPoint>& points,
                        const std::string& out_base);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_PLOT_H_
