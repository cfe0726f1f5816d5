#include "worker/tasks/synthetic/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qkov::training {

torch::Tensor DistinctTokenAttention(const torch::Tensor& attention,
                                     const torch::Tensor& tokens,
                                     int num_common) {
  return (attention * tokens.ge(num_common).to(attention.dtype())).sum(1);
}

double Separability(const torch::Tensor& attention, const torch::Tensor& tokens,
                    int num_common) {
  torch::NoGradGuard no_grad;
  const double inf = std::numeric_limits<double>::infinity();
  auto a = attention.to(torch::kFloat64);
  auto distinct = tokens.ge(num_common);
  auto max_distinct = a.masked_fill(distinct.logical_not(), -inf).amax(1);
  auto min_common = a.masked_fill(distinct, inf).amin(1);
  auto has_both = distinct.any(1).logical_and(distinct.logical_not().any(1));
  if (has_both.sum().item<int64_t>() == 0) return 0.0;
  return (max_distinct - min_common)
      .masked_select(has_both)
      .mean()
      .item<double>();
}

namespace {

std::vector<double> ToVector(const torch::Tensor& t) {
  auto c = t.to(torch::kCPU, torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(),
                             c.data_ptr<double>() + c.numel());
}

}  // namespace

Evaluation Evaluate(AttentionModel& model, const SyntheticTask& task,
                    const Batch& batch, const EvalOptions& options) {
  torch::NoGradGuard no_grad;
  Evaluation ev;
  const int num_common = task.options().num_common;
  ModelOutput out = model->forward(batch.tokens, torch::Tensor());
  auto log_probs = torch::log_softmax(out.logits.to(torch::kFloat64), 1);
  auto probs = log_probs.exp();
  auto gold_prob = probs.gather(1, batch.labels.unsqueeze(1)).squeeze(1);
  auto predicted = out.logits.argmax(1);
  auto distinct = DistinctTokenAttention(out.attention.to(torch::kFloat64),
                                         batch.tokens, num_common);

  ev.scalars["accuracy"] =
      predicted.eq(batch.labels).to(torch::kFloat64).mean().item<double>();
  ev.scalars["loss"] = torch::nll_loss(log_probs, batch.labels).item<double>();
  ev.scalars["gold_probability"] = gold_prob.mean().item<double>();
  ev.scalars["distinct_attention"] = distinct.mean().item<double>();
  ev.scalars["separability"] =
      Separability(out.attention, batch.tokens, num_common);
  auto attentive = distinct.ge(options.tau_attention);
  ev.scalars["ac"] = attentive.to(torch::kFloat64).mean().item<double>();
  ev.scalars["acmc"] =
      attentive.logical_and(gold_prob.ge(options.tau_probability))
          .to(torch::kFloat64)
          .mean()
          .item<double>();

  // Comprehensiveness and sufficiency (ERASER, one k): delete the top-k
  // attended positions, or keep only them, and see what happens to the
  // probability of the predicted label.
  const int64_t len = batch.tokens.size(1);
  const int64_t k = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(0.01 * options.top_k_percent *
                                        static_cast<double>(len))));
  auto topk = std::get<1>(out.attention.topk(std::min(k, len), 1));
  auto in_topk =
      torch::zeros_like(batch.tokens, torch::kBool).scatter(1, topk, true);
  auto p_pred = probs.gather(1, predicted.unsqueeze(1)).squeeze(1);
  auto prob_of_pred = [&](const torch::Tensor& mask) {
    ModelOutput o = model->forward(batch.tokens, mask);
    return torch::softmax(o.logits.to(torch::kFloat64), 1)
        .gather(1, predicted.unsqueeze(1))
        .squeeze(1);
  };
  ev.scalars["comprehensiveness"] =
      (p_pred - prob_of_pred(in_topk.logical_not())).mean().item<double>();
  ev.scalars["sufficiency"] =
      (p_pred - prob_of_pred(in_topk)).mean().item<double>();
  ev.scalars["top_k"] = static_cast<double>(k);

  ev.heatmaps.push_back(DtapHeatmap(ToVector(distinct), ToVector(gold_prob),
                                    options.dtap_attention_edges,
                                    options.dtap_probability_edges));
  return ev;
}

}  // namespace qkov::training
