#include "worker/tasks/text/text_metrics.h"

#include <cmath>

namespace qkov::training::text {

torch::Tensor Rollout(const std::vector<torch::Tensor>& attention,
                      double alpha) {
  torch::Tensor r;
  for (const torch::Tensor& a : attention) {
    torch::Tensor m = a.mean(1);  // [B, L, L]
    const int64_t len = m.size(-1);
    m = alpha * m + (1 - alpha) * torch::eye(len, m.options());
    m = m / m.sum(-1, true);
    r = r.defined() ? torch::matmul(m, r) : m;
  }
  return r;
}

torch::Tensor DeletePositions(const torch::Tensor& ids,
                              const torch::Tensor& positions, int64_t pad_id) {
  const int64_t len = ids.size(1), k = positions.size(1);
  torch::Tensor deleted = torch::zeros_like(ids, torch::kInt64)
                              .scatter_(1, positions, 1);  // 1 = deleted
  // Kept positions first, in order (a stable sort of the deleted flags).
  torch::Tensor order =
      std::get<1>(torch::sort(deleted, c10::optional<bool>(true), /*dim=*/1,
                              /*descending=*/false));
  torch::Tensor out = ids.gather(1, order);
  out.narrow(1, len - k, k).fill_(pad_id);
  return out;
}

torch::Tensor KeepPositions(const torch::Tensor& ids,
                            const torch::Tensor& positions, int64_t pad_id) {
  const int64_t k = positions.size(1);
  torch::Tensor out = torch::full_like(ids, pad_id);
  out.narrow(1, 0, k).copy_(ids.gather(1, positions));
  return out;
}

namespace {

// p(class | ids) for each row's `cls`, in batches.
torch::Tensor ClassProbability(TextModel& model, const torch::Tensor& ids,
                               const torch::Tensor& cls, int64_t pad_id) {
  torch::Tensor logits = model->Logits(ids, pad_id);
  return torch::softmax(logits.to(torch::kFloat64), 1)
      .gather(1, cls.view({-1, 1}))
      .view(-1);
}

}  // namespace

TextEvaluation EvaluateText(TextModel& model, const EncodedText& data,
                            int64_t pad_id, const TextEvalOptions& o) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const torch::Device device = model->parameters()[0].device();
  const int64_t n = data.ids.size(0), len = data.ids.size(1);
  const int64_t k = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(o.k_percent / 100.0 * len)));
  std::vector<torch::Tensor> correct, loss, gold, head0, heads, layer_max,
      rollout, readout, comp, suff;
  for (int64_t start = 0; start < n; start += o.batch) {
    const int64_t b = std::min(o.batch, n - start);
    const torch::Tensor ids = data.ids.narrow(0, start, b).to(device);
    const torch::Tensor labels = data.labels.narrow(0, start, b).to(device);
    const torch::Tensor rat = data.rationale.narrow(0, start, b)
                                  .to(device)
                                  .to(torch::kFloat64);  // [b, L]
    TextModelOutput out = model->forward(ids, pad_id);
    const torch::Tensor logits = out.logits.to(torch::kFloat64);
    const torch::Tensor probs = torch::softmax(logits, 1);
    correct.push_back(logits.argmax(1).eq(labels).to(torch::kFloat64));
    loss.push_back(torch::nn::functional::cross_entropy(
        logits, labels,
        torch::nn::functional::CrossEntropyFuncOptions().reduction(
            torch::kNone)));
    gold.push_back(probs.gather(1, labels.view({-1, 1})).view(-1));
    // The authors' query: the last padded position.
    auto mass = [&](const torch::Tensor& rows) {  // rows [b, L]
      return (rows.to(torch::kFloat64) * rat).sum(1);
    };
    std::vector<torch::Tensor> per_layer;
    for (const torch::Tensor& a : out.attention)
      per_layer.push_back(mass(a.select(2, len - 1).mean(1)));
    head0.push_back(mass(out.attention[0].select(1, 0).select(1, len - 1)));
    heads.push_back(torch::stack(per_layer).mean(0));
    layer_max.push_back(std::get<0>(torch::stack(per_layer).max(0)));
    const torch::Tensor r = Rollout(out.attention, o.rollout_alpha);
    rollout.push_back(mass(r.select(1, len - 1)));
    readout.push_back(
        mass(r.gather(1, out.readout.view({b, 1, 1}).expand({b, 1, len}))
                 .squeeze(1)));
    if (!o.faithfulness) continue;
    // Comprehensiveness and sufficiency: delete or keep the top k positions
    // of the rollout row, in descending order of attention.
    const torch::Tensor top = std::get<1>(r.select(1, len - 1).topk(k, 1));
    const torch::Tensor pred = logits.argmax(1);
    const torch::Tensor p = probs.gather(1, pred.view({-1, 1})).view(-1);
    comp.push_back(p - ClassProbability(model,
                                        DeletePositions(ids, top, pad_id), pred,
                                        pad_id));
    suff.push_back(p - ClassProbability(model, KeepPositions(ids, top, pad_id),
                                        pred, pad_id));
  }
  if (was_training) model->train();
  auto mean = [](const std::vector<torch::Tensor>& v) {
    return torch::cat(v).mean().item<double>();
  };
  TextEvaluation ev;
  auto& s = ev.scalars;
  s["accuracy"] = mean(correct);
  s["loss"] = mean(loss);
  s["gold_probability"] = mean(gold);
  s["rationale_mass_head0"] = mean(head0);
  s["rationale_mass"] = mean(heads);
  s["rationale_mass_layer_max"] = mean(layer_max);
  s["rationale_mass_rollout"] = mean(rollout);
  s["rationale_mass_readout"] = mean(readout);
  if (o.faithfulness) {
    s["comprehensiveness"] = mean(comp);
    s["sufficiency"] = mean(suff);
    s["top_k"] = static_cast<double>(k);
  }
  const torch::Tensor m0 = torch::cat(head0).cpu(), g = torch::cat(gold).cpu();
  s["ac"] = m0.ge(o.tau_attention).to(torch::kFloat64).mean().item<double>();
  s["acmc"] = m0.ge(o.tau_attention)
                  .logical_and(g.ge(o.tau_probability))
                  .to(torch::kFloat64)
                  .mean()
                  .item<double>();
  std::vector<double> att(m0.data_ptr<double>(), m0.data_ptr<double>() + n);
  std::vector<double> prob(g.data_ptr<double>(), g.data_ptr<double>() + n);
  ev.dtap =
      DtapHeatmap(att, prob, o.dtap_attention_edges, o.dtap_probability_edges);
  return ev;
}

}  // namespace qkov::training::text
