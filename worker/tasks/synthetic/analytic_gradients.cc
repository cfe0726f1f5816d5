#include "worker/tasks/synthetic/analytic_gradients.h"

#include <algorithm>
#include <cmath>

// The Fortran BLAS's single-precision product, resolved at run time from
// the BLAS LibTorch loaded (null where none exports it).
extern "C" void sgemm_(const char* transa, const char* transb, const int* m,
                       const int* n, const int* k, const float* alpha,
                       const float* a, const int* lda, const float* b,
                       const int* ldb, const float* beta, float* c,
                       const int* ldc) __attribute__((weak));

namespace qkov::training {
namespace {

// out[t] = op(a[t]) op(b[t]) for every t, where a, b and out are contiguous
// [T, rows, cols] tensors as stored and op transposes when asked. On the
// CPU in float this calls the BLAS once per trial directly: LibTorch's bmm
// splits a batch of small matrices into one dispatched addmm per matrix
// (a select, a resolve_conj and an addmm each), which at T = 32 cost more
// than the products. Elsewhere, torch::bmm_out.
void Product(torch::Tensor& out, const torch::Tensor& a, bool transpose_a,
             const torch::Tensor& b, bool transpose_b) {
  if (sgemm_ == nullptr || !out.is_cpu() ||
      out.scalar_type() != torch::kFloat || !a.is_contiguous() ||
      !b.is_contiguous() || !out.is_contiguous() ||
      a.scalar_type() != torch::kFloat || b.scalar_type() != torch::kFloat) {
    torch::bmm_out(out, transpose_a ? a.transpose(1, 2) : a,
                   transpose_b ? b.transpose(1, 2) : b);
    return;
  }
  // Row-major out = op(A) op(B) is column-major out^T = op(B)^T op(A)^T.
  const int m = static_cast<int>(out.size(1)),
            n = static_cast<int>(out.size(2));
  const int k = static_cast<int>(transpose_a ? a.size(1) : a.size(2));
  const int lda = static_cast<int>(a.size(2)),
            ldb = static_cast<int>(b.size(2));
  const char ta = transpose_a ? 'T' : 'N', tb = transpose_b ? 'T' : 'N';
  const float one = 1, zero = 0;
  const int64_t trials = out.size(0);
  const int64_t a_step = a.size(1) * a.size(2), b_step = b.size(1) * b.size(2),
                out_step = static_cast<int64_t>(m) * n;
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t t = 0; t < trials; ++t) {
    sgemm_(&tb, &ta, &n, &m, &k, &one, pb + t * b_step, &ldb, pa + t * a_step,
           &lda, &zero, po + t * out_step, &n);
  }
}

// The gathers and scatters over the tokens of each example, as one loop per
// example for contiguous float tensors on the CPU (where LibTorch's generic
// gather and scatter_add cost several times the loop), as tensor ops
// otherwise (CUDA, double).
bool LoopKernel(const torch::Tensor& values, const torch::Tensor& tokens) {
  return values.is_cpu() && values.scalar_type() == torch::kFloat &&
         values.is_contiguous() && tokens.is_cpu() && tokens.is_contiguous();
}

// scores[t, b, i] = rows[t, b, tokens[t, b, i]] * scale.
void GatherScores(const torch::Tensor& rows, const torch::Tensor& tokens,
                  double scale, torch::Tensor& scores) {
  if (!LoopKernel(rows, tokens)) {
    torch::gather_out(scores, rows, 2, tokens).mul_(scale);
    return;
  }
  const int64_t examples = tokens.size(0) * tokens.size(1);
  const int64_t len = tokens.size(2), v = rows.size(2);
  const float* r = rows.data_ptr<float>();
  const int64_t* x = tokens.data_ptr<int64_t>();
  float* out = scores.data_ptr<float>();
  const float k = static_cast<float>(scale);
  for (int64_t e = 0; e < examples; ++e, r += v, x += len, out += len) {
    for (int64_t i = 0; i < len; ++i) out[i] = r[x[i]] * k;
  }
}

// context[t, b, :] = sum_i attention[t, b, i] e_{tokens[t, b, i]}.
void ScatterContext(const torch::Tensor& attention, const torch::Tensor& tokens,
                    torch::Tensor& context) {
  if (!LoopKernel(attention, tokens)) {
    context.zero_().scatter_add_(2, tokens, attention);
    return;
  }
  const int64_t examples = tokens.size(0) * tokens.size(1);
  const int64_t len = tokens.size(2), v = context.size(2);
  const float* a = attention.data_ptr<float>();
  const int64_t* x = tokens.data_ptr<int64_t>();
  float* out = context.data_ptr<float>();
  for (int64_t e = 0; e < examples; ++e, a += len, x += len, out += v) {
    std::fill(out, out + v, 0.0f);
    for (int64_t i = 0; i < len; ++i) out[x[i]] += a[i];
  }
}

// Back through the context's scatter, the softmax and the scores' gather.
// With da_i = d_context[tokens_i] and ds_i = a_i (da_i - <a, da>) * scale,
// d_rows = sum_i ds_i e_{tokens_i}. Every position holding token k has the
// same da_i = d_context[k], so both sums collapse onto the context
// (context[k] = the attention summed over the positions of token k):
//   <a, da> = <context, d_context>,
//   d_rows[k] = scale * (d_context[k] - <a, da>) * context[k],
// two passes over the vocabulary instead of two over the positions with a
// scatter (the same values; sums in another order).
void AttentionBackward(const torch::Tensor& d_context,
                       const torch::Tensor& context, double scale,
                       torch::Tensor& d_rows, torch::Tensor& product,
                       torch::Tensor& dot) {
  if (!d_context.is_cpu() || d_context.scalar_type() != torch::kFloat ||
      !d_context.is_contiguous() || !context.is_contiguous() ||
      !d_rows.is_contiguous()) {
    torch::mul_out(product, context, d_context);
    torch::sum_out(dot, product, {2}, /*keepdim=*/true);
    torch::sub_out(d_rows, d_context, dot).mul_(context).mul_(scale);
    return;
  }
  const int64_t examples = d_context.size(0) * d_context.size(1);
  const int64_t v = d_context.size(2);
  const float* dc = d_context.data_ptr<float>();
  const float* c = context.data_ptr<float>();
  float* out = d_rows.data_ptr<float>();
  const float k = static_cast<float>(scale);
  for (int64_t e = 0; e < examples; ++e, dc += v, c += v, out += v) {
    // Eight partial sums in a fixed order (the compiler vectorises them).
    float partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t j = 0;
    for (; j + 8 <= v; j += 8) {
      for (int l = 0; l < 8; ++l) partial[l] += c[j + l] * dc[j + l];
    }
    float inner = ((partial[0] + partial[4]) + (partial[1] + partial[5])) +
                  ((partial[2] + partial[6]) + (partial[3] + partial[7]));
    for (; j < v; ++j) inner += c[j] * dc[j];
    for (j = 0; j < v; ++j) out[j] = k * (dc[j] - inner) * c[j];
  }
}

// The query token of example (t, b): the last column of tokens [T, B, L].
inline int64_t QueryOf(const int64_t* tokens, int64_t example, int64_t len) {
  return tokens[example * len + len - 1];
}

// The factor entries at each example's query token: W_Q[:, q_b] as
// columns [T, V, B] (factorized QK) or W_QK[q_b, :] as rows [T, B, V].
void GatherQuery(const torch::Tensor& w, const torch::Tensor& tokens,
                 bool columns, torch::Tensor& out) {
  const int64_t n = tokens.size(0), b = tokens.size(1), len = tokens.size(2);
  const int64_t v = w.size(1);
  if (!LoopKernel(w, tokens) || !out.is_contiguous()) {
    const torch::Tensor query = tokens.select(2, len - 1);  // [T, B]
    if (columns) {
      torch::gather_out(out, w, 2, query.unsqueeze(1).expand({n, v, b}));
    } else {
      torch::gather_out(out, w, 1, query.unsqueeze(2).expand({n, b, v}));
    }
    return;
  }
  const float* src = w.data_ptr<float>();
  const int64_t* x = tokens.data_ptr<int64_t>();
  float* dst = out.data_ptr<float>();
  for (int64_t t = 0; t < n; ++t) {
    const float* wt = src + t * v * v;
    for (int64_t e = 0; e < b; ++e) {
      const int64_t q = QueryOf(x, t * b + e, len);
      if (columns) {
        float* o = dst + t * v * b + e;
        for (int64_t k = 0; k < v; ++k) o[k * b] = wt[k * v + q];
      } else {
        std::copy(wt + q * v, wt + q * v + v, dst + (t * b + e) * v);
      }
    }
  }
}

// GatherQuery's adjoint: grad = 0, then d's columns [T, V, B] (or rows
// [T, B, V]) added into the query token's column (or row) of grad.
void ScatterQuery(const torch::Tensor& d, const torch::Tensor& tokens,
                  bool columns, torch::Tensor& grad) {
  const int64_t n = tokens.size(0), b = tokens.size(1), len = tokens.size(2);
  const int64_t v = grad.size(1);
  if (!LoopKernel(d, tokens) || !grad.is_contiguous()) {
    const torch::Tensor query = tokens.select(2, len - 1);  // [T, B]
    if (columns) {
      grad.zero_().scatter_add_(2, query.unsqueeze(1).expand({n, v, b}), d);
    } else {
      grad.zero_().scatter_add_(1, query.unsqueeze(2).expand({n, b, v}), d);
    }
    return;
  }
  const float* src = d.data_ptr<float>();
  const int64_t* x = tokens.data_ptr<int64_t>();
  float* dst = grad.data_ptr<float>();
  std::fill(dst, dst + n * v * v, 0.0f);
  for (int64_t t = 0; t < n; ++t) {
    float* gt = dst + t * v * v;
    for (int64_t e = 0; e < b; ++e) {
      const int64_t q = QueryOf(x, t * b + e, len);
      if (columns) {
        const float* c = src + t * v * b + e;
        for (int64_t k = 0; k < v; ++k) gt[k * v + q] += c[k * b];
      } else {
        const float* r = src + (t * b + e) * v;
        for (int64_t k = 0; k < v; ++k) gt[q * v + k] += r[k];
      }
    }
  }
}

// From log_probs [T, B, V] and probs = exp(log_probs) in d_logits: each
// trial's mean cross-entropy into loss [T], and d_logits becomes
// weight (probs - onehot(label)) / B.
void CrossEntropy(const torch::Tensor& log_probs, const torch::Tensor& labels,
                  const torch::Tensor& weight, torch::Tensor& picked,
                  torch::Tensor& minus_ones, torch::Tensor& loss,
                  torch::Tensor& d_logits) {
  const int64_t n = log_probs.size(0), b = log_probs.size(1);
  const int64_t v = log_probs.size(2);
  const torch::Tensor scale =
      (weight.to(log_probs.options()) / static_cast<double>(b));
  if (!LoopKernel(log_probs, labels) || !LoopKernel(d_logits, labels)) {
    const torch::Tensor label_index = labels.unsqueeze(2);  // [T, B, 1]
    torch::gather_out(picked, log_probs, 2, label_index);
    torch::mean_out(loss, picked.squeeze(2), {1}).neg_();
    d_logits.scatter_add_(2, label_index, minus_ones)
        .mul_(scale.view({n, 1, 1}));
    return;
  }
  const float* lp = log_probs.data_ptr<float>();
  const int64_t* y = labels.data_ptr<int64_t>();
  const torch::Tensor scale_cpu = scale.contiguous();
  const float* k = scale_cpu.data_ptr<float>();
  float* l = loss.data_ptr<float>();
  float* d = d_logits.data_ptr<float>();
  for (int64_t t = 0; t < n; ++t) {
    float sum = 0;
    for (int64_t e = 0; e < b; ++e) {
      const int64_t row = t * b + e;
      sum += lp[row * v + y[row]];
      float* dr = d + row * v;
      for (int64_t j = 0; j < v; ++j) dr[j] *= k[t];
      dr[y[row]] -= k[t];
    }
    l[t] = -sum / static_cast<float>(b);
  }
}

}  // namespace

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
  product_ = make({n, b, v});
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
  if (qk_factorized) {
    GatherQuery(params[0], tokens, /*columns=*/true, query_columns_);
    Product(rows_, query_columns_, true, params[1], false);
  } else {
    GatherQuery(params[0], tokens, /*columns=*/false, rows_);
  }
  GatherScores(rows_, tokens, inv_sqrt_v, scores_);
  torch::softmax_out(attention, scores_, 2);
  ScatterContext(attention, tokens, context_);  // [T, B, V]

  // OV path and the loss.
  if (ov_factorized) {
    Product(values_, context_, false, params[params.size() - 2], true);
    Product(logits, values_, false, w_o, true);
  } else {
    Product(logits, context_, false, w_o, true);
  }
  torch::log_softmax_out(log_probs_, logits, 2);
  // d loss / d logits = weight (softmax - onehot) / B.
  torch::exp_out(d_logits_, log_probs_);
  CrossEntropy(log_probs_, labels, weight, picked_, minus_ones_, out_.loss,
               d_logits_);

  if (ov_factorized) {
    const torch::Tensor& w_v = params[params.size() - 2];
    Product(grads.back(), d_logits_, true, values_, false);
    Product(d_values_, d_logits_, false, w_o, false);
    Product(grads[grads.size() - 2], d_values_, true, context_, false);
    Product(d_context_, d_values_, false, w_v, false);
  } else {
    Product(grads.back(), d_logits_, true, context_, false);
    Product(d_context_, d_logits_, false, w_o, false);
  }

  AttentionBackward(d_context_, context_, inv_sqrt_v, d_rows_, product_, dot_);

  if (qk_factorized) {
    Product(grads[1], query_columns_, false, d_rows_, false);  // dW_K
    Product(d_columns_, params[1], false, d_rows_, true);
    ScatterQuery(d_columns_, tokens, /*columns=*/true, grads[0]);  // dW_Q
  } else {
    ScatterQuery(d_rows_, tokens, /*columns=*/false, grads[0]);  // dW_QK
  }
  return out_;
}

}  // namespace qkov::training
