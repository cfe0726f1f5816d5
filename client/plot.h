// Figures with gnuplot (Debian's gnuplot-nox; docs/dependencies.md says why):
// each plot writes NAME.dat (the exact numbers drawn, for re-plotting),
// NAME.gp (the gnuplot script), NAME.png and NAME.svg.
#ifndef QKOV_CLIENT_PLOT_H_
#define QKOV_CLIENT_PLOT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/matched_results.h"
#include "common/aggregate.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::client {

// A metric against eta_QK/eta_OV (log axis), one series per
// parameterization, mean over seeds with its 95% confidence band.
absl::Status PlotRatio(const std::vector<qkov::v1::ResultRow>& rows,
                       const std::string& metric, const std::string& out_base);

// An adaptive sweep's ratio searches (docs/adaptive.md): each probe's seed
// mean of the searched metric against eta_QK/eta_OV (log axis) with its 95%
// confidence interval, one series per search, the target as a dashed line
// and each bracket's ends as dotted lines.
absl::Status PlotSearch(const qkov::v1::Sweep& sweep,
                        const std::string& out_base);
// DTAP heatmaps, mean over seeds: one panel per (parameterization, ratio),
// parameterizations in rows, ratios in columns, the paper's colour scale
// (coolwarm, 5..70 %), each cell labelled with its value.
absl::Status PlotDtapGrid(const std::vector<qkov::v1::Trial>& trials,
                          const std::string& out_base);

// The matched comparison (client/matched_results.h): metric `m` of the
// table at each level of the reference, one series per arm, mean over the
// trials that reach the level with its 95% confidence band; the experiment's
// counterpart of the ODE's panel in Fig. 4. A loss reference runs from high
// to low levels, left to right (training's direction).
absl::Status PlotMatched(const MatchedTable& table, size_t m,
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

// Fig. 3 (docs/paper.md §3): the fixed-attention task's final loss against
// the attention mass alpha, one series per parameterization (collapsed vs
// factorized OV), mean over seeds (log y); beside it the slope
// -(L(alpha_{i+1}) - L(alpha_i)) / (alpha_{i+1} - alpha_i) between adjacent
// alphas, the paper's (L(a) - L(a + 0.005)) / 0.005 on the sweep's grid.
absl::Status PlotFixedAttention(const std::vector<qkov::v1::ResultRow>& rows,
                                const std::string& out_base);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_PLOT_H_
