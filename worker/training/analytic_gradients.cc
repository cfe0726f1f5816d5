#include "worker/training/analytic_gradients.h"

#include <cmath>

namespace qkov::training {

void AnalyticGradients::Allocate(int64_t n, int64_t b, int64_t len, int64_t v,
                                 const torch::TensorOptions& options) {
  shape_ = {n, b, len, v};
  auto make = [&](std::initializer_list<int64_t> sizes) {
    return torch::empty(sizes, options);
  };
  const bool qk_factorized = QkFactorized(p_), ov_factorized = OvFactorized(p_);
  query_columns_ = qk_factorized ? make({n, v, b}) : torch::Tensor();
  rows_ = make({n, b, v});
  scores_ = make({n, b, len});
  context_ = make({n, b, v});
  values_ = ov_factorized ? make({n, b, v}) : torch::Tensor();
  log_probs_ = make({n, b, v});
  picked_ = make({n, b, 1});
  d_logits_ = make({n, b, v});
  minus_ones_ = torch::full({n, b, 1}, -1.0, options);
  d_values_ = ov_factorized ? make({n, b, v}) : torch::Tensor();
  d_context_ = make({n, b, v});
  d_attention_ = make({n, b, len});
  product_ = make({n, b, len});
  dot_ = make({n, b, 1});
  d_rows_ = make({n, b, v});
  d_columns_ = qk_factorized ? make({n, v, b}) : torch::Tensor();
  out_.logits = make({n, b, v});
  out_.attention = make({n, b, len});
  out_.loss = make({n});
  out_.grads.clear();
  const size_t count = (qk_factorized ? 2 : 1) + (ov_factorized ? 2 : 1);
  for (size_t i = 0; i < count; ++i) out_.grads.push_back(make({n, v, v}));
}

const StackedGradients& AnalyticGradients::Compute(
    const std::vector<torch::Tensor>& params, const torch::Tensor& tokens,
    const torch::Tensor& labels, const torch::Tensor& weight) {
  torch::NoGradGuard no_grad;
  const int64_t n = tokens.size(0), b = tokens.size(1), len = tokens.size(2);
  const int64_t v = params[0].size(1);
  const torch::Tensor& w_o = params.back();
  if (shape_ != std::vector<int64_t>{n, b, len, v} ||
      out_.logits.device() != w_o.device() ||
      out_.logits.scalar_type() != w_o.scalar_type()) {
    Allocate(n, b, len, v, w_o.options());
  }
  const double inv_sqrt_v = 1.0 / std::sqrt(static_cast<double>(v));
  const bool qk_factorized = QkFactorized(p_), ov_factorized = OvFactorized(p_);
  torch::Tensor& attention = out_.attention;
  torch::Tensor& logits = out_.logits;
  std::vector<torch::Tensor>& grads = out_.grads;

  // Rows of the QK circuit at each example's query token.
  const torch::Tensor query = tokens.select(2, len - 1);  // [T, B]
  torch::Tensor column_index, row_index;
  if (qk_factorized) {
    column_index = query.unsqueeze(1).expand({n, v, b});            // [T, V, B]
    torch::gather_out(query_columns_, params[0], 2, column_index);  // W_Q[:,q]
    torch::bmm_out(rows_, query_columns_.transpose(1, 2), params[1]);
  } else {
    row_index = query.unsqueeze(2).expand({n, b, v});  // [T, B, V]
    torch::gather_out(rows_, params[0], 1, row_index);
  }
  torch::gather_out(scores_, rows_, 2, tokens).mul_(inv_sqrt_v);
  torch::softmax_out(attention, scores_, 2);
  context_.zero_().scatter_add_(2, tokens, attention);  // [T, B, V]

  // OV path and the loss.
  if (ov_factorized) {
    torch::bmm_out(values_, context_,
                   params[params.size() - 2].transpose(1, 2));
    torch::bmm_out(logits, values_, w_o.transpose(1, 2));
  } else {
    torch::bmm_out(logits, context_, w_o.transpose(1, 2));
  }
  torch::log_softmax_out(log_probs_, logits, 2);
  const torch::Tensor label_index = labels.unsqueeze(2);  // [T, B, 1]
  torch::gather_out(picked_, log_probs_, 2, label_index);
  torch::mean_out(out_.loss, picked_.squeeze(2), {1}).neg_();

  // d loss / d logits = weight (softmax - onehot) / B.
  torch::exp_out(d_logits_, log_probs_)
      .scatter_add_(2, label_index, minus_ones_)
      .mul_(
          (weight.to(w_o.options()) / static_cast<double>(b)).view({n, 1, 1}));

  if (ov_factorized) {
    const torch::Tensor& w_v = params[params.size() - 2];
    torch::bmm_out(grads.back(), d_logits_.transpose(1, 2), values_);
    torch::bmm_out(d_values_, d_logits_, w_o);
    torch::bmm_out(grads[grads.size() - 2], d_values_.transpose(1, 2),
                   context_);
    torch::bmm_out(d_context_, d_values_, w_v);
  } else {
    torch::bmm_out(grads.back(), d_logits_.transpose(1, 2), context_);
    torch::bmm_out(d_context_, d_logits_, w_o);
  }

  // Through the context's scatter and the softmax to the rows: d_attention_
  // becomes d scores = a (da - <a, da>) / sqrt(V).
  torch::gather_out(d_attention_, d_context_, 2, tokens);
  torch::mul_out(product_, attention, d_attention_);
  torch::sum_out(dot_, product_, {2}, /*keepdim=*/true);
  d_attention_.sub_(dot_).mul_(attention).mul_(inv_sqrt_v);
  d_rows_.zero_().scatter_add_(2, tokens, d_attention_);

  if (qk_factorized) {
    torch::bmm_out(grads[1], query_columns_, d_rows_);  // dW_K
    torch::bmm_out(d_columns_, params[1], d_rows_.transpose(1, 2));
    grads[0].zero_().scatter_add_(2, column_index, d_columns_);  // dW_Q
  } else {
    grads[0].zero_().scatter_add_(1, row_index, d_rows_);  // dW_QK
  }
  return out_;
}

}  // namespace qkov::training
