// A 2-D histogram over examples, as every task reports its DTAP grid
// (distinct- or task-relevant-token attention against gold probability;
// docs/metrics.md, "DTAP").
#ifndef QKOV_WORKER_TRAINING_HEATMAP_H_
#define QKOV_WORKER_TRAINING_HEATMAP_H_

#include <string>
#include <vector>

namespace qkov::training {

struct Heatmap {
  std::string name;
  std::string x_label;
  std::string y_label;
  std::vector<double> x_edges;
  std::vector<double> y_edges;
  // Row-major: values[row * (x_edges.size() - 1) + col], row = y bin.
  std::vector<double> values;  // percent of examples
};

// 2-D histogram in percent of examples. Bins are [e_i, e_{i+1}) except the
// last, which is closed (numpy.histogram2d); values outside the edges are
// not counted.
Heatmap DtapHeatmap(const std::vector<double>& attention,
                    const std::vector<double>& probability,
                    const std::vector<double>& attention_edges,
                    const std::vector<double>& probability_edges);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_HEATMAP_H_
