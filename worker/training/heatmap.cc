#include "worker/training/heatmap.h"

#include <algorithm>

namespace qkov::training {
namespace {

// Index of the bin holding x, or -1 when outside.
int BinOf(double x, const std::vector<double>& edges) {
  const int n = static_cast<int>(edges.size()) - 1;
  if (!(x >= edges.front()) || x > edges.back()) return -1;
  if (x == edges.back()) return n - 1;
  const int i =
      static_cast<int>(std::upper_bound(edges.begin(), edges.end(), x) -
                       edges.begin()) -
      1;
  return std::clamp(i, 0, n - 1);
}

}  // namespace

Heatmap DtapHeatmap(const std::vector<double>& attention,
                    const std::vector<double>& probability,
                    const std::vector<double>& attention_edges,
                    const std::vector<double>& probability_edges) {
  Heatmap h;
  h.name = "dtap";
  h.x_label = "distinct-token attention";
  h.y_label = "gold-label probability";
  h.x_edges = attention_edges;
  h.y_edges = probability_edges;
  const int cols = static_cast<int>(attention_edges.size()) - 1;
  const int rows = static_cast<int>(probability_edges.size()) - 1;
  h.values.assign(static_cast<size_t>(rows) * cols, 0.0);
  const size_t n = attention.size();
  if (n == 0) return h;
  for (size_t i = 0; i < n; ++i) {
    const int c = BinOf(attention[i], attention_edges);
    const int r = BinOf(probability[i], probability_edges);
    if (c >= 0 && r >= 0) h.values[static_cast<size_t>(r) * cols + c] += 1.0;
  }
  for (double& v : h.values) v = 100.0 * v / static_cast<double>(n);
  return h;
}

}  // namespace qkov::training
