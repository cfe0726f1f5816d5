#include "worker/tasks/synthetic/model.h"

#include <cmath>
#include <limits>
#include <random>

#include "worker/tasks/synthetic/synthetic_task.h"

namespace qkov::training {
namespace {

torch::Tensor InitMatrix(InitKind kind, int v, double scale,
                         std::mt19937_64& rng, torch::Dtype dtype) {
  if (kind == InitKind::kIdentity) {
    return (torch::eye(v, torch::kFloat64) * scale).to(dtype);
  }
  // nn.Linear default: kaiming_uniform(a = sqrt(5)) = U(-1/sqrt(in),
  // 1/sqrt(in)).
  auto w = torch::empty({v, v}, torch::kFloat64);
  double* d = w.data_ptr<double>();
  const double bound = 1.0 / std::sqrt(static_cast<double>(v));
  for (int64_t i = 0; i < static_cast<int64_t>(v) * v; ++i) {
    d[i] = (2.0 * UniformDouble(rng) - 1.0) * bound;
  }
  return w.to(dtype);
}

}  // namespace

std::vector<std::string> StackedParamNames(Parameterization p) {
  std::vector<std::string> n = QkFactorized(p)
                                   ? std::vector<std::string>{"w_q", "w_k"}
                                   : std::vector<std::string>{"w_qk"};
  if (OvFactorized(p)) n.push_back("w_v");
  n.push_back("w_o");
  return n;
}

double Balancedness(const torch::Tensor& w1, const torch::Tensor& w2) {
  torch::NoGradGuard no_grad;
  auto a = w1.t().matmul(w1);
  auto b = w2.matmul(w2.t());
  const double denom =
      std::max(a.norm().item<double>(), b.norm().item<double>());
  if (denom == 0) return 0;
  return (a - b).norm().item<double>() / denom;
}

AttentionModelImpl::AttentionModelImpl(Parameterization p, int vocab_size,
                                       const InitOptions& init,
                                       uint64_t init_seed, torch::Dtype dtype)
    : p_(p), vocab_size_(vocab_size) {
  std::mt19937_64 rng(init_seed);
  const int v = vocab_size;
  const double s = init.identity_scale;
  if (QkFactorized(p)) {
    w_q_ = register_parameter("w_q", InitMatrix(init.qk, v, s, rng, dtype));
    w_k_ = register_parameter("w_k", InitMatrix(init.qk, v, s, rng, dtype));
  } else {
    w_qk_ = register_parameter("w_qk", InitMatrix(init.qk, v, s, rng, dtype));
  }
  if (OvFactorized(p)) {
    w_v_ = register_parameter("w_v", InitMatrix(init.ov, v, s, rng, dtype));
  }
  w_o_ = register_parameter("w_o", InitMatrix(init.ov, v, s, rng, dtype));
}

torch::Tensor AttentionModelImpl::QkCircuit() const {
  return QkFactorized(p_) ? w_q_.t().matmul(w_k_) : w_qk_;
}

torch::Tensor AttentionModelImpl::OvCircuit() const {
  return OvFactorized(p_) ? w_o_.matmul(w_v_) : w_o_;
}

std::vector<torch::Tensor> AttentionModelImpl::QkParameters() const {
  if (QkFactorized(p_)) return {w_q_, w_k_};
  return {w_qk_};
}

std::vector<torch::Tensor> AttentionModelImpl::OvParameters() const {
  if (OvFactorized(p_)) return {w_v_, w_o_};
  return {w_o_};
}

double AttentionModelImpl::QkBalancedness() const {
  // QK = W_Q^T W_K: W1 = W_Q^T, W2 = W_K.
  return QkFactorized(p_) ? Balancedness(w_q_.t(), w_k_) : 0.0;
}

double AttentionModelImpl::OvBalancedness() const {
  // OV = W_O W_V: W1 = W_O, W2 = W_V.
  return OvFactorized(p_) ? Balancedness(w_o_, w_v_) : 0.0;
}

ModelOutput StackedAttentionForward(const torch::Tensor& qk,
                                    const torch::Tensor& ov,
                                    const torch::Tensor& tokens,
                                    const torch::Tensor& key_mask) {
  const int64_t n = tokens.size(0), b = tokens.size(1), len = tokens.size(2);
  const int64_t v = qk.size(1);
  auto offsets =
      (torch::arange(n, tokens.options()) * v).view({n, 1});  // [T, 1]
  auto query = tokens.select(2, len - 1);                     // [T, B]
  auto rows = qk.reshape({n * v, v})
                  .index_select(0, (query + offsets).view(-1));  // [T*B, V]
  auto flat = tokens.reshape({n * b, len});
  auto scores = rows.gather(1, flat) / std::sqrt(static_cast<double>(v));
  if (key_mask.defined()) {
    scores = scores.masked_fill(key_mask.reshape({n * b, len}).logical_not(),
                                -std::numeric_limits<double>::infinity());
  }
  auto attention = torch::softmax(scores, 1);  // [T*B, L]
  auto bag = torch::zeros({n * b, v}, attention.options())
                 .scatter_add(1, flat, attention);  // [T*B, V]
  auto logits = torch::bmm(bag.view({n, b, v}), ov.transpose(1, 2));
  return ModelOutput{logits, attention.view({n, b, len})};
}

ModelOutput AttentionModelImpl::forward(const torch::Tensor& tokens,
                                        const torch::Tensor& key_mask) {
  ModelOutput out = StackedAttentionForward(
      QkCircuit().unsqueeze(0), OvCircuit().unsqueeze(0), tokens.unsqueeze(0),
      key_mask.defined() ? key_mask.unsqueeze(0) : key_mask);
  return ModelOutput{out.logits.squeeze(0), out.attention.squeeze(0)};
}

}  // namespace qkov::training
