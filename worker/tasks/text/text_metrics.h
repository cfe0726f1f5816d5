// Evaluation of a text classifier on one split (docs/metrics.md, "Text
// tasks"): accuracy, loss, gold probability; the attention mass on the
// rationale by the authors' variants (layer 0 head 0 at the last padded
// position, the mean over heads, the max over layers, rollout, and rollout at
// the readout position); AC and ACMC; comprehensiveness and sufficiency by
// deletion of the top k rollout positions; the DTAP heatmap.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_METRICS_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_METRICS_H_

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "worker/tasks/text/encoding.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/tasks/text/text_model.h"
#include "worker/tasks/text/text_options.h"
#include "worker/training/heatmap.h"

namespace qkov::training::text {

// Unset fields take the HateXplain setup (text_options.h's kDefaults).
struct TextEvalOptions {
  double tau_attention = kDefaults.tau_attention;
  double tau_probability = kDefaults.tau_probability;
  std::vector<double> dtap_attention_edges{
      kDefaults.dtap_attention_edges.begin(),
      kDefaults.dtap_attention_edges.end()};
  std::vector<double> dtap_probability_edges{
      defaults::kTextDtapProbabilityEdges.begin(),
      defaults::kTextDtapProbabilityEdges.end()};
  double rollout_alpha = kDefaults.rollout_alpha;  // A' = a A + (1 - a) I
  double k_percent = kDefaults.k_percent;  // k = max(1, ceil(k_percent/100 L))
  int64_t batch = 256;                     // examples per forward
  // Comprehensiveness and sufficiency (two more forwards a batch); off for
  // the evaluations during training.
  bool faithfulness = true;
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

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_METRICS_H_
