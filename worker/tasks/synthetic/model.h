// The single-layer, single-head attention model of the paper (docs/paper.md §1)
// in its four parameterizations. Inputs are one-hot tokens, so every linear
// map applied to a token is a column lookup; we compute the two effective
// circuits once per step and gather from them instead of building dense
// one-hot tensors:
//
//   QK circuit  A = W_Q^T W_K (factorized) or W_QK (collapsed)    [V x V]
//   OV circuit  B = W_O W_V   (factorized) or W_O  (collapsed)    [V x V]
//   score_i = A[x_T, x_i] / sqrt(V),  a = softmax(score),
//   logits  = B h,  h = sum_i a_i e_{x_i}
//
// which equals the paper's k = W_K x_i, q = W_Q x_T, a = softmax(q.k/sqrt V),
// logits = W_O sum_i a_i W_V x_i exactly (and likewise for the others).
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_MODEL_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_MODEL_H_

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "worker/training/config.h"

namespace qkov::training {

struct ModelOutput {
  torch::Tensor logits;     // [B, V]
  torch::Tensor attention;  // [B, T], rows sum to 1
};

// The attention layer over T trials stacked along a leading dimension: the
// circuits qk, ov [T, V, V], tokens int64 [T, B, L] whose last column is the
// query, key_mask (optional, bool [T, B, L]). Returns logits [T, B, V] and
// attention [T, B, L]. AttentionModel's forward is this with T = 1, and the
// synthetic trainer's reference engine trains through it with autograd
// (its default engine: analytic_gradients.h).
ModelOutput StackedAttentionForward(const torch::Tensor& qk,
                                    const torch::Tensor& ov,
                                    const torch::Tensor& tokens,
                                    const torch::Tensor& key_mask = {});

// The parameterization's weights in the order the stacked engines hold them:
// w_q, w_k (or w_qk), then w_v (factorized OV), then w_o.
std::vector<std::string> StackedParamNames(Parameterization p);

// ||W1^T W1 - W2 W2^T||_F / max(||W1^T W1||_F, ||W2 W2^T||_F): 0 for a
// balanced factor pair (the gradient-flow invariant of docs/paper.md §1).
double Balancedness(const torch::Tensor& w1, const torch::Tensor& w2);

class AttentionModelImpl : public torch::nn::Module {
 public:
  // Weights are drawn from `init_seed` with our own generator, so a seed
  // gives the same initial weights on every build.
  AttentionModelImpl(Parameterization p, int vocab_size,
                     const InitOptions& init, uint64_t init_seed,
                     torch::Dtype dtype = torch::kFloat32);

  // tokens: int64 [B, T], the last column is the query. key_mask (optional,
  // bool [B, T]): false positions are deleted from attention, which for this
  // position-free model is the same as removing the token from the sequence.
  ModelOutput forward(const torch::Tensor& tokens,
                      const torch::Tensor& key_mask = torch::Tensor());

  torch::Tensor QkCircuit() const;  // A
  torch::Tensor OvCircuit() const;  // B

  // Parameters of each circuit, for the two learning-rate groups.
  std::vector<torch::Tensor> QkParameters() const;
  std::vector<torch::Tensor> OvParameters() const;

  // ||W1^T W1 - W2 W2^T||_F / max(||W1^T W1||_F, ||W2 W2^T||_F) for the
  // circuit's factor pair (W1 W2 = circuit); 0 for a collapsed circuit.
  double QkBalancedness() const;
  double OvBalancedness() const;

  Parameterization parameterization() const { return p_; }
  int vocab_size() const { return vocab_size_; }

 private:
  Parameterization p_;
  int vocab_size_;
  // Factorized QK: w_q_, w_k_; collapsed: w_qk_. Factorized OV: w_v_, w_o_;
  // collapsed: w_o_. Each is an nn.Linear weight [out, in].
  torch::Tensor w_q_, w_k_, w_qk_, w_v_, w_o_;
};
TORCH_MODULE(AttentionModel);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_MODEL_H_
