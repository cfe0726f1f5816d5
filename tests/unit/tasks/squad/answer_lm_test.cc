// The SQuAD decoder: the teacher-forcing layout, a loss that only answer
// tokens reach, autograd against central differences with the tied LM head
// (four parameterizations), answer-span attention on hand-built attention,
// and greedy generation.
#include "worker/tasks/squad/answer_lm.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/training/shared_data.h"
#include "worker/tasks/text/text_metrics.h"

namespace qkov::training::squad {
namespace {

constexpr Parameterization kAll[] = {
    Parameterization::kFafo, Parameterization::kFaco, Parameterization::kCafo,
    Parameterization::kCaco};

text::TextModelOptions TinyDecoder() {
  text::TextModelOptions o;
  o.vocab_size = 11;
  o.shape.n_ctx = 12;
  o.shape.d_model = 6;
  o.shape.heads = 2;
  o.shape.d_head = 3;
  o.shape.d_mlp = 8;
  o.shape.layers = 2;
  o.layer_norm = true;
  o.causal = true;
  o.padding_mask = false;
  o.lm_head = true;
  o.gelu_tanh = false;
  o.init_std = 0.5;
  return o;
}

// Two questions: prompts of 4 and 3 tokens, answers of 2 and 3 (the last
// is the end-of-text id 10, also the pad).
std::vector<SquadExample> Examples() {
  std::vector<SquadExample> e(2);
  e[0].prompt = {1, 2, 3, 4};
  e[0].relevant = {0, 1, 1, 0};
  e[0].answer = {2, 10};
  e[1].prompt = {5, 6, 7};
  e[1].relevant = {1, 0, 0};
  e[1].answer = {5, 9, 10};
  return e;
}

TEST(AnswerLmTest, TeacherForcingLayout) {
  const std::vector<SquadExample> e = Examples();
  const LmBatch b = MakeLmBatch({&e[0], &e[1]}, 10);
  EXPECT_TRUE(b.ids.equal(torch::tensor({{1, 2, 3, 4, 2}, {5, 6, 7, 5, 9}})));
  EXPECT_TRUE(
      b.labels.equal(torch::tensor({{2, 3, 4, 2, 10}, {6, 7, 5, 9, 10}})));
  // The first answer token is predicted at the prompt's last position.
  EXPECT_TRUE(b.answer_mask.equal(
      torch::tensor({{0, 0, 0, 1, 1}, {0, 0, 1, 1, 1}}).to(torch::kBool)));
}

std::vector<torch::Tensor> Grads(text::TextModel& m, const LmBatch& b) {
  for (auto& t : m->parameters()) t.mutable_grad() = torch::Tensor();
  AnswerLoss(m, m->forward(b.ids, 10).hidden, b, 0.1).backward();
  std::vector<torch::Tensor> g;
  for (auto& t : m->parameters()) g.push_back(t.grad().clone());
  return g;
}

TEST(AnswerLmTest, PromptLabelsDoNotReachTheGradient) {
  text::TextModel m(TinyDecoder(), Parameterization::kFafo, 3, torch::kFloat64);
  const std::vector<SquadExample> e = Examples();
  LmBatch b = MakeLmBatch({&e[0], &e[1]}, 10);
  const std::vector<torch::Tensor> base = Grads(m, b);
  // Another label at a prompt position (example 0, position 1): the same
  // gradient, bit for bit.
  b.labels[0][1] = 8;
  const std::vector<torch::Tensor> prompt_changed = Grads(m, b);
  for (size_t i = 0; i < base.size(); ++i)
    EXPECT_TRUE(base[i].equal(prompt_changed[i])) << i;
  // Another label at an answer position changes it.
  b.labels[0][3] = 8;
  const std::vector<torch::Tensor> answer_changed = Grads(m, b);
  bool any = false;
  for (size_t i = 0; i < base.size(); ++i)
    any |= !base[i].equal(answer_changed[i]);
  EXPECT_TRUE(any);
}

TEST(AnswerLmTest, AutogradMatchesCentralDifferencesWithTiedHead) {
  const std::vector<SquadExample> e = Examples();
  const LmBatch b = MakeLmBatch({&e[0], &e[1]}, 10);
  for (Parameterization p : kAll) {
    text::TextModel m(TinyDecoder(), p, 5, torch::kFloat64);
    {
      torch::NoGradGuard g;
      torch::manual_seed(4);
      for (auto& t : m->parameters()) t.add_(torch::randn_like(t) * 0.1);
    }
    auto loss = [&] {
      torch::NoGradGuard g;
      return AnswerLoss(m, m->forward(b.ids, 10).hidden, b, 0.1).item<double>();
    };
    const std::vector<torch::Tensor> grads = Grads(m, b);
    size_t i = 0;
    for (const auto& item : m->named_parameters()) {
      torch::Tensor w = item.value();
      for (int64_t k : {int64_t{0}, w.numel() / 2, w.numel() - 1}) {
        const double eps = 1e-6;
        double* x = w.data_ptr<double>() + k;
        const double keep = *x;
        *x = keep + eps;
        const double up = loss();
        *x = keep - eps;
        const double down = loss();
        *x = keep;
        const double numeric = (up - down) / (2 * eps);
        EXPECT_NEAR(grads[i].view(-1)[k].item<double>(), numeric,
                    1e-6 + 1e-5 * std::fabs(numeric))
            << ParameterizationName(p) << " " << item.key() << "[" << k << "]";
      }
      ++i;
    }
    EXPECT_EQ(m->named_parameters().find("w_cls"), nullptr);
  }
}

TEST(AnswerLmTest, AnswerAttentionOnHandBuiltAttention) {
  // Two layers, one head, three positions. With a = 0.5 the mixed rows are
  // A1' last row [.1 .15 .75], A2' = [[1 0 0] [.2 .8 0] [.3 .1 .6]], so the
  // rollout's last row is .3 A1'[0] + .1 A1'[1] + .6 A1'[2] =
  // [.385 .165 .45].
  const torch::Tensor a1 =
      torch::tensor({{1.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.2, 0.3, 0.5}})
          .view({1, 1, 3, 3});
  const torch::Tensor a2 =
      torch::tensor({{1.0, 0.0, 0.0}, {0.4, 0.6, 0.0}, {0.6, 0.2, 0.2}})
          .view({1, 1, 3, 3});
  double rollout = 0, mean = 0, max = 0;
  LastPositionMasses({a1, a2}, {1, 0}, 0.5, &rollout, &mean, &max);
  EXPECT_NEAR(rollout, 0.385, 1e-6);
  EXPECT_NEAR(mean, 0.4, 1e-6);  // (.2 + .6) / 2
  EXPECT_NEAR(max, 0.6, 1e-6);
  LastPositionMasses({a1, a2}, {0, 1}, 0.5, &rollout, &mean, &max);
  EXPECT_NEAR(rollout, 0.165, 1e-6);
  EXPECT_NEAR(mean, 0.25, 1e-6);  // (.3 + .2) / 2
  EXPECT_NEAR(max, 0.3, 1e-6);
  // Generated positions (past the prompt) are never relevant; a = 1 is
  // plain attention of one layer.
  LastPositionMasses({a1}, {1}, 1.0, &rollout, &mean, &max);
  EXPECT_NEAR(rollout, 0.2, 1e-6);
}

TEST(AnswerLmTest, TopPositionsMostAttendedFirst) {
  const torch::Tensor row = torch::tensor({0.1, 0.4, 0.4, 0.05, 0.05});
  EXPECT_EQ(TopPositions(row, 2), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(TopPositions(row, 3), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(TopPositions(row, 9), (std::vector<int64_t>{1, 2, 0, 3, 4}));
}

TEST(AnswerLmTest, GreedyGenerationTakesTheArgmaxAtEveryStep) {
  auto bpe = text::Gpt2BpeTokenizer::Load(testing::SharedGpt2Options());
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  text::TextModelOptions o = TinyDecoder();
  o.vocab_size = (*bpe)->vocab_size();
  o.shape.d_model = 8;
  o.shape.n_ctx = 32;
  for (Parameterization p : kAll) {
    text::TextModel m(o, p, 11);
    m->eval();
    SquadExample ex;
    ex.prompt = (*bpe)->Encode("Q: Who? C: Ann met Bob. A:");
    ex.relevant.assign(ex.prompt.size(), 0);
    ex.relevant[5] = ex.relevant[6] = 1;
    AnswerAttentionOptions ao;
    ao.max_new_tokens = 6;
    const Generation g = Generate(m, ex, **bpe, ao);
    // One attention record per forward; each token is that forward's argmax
    // (the model has not learned to stop, so it runs to the budget unless
    // it picks <|endoftext|>).
    ASSERT_EQ(g.rollout_mass.size(), g.layer_mean_mass.size());
    ASSERT_EQ(g.comprehensiveness.size(), g.rollout_mass.size());
    ASSERT_EQ(g.sufficiency.size(), g.rollout_mass.size());
    ASSERT_GE(g.rollout_mass.size(), g.tokens.size());
    ASSERT_LE(g.rollout_mass.size(), 6u);
    std::vector<int64_t> seq(ex.prompt.begin(), ex.prompt.end());
    torch::NoGradGuard no_grad;
    for (size_t step = 0; step < g.rollout_mass.size(); ++step) {
      auto out = m->forward(torch::tensor(seq).view({1, -1}),
                            (*bpe)->end_of_text_id());
      const int64_t next =
          m->Unembed(out.hidden[0][-1]).argmax().item<int64_t>();
      double rollout = 0, mean = 0, max = 0;
      LastPositionMasses(out.attention, ex.relevant, ao.rollout_alpha, &rollout,
                         &mean, &max);
      EXPECT_DOUBLE_EQ(g.rollout_mass[step], rollout);
      // Comprehensiveness and sufficiency at this step, recomputed: the
      // chosen token's probability, without and with only the top-k
      // rollout positions (k = ceil(5% of the length)).
      const int64_t len = static_cast<int64_t>(seq.size());
      const int64_t k = (len + 19) / 20;
      const std::vector<int64_t> top = TopPositions(
          text::Rollout(out.attention, ao.rollout_alpha)[0][len - 1], k);
      ASSERT_EQ(static_cast<int64_t>(top.size()), k);
      std::vector<int64_t> kept, only;
      for (int64_t i = 0; i < len; ++i)
        if (std::find(top.begin(), top.end(), i) == top.end())
          kept.push_back(seq[i]);
      for (int64_t i : top) only.push_back(seq[i]);
      auto prob = [&](const std::vector<int64_t>& s) {
        auto o = m->forward(torch::tensor(s).view({1, -1}), 0);
        return torch::softmax(m->Unembed(o.hidden[0][-1]).to(torch::kFloat64),
                              -1)[next]
            .item<double>();
      };
      const double chosen = prob(seq);
      EXPECT_NEAR(g.comprehensiveness[step], chosen - prob(kept), 1e-6);
      EXPECT_NEAR(g.sufficiency[step], chosen - prob(only), 1e-6);
      EXPECT_DOUBLE_EQ(g.layer_max_mass[step], max);
      EXPECT_GT(rollout, 0);
      EXPECT_LT(rollout, 1);
      if (step == g.tokens.size()) {
        EXPECT_EQ(next, (*bpe)->end_of_text_id());
        break;
      }
      EXPECT_EQ(g.tokens[step], next)
          << ParameterizationName(p) << " step " << step;
      seq.push_back(next);
    }
  }
}

}  // namespace
}  // namespace qkov::training::squad
