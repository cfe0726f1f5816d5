// The paper's attention and faithfulness metrics on the synthetic task.
// Definitions, with the paper's source for each: docs/metrics.md.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_METRICS_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_METRICS_H_

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "worker/tasks/synthetic/model.h"
#include "worker/tasks/synthetic/synthetic_task.h"
#include "worker/training/config.h"
#include "worker/training/heatmap.h"

namespace qkov::training {

// Attention mass on distinct (class-specific, id >= num_common) tokens, per
// example. attention [B, T], tokens [B, T] -> [B].
torch::Tensor DistinctTokenAttention(const torch::Tensor& attention,
                                     const torch::Tensor& tokens,
                                     int num_common);

// Mean over examples of (max attention on a distinct token - min attention on
// a common token); examples without a distinct token are left out.
double Separability(const torch::Tensor& attention, const torch::Tensor& tokens,
                    int num_common);

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

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_METRICS_H_
