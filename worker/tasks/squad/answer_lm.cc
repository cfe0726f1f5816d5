#include "worker/tasks/squad/answer_lm.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/ascii.h"
#include "worker/tasks/squad/squad_eval.h"
#include "worker/tasks/text/text_metrics.h"

namespace qkov::training::squad {

LmBatch MakeLmBatch(const std::vector<const SquadExample*>& examples,
                    int64_t pad_id) {
  int64_t len = 1;
  for (const SquadExample* e : examples)
    len = std::max<int64_t>(len, e->prompt.size() + e->answer.size() - 1);
  const int64_t b = static_cast<int64_t>(examples.size());
  LmBatch out;
  out.ids = torch::full({b, len}, pad_id, torch::kInt64);
  out.labels = torch::full({b, len}, pad_id, torch::kInt64);
  out.answer_mask = torch::zeros({b, len}, torch::kBool);
  auto ids = out.ids.accessor<int64_t, 2>();
  auto labels = out.labels.accessor<int64_t, 2>();
  auto mask = out.answer_mask.accessor<bool, 2>();
  for (int64_t i = 0; i < b; ++i) {
    std::vector<int32_t> seq = examples[i]->prompt;
    seq.insert(seq.end(), examples[i]->answer.begin(),
               examples[i]->answer.end());
    const int64_t prompt = static_cast<int64_t>(examples[i]->prompt.size());
    for (int64_t t = 0; t + 1 < static_cast<int64_t>(seq.size()); ++t) {
      ids[i][t] = seq[t];
      labels[i][t] = seq[t + 1];
      mask[i][t] = t + 1 >= prompt;
    }
  }
  return out;
}

torch::Tensor AnswerLoss(text::TextModel& model, const torch::Tensor& hidden,
                         const LmBatch& batch, double label_smoothing) {
  namespace F = torch::nn::functional;
  const torch::Tensor mask = batch.answer_mask.reshape(-1).to(hidden.device());
  const torch::Tensor rows =
      hidden.reshape({-1, hidden.size(-1)}).index({mask});
  return F::cross_entropy(
      model->Unembed(rows),
      batch.labels.reshape(-1).to(hidden.device()).index({mask}),
      F::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
}

void LastPositionMasses(const std::vector<torch::Tensor>& attention,
                        const std::vector<uint8_t>& relevant, double alpha,
                        double* rollout, double* layer_mean,
                        double* layer_max) {
  const int64_t len = attention.front().size(-1);
  torch::Tensor mask = torch::zeros({len}, torch::kFloat64);
  for (size_t i = 0; i < relevant.size() && static_cast<int64_t>(i) < len; ++i)
    mask[i] = relevant[i] ? 1.0 : 0.0;
  mask = mask.to(attention.front().device());
  const torch::Tensor r = text::Rollout(attention, alpha);  // [1, L, L]
  *rollout = (r[0][len - 1].to(torch::kFloat64) * mask).sum().item<double>();
  double sum = 0, best = 0;
  for (const torch::Tensor& a : attention) {
    const double m =
        (a[0].mean(0)[len - 1].to(torch::kFloat64) * mask).sum().item<double>();
    sum += m;
    best = std::max(best, m);
  }
  *layer_mean = sum / static_cast<double>(attention.size());
  *layer_max = best;
}

std::vector<int64_t> TopPositions(const torch::Tensor& row, int64_t k) {
  const torch::Tensor r = row.to(torch::kFloat64).contiguous().cpu();
  const double* a = r.data_ptr<double>();
  std::vector<int64_t> order(r.numel());
  std::iota(order.begin(), order.end(), 0);
  k = std::min<int64_t>(k, static_cast<int64_t>(order.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [a](int64_t x, int64_t y) {
                      return a[x] > a[y] || (a[x] == a[y] && x < y);
                    });
  order.resize(k);
  return order;
}

namespace {

// p(token | seq) at seq's last position.
double NextTokenProbability(text::TextModel& model,
                            const std::vector<int64_t>& seq, int64_t token,
                            int64_t pad_id) {
  const torch::Device device = model->parameters().front().device();
  const torch::Tensor hidden =
      model
          ->forward(torch::tensor(seq, torch::kInt64).view({1, -1}).to(device),
                    pad_id)
          .hidden;
  return torch::softmax(model->Unembed(hidden[0][-1]).to(torch::kFloat64),
                        -1)[token]
      .item<double>();
}

}  // namespace

Generation Generate(text::TextModel& model, const SquadExample& example,
                    const text::Gpt2BpeTokenizer& bpe,
                    const AnswerAttentionOptions& options) {
  torch::NoGradGuard no_grad;
  const int64_t eot = bpe.end_of_text_id();
  const int64_t n_ctx = model->options().shape.n_ctx;
  const torch::Device device = model->parameters().front().device();
  std::vector<int64_t> seq(example.prompt.begin(), example.prompt.end());
  Generation g;
  for (int32_t step = 0; step < options.max_new_tokens &&
                         static_cast<int64_t>(seq.size()) <= n_ctx;
       ++step) {
    const torch::Tensor ids =
        torch::tensor(seq, torch::kInt64).view({1, -1}).to(device);
    text::TextModelOutput out = model->forward(ids, eot);
    double rollout = 0, mean = 0, max = 0;
    LastPositionMasses(out.attention, example.relevant, options.rollout_alpha,
                       &rollout, &mean, &max);
    g.rollout_mass.push_back(rollout);
    g.layer_mean_mass.push_back(mean);
    g.layer_max_mass.push_back(max);
    const torch::Tensor logits = model->Unembed(out.hidden[0][-1]);
    const int64_t next = logits.argmax().item<int64_t>();
    if (options.k_percent > 0) {
      const int64_t len = static_cast<int64_t>(seq.size());
      const int64_t k = std::max<int64_t>(
          1, static_cast<int64_t>(std::ceil(options.k_percent / 100.0 *
                                            static_cast<double>(len))));
      const torch::Tensor r =
          text::Rollout(out.attention, options.rollout_alpha);
      const std::vector<int64_t> top = TopPositions(r[0][len - 1], k);
      std::vector<bool> drop(len, false);
      std::vector<int64_t> kept, only;
      for (int64_t i : top) {
        drop[i] = true;
        only.push_back(seq[i]);
      }
      for (int64_t i = 0; i < len; ++i)
        if (!drop[i]) kept.push_back(seq[i]);
      const double p =
          torch::softmax(logits.to(torch::kFloat64), -1)[next].item<double>();
      g.comprehensiveness.push_back(
          kept.empty() ? p : p - NextTokenProbability(model, kept, next, eot));
      g.sufficiency.push_back(p - NextTokenProbability(model, only, next, eot));
    }
    if (next == eot) break;
    g.tokens.push_back(static_cast<int32_t>(next));
    seq.push_back(next);
  }
  g.text = std::string(absl::StripAsciiWhitespace(bpe.Decode(g.tokens)));
  return g;
}

namespace {

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// The mean teacher-forced probability of the gold answer's tokens
// (<|endoftext|> included).
double GoldProbability(text::TextModel& model, const SquadExample& example,
                       int64_t pad_id) {
  torch::NoGradGuard no_grad;
  const LmBatch batch = MakeLmBatch({&example}, pad_id);
  const torch::Tensor hidden =
      model->forward(batch.ids.to(model->parameters().front().device()), pad_id)
          .hidden;
  const torch::Tensor rows =
      hidden.reshape({-1, hidden.size(-1)})
          .index({batch.answer_mask.reshape(-1).to(hidden.device())});
  const torch::Tensor labels = batch.labels.reshape(-1)
                                   .index({batch.answer_mask.reshape(-1)})
                                   .to(hidden.device());
  return torch::softmax(model->Unembed(rows).to(torch::kFloat64), -1)
      .gather(-1, labels.unsqueeze(-1))
      .mean()
      .item<double>();
}

}  // namespace

AnswerEvaluation EvaluateAnswers(text::TextModel& model,
                                 const std::vector<SquadExample>& examples,
                                 const text::Gpt2BpeTokenizer& bpe,
                                 const AnswerAttentionOptions& options) {
  const bool was_training = model->is_training();
  model->eval();
  std::vector<double> f1, em, rollout, mean, max, gold, comp, suff;
  for (const SquadExample& ex : examples) {
    const Generation g = Generate(model, ex, bpe, options);
    f1.push_back(MaxF1(g.text, ex.gold));
    em.push_back(MaxExactMatch(g.text, ex.gold));
    rollout.push_back(Mean(g.rollout_mass));
    mean.push_back(Mean(g.layer_mean_mass));
    max.push_back(Mean(g.layer_max_mass));
    comp.push_back(Mean(g.comprehensiveness));
    suff.push_back(Mean(g.sufficiency));
    gold.push_back(GoldProbability(model, ex, bpe.end_of_text_id()));
  }
  if (was_training) model->train();
  AnswerEvaluation ev;
  auto& s = ev.scalars;
  s["f1"] = Mean(f1);
  s["em"] = Mean(em);
  s["answer_mass_rollout"] = Mean(rollout);
  s["answer_mass_layer_mean"] = Mean(mean);
  s["answer_mass_layer_max"] = Mean(max);
  s["gold_probability"] = Mean(gold);
  if (options.k_percent > 0) {
    s["comprehensiveness"] = Mean(comp);
    s["sufficiency"] = Mean(suff);
  }
  double ac = 0, acmc = 0;
  for (size_t i = 0; i < rollout.size(); ++i) {
    const bool attends = rollout[i] >= options.tau_attention;
    ac += attends;
    acmc += attends && gold[i] >= options.tau_probability;
  }
  const double n = std::max<double>(1.0, static_cast<double>(rollout.size()));
  s["ac"] = ac / n;
  s["acmc"] = acmc / n;
  s["examples"] = static_cast<double>(examples.size());
  ev.dtap = DtapHeatmap(rollout, gold, options.dtap_attention_edges,
                        options.dtap_probability_edges);
  ev.dtap.name = "dtap";
  ev.dtap.x_label = "rollout attention on the answer span";
  ev.dtap.y_label = "p(gold answer tokens)";
  return ev;
}

double GreedyAnswerF1(text::TextModel& model,
                      absl::Span<const SquadExample> examples,
                      const text::Gpt2BpeTokenizer& bpe,
                      int32_t max_new_tokens) {
  const bool was_training = model->is_training();
  model->eval();
  AnswerAttentionOptions options;
  options.max_new_tokens = max_new_tokens;
  options.k_percent = 0;
  std::vector<double> f1;
  for (const SquadExample& ex : examples)
    f1.push_back(MaxF1(Generate(model, ex, bpe, options).text, ex.gold));
  if (was_training) model->train();
  return Mean(f1);
}

}  // namespace qkov::training::squad
