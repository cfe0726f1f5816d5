// The paper's attention and faithfulness metrics on the synthetic task.
// Definitions, with the paper's source for each: docs/metrics.md.
#ifndef QKOV_WORKER_TRAINING_METRICS_H_
#define QKOV_WORKER_TRAINING_METRICS_H_

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "worker/training/config.h"
#include "worker/training/model.h"
#include "worker/training/synthetic_task.h"

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

// Attention mass on distinct (class-specific, id >= num_common) tokens, per
// example. attention [B, T], tokens [B, T] -> [B].
torch::Tensor DistinctTokenAttention(const torch::Tensor& attention,
                                     const torch::Tensor& tokens,
                                     int num_common);

// Mean over examples of (max attention on a distinct token - min attention on
// a common token); examples without a distinct token are left out.
double Separability(const torch::Tensor& attention, const torch::Tensor& tokens,
                    int num_common);

// 2-D histogram in percent of examples. Bins are [e_i, e_{i+1}) except the
// last, which is closed (numpy.histogram2d); values outside the edges are
// not counted.
Heatmap DtapHeatmap(const std::vector<double>& attention,
                    const std::vector<double>& probability,
                    const std::vector<double>& attention_edges,
                    const std::vector<double>& probability_edges);

struct Evaluation {
  std::map<std::string, double> scalars;
  std::vector<Heatmap> heatmaps;
};

// Final evaluation of `model` on `batch` (held-out examples): accuracy, loss,
// gold-label probability, distinct-token attention, separability, AC, ACMC,
// comprehensiveness and sufficiency at options.top_k_percent, DTAP heatmap.
Evaluation Evaluate(AttentionModel& model, const SyntheticTask& task,
                    const Batch& batch, const EvalOptions& options);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_METRICS_H_
