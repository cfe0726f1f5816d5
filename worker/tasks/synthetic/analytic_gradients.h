// The synthetic model's forward pass and its gradients written out by hand,
// for T trials stacked along a leading dimension: a few batched products,
// gathers and scatters per step and no autograd graph. The synthetic
// trainer's default engine; autograd over StackedAttentionForward (model.h)
// is the reference it is tested against (analytic_gradients_test).
//
// With one-hot inputs only the rows of the QK circuit at the batch's query
// tokens enter the scores, and the OV circuit acts on a [B, V] context, so
// both are applied through their factors instead of being formed (fewer
// products than forming the circuits while B < V; docs/PERFORMANCE.md):
//
//   r_b = W_Q[:, q_b]^T W_K  (or W_QK[q_b, :])             rows   [B, V]
//   s_bi = r_b[x_bi] / sqrt(V),  a_b = softmax(s_b)        scores [B, L]
//   h_b = sum_i a_bi e_{x_bi}                              context[B, V]
//   z_b = W_O (W_V h_b)  (or W_O h_b)                      logits [B, V]
//   loss = w * mean_b CE(z_b, y_b)
//
// and backwards dz = w (softmax(z) - onehot(y)) / B, dW_O = dz^T u with
// u = h W_V^T, du = dz W_O, dW_V = du^T h, dh = du W_V, da = dh[x],
// ds = a (da - <a, da>) / sqrt(V), dr = scatter of ds onto the tokens
// = (dh - <h, dh>) h / sqrt(V) (positions of one token share their da),
// dW_K = W_Q[:, q]^T-columns times dr, dW_Q[:, q_b] += W_K dr_b (collapsed:
// dW_QK[q_b, :] += dr_b).
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_ANALYTIC_GRADIENTS_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_ANALYTIC_GRADIENTS_H_

#include <torch/torch.h>

#include <vector>

#include "worker/training/config.h"

namespace qkov::training {

struct StackedGradients {
  torch::Tensor logits;              // [T, B, V]
  torch::Tensor attention;           // [T, B, L], rows sum to 1
  torch::Tensor loss;                // [T], each trial's mean cross-entropy
  std::vector<torch::Tensor> grads;  // one per parameter, [T, V, V]
};

// Forward and backward of the loss sum_t weight[t] * loss[t] for one
// parameterization, in buffers allocated on the first step (and again
// when the shapes or device change) and reused after.
class AnalyticGradients {
 public:
  explicit AnalyticGradients(Parameterization p) : p_(p) {}

  // `params` are the parameterization's weights in StackedParamNames order
  // (model.h), each [T, V, V] as nn.Linear stores them ([out, in]); tokens
  // int64 [T, B, L] with the query last, labels int64 [T, B], weight [T]
  // (1 for a live trial, 0 for one whose slice must not move). Runs on the
  // tensors' device, without autograd. The result's tensors are this
  // object's buffers: the next call overwrites them.
  const StackedGradients& Compute(const std::vector<torch::Tensor>& params,
                                  const torch::Tensor& tokens,
                                  const torch::Tensor& labels,
                                  const torch::Tensor& weight);

 private:
  void Allocate(int64_t n, int64_t b, int64_t len, int64_t v,
                const torch::TensorOptions& options);

  Parameterization p_;
  std::vector<int64_t> shape_;  // T, B, L, V of the buffers
  torch::Tensor query_columns_, rows_, scores_, context_, values_, log_probs_,
      picked_, d_logits_, minus_ones_, d_values_, d_context_, product_, dot_,
      d_rows_, d_columns_;
  StackedGradients out_;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_ANALYTIC_GRADIENTS_H_
