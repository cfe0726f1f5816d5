// Evaluation of a text classifier on one split (docs/metrics.md, "Text
// tasks"): accuracy, loss, gold probability; the attention mass on the
// rationale by the authors' variants (layer 0 head 0 at the last padded
// position, the mean over heads, the max over layers, rollout, and rollout at
// the readout position); AC and ACMC; comprehensiveness and sufficiency by
// deletion of the top k rollout positions; the DTAP heatmap.
#ifndef QKOV_WORKER_TRAINING_TEXT_TEXT_METRICS_H_
#define QKOV_WORKER_TRAINING_TEXT_TEXT_METRICS_H_

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "worker/training/metrics.h"
#include "worker/training/text/encoding.h"
#include "worker/training/text/text_model.h"

namespace qkov::training::text {

struct TextEvalOptions {
  double tau_attention = 0.33;
  double tau_probability = 0.66;
  std::vector<double> dtap_attention_edges = {0, 0.33, 0.66, 1.1};
  std::vector<double> dtap_probability_edges = {0, 0.33, 0.66, 1.1};
  double rollout_alpha = 1.0;  // A' = a A + (1 - a) I
  double k_percent = 5;        // k = max(1, ceil(k_percent / 100 * L))
  int64_t batch = 256;         // examples per forward
};

// Attention rollout over layers: each layer's head-mean attention [B, L, L]
// mixed with the identity (alpha), rows renormalized, multiplied from the
// first layer up: R = A'_n ... A'_1. attention: per layer [B, H, L, L].
torch::Tensor Rollout(const std::vector<torch::Tensor>& attention,
                      double alpha);

// ids [B, L] with `positions` [B, k] removed (the rest shifted left, pads
// after) or kept alone (in the given order, pads after).
torch::Tensor DeletePositions(const torch::Tensor& ids,
                              const torch::Tensor& positions, int64_t pad_id);
torch::Tensor KeepPositions(const torch::Tensor& ids,
                            const torch::Tensor& positions, int64_t pad_id);

struct TextEvaluation {
  std::map<std::string, double> scalars;  // names without the split prefix
  Heatmap dtap;
};

TextEvaluation EvaluateText(TextModel& model, const EncodedText& data,
                            int64_t pad_id, const TextEvalOptions& options);

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TRAINING_TEXT_TEXT_METRICS_H_
