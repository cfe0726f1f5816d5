// Text metrics on hand-built attention patterns and on tiny models whose
// answers are known.
#include "worker/tasks/text/text_metrics.h"

#include <gtest/gtest.h>

namespace qkov::training::text {
namespace {

TEST(TextMetricsTest, RolloutOfOneLayerIsTheHeadMean) {
  torch::Tensor a = torch::rand({2, 3, 4, 4}, torch::kFloat64);
  a = a / a.sum(-1, true);
  EXPECT_TRUE(torch::allclose(Rollout({a}, 1.0), a.mean(1)));
}

TEST(TextMetricsTest, RolloutMixesTheIdentityAndMultipliesLayers) {
  // Two layers, one head: layer 1 moves all attention to position 0, layer
  // 2 to position 1. With a = 0.5: A' = 0.5 A + 0.5 I.
  torch::Tensor l1 = torch::zeros({1, 1, 2, 2}, torch::kFloat64);
  l1.select(3, 0).fill_(1);
  torch::Tensor l2 = torch::zeros({1, 1, 2, 2}, torch::kFloat64);
  l2.select(3, 1).fill_(1);
  const torch::Tensor eye = torch::eye(2, torch::kFloat64);
  const torch::Tensor a1 = 0.5 * l1[0][0] + 0.5 * eye;
  const torch::Tensor a2 = 0.5 * l2[0][0] + 0.5 * eye;
  EXPECT_TRUE(
      torch::allclose(Rollout({l1, l2}, 0.5)[0], torch::matmul(a2, a1)));
}

TEST(TextMetricsTest, DeleteAndKeepPositions) {
  const torch::Tensor ids = torch::tensor({{5, 6, 7, 8, 0}}, torch::kInt64);
  const torch::Tensor top = torch::tensor({{2, 0}}, torch::kInt64);
  EXPECT_TRUE(torch::equal(DeletePositions(ids, top, 0),
                           torch::tensor({{6, 8, 0, 0, 0}}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(KeepPositions(ids, top, 0),
                           torch::tensor({{7, 5, 0, 0, 0}}, torch::kInt64)));
}

TextModelOptions Tiny() {
  TextModelOptions o;
  o.vocab_size = 10;
  o.num_classes = 2;
  o.max_len = 8;
  o.shape.n_ctx = 8;
  o.shape.d_model = 4;
  o.shape.heads = 2;
  o.shape.d_head = 2;
  o.shape.d_mlp = 0;
  o.residual = true;
  return o;
}

EncodedText Data() {
  EncodedText d;
  d.ids = torch::tensor({{1, 2, 3, 4, 0, 0, 0, 0}, {5, 6, 7, 8, 9, 1, 2, 0}},
                        torch::kInt64);
  d.lengths = torch::tensor({4, 7});
  d.labels = torch::tensor({0, 1});
  d.rationale = torch::zeros({2, 8});
  d.rationale[0][1] = 1;
  d.rationale[0][2] = 0.5;
  d.rationale[1][0] = 1;
  d.has_rationale = torch::ones({2}, torch::kBool);
  return d;
}

// Zero QK weights: every head attends uniformly over the 8 positions the
// last query sees, so the mass is (sum of rationale weights) / 8, the same
// for every variant of one layer.
TEST(TextMetricsTest, UniformAttentionGivesTheRationaleShare) {
  TextModel m(Tiny(), Parameterization::kFafo, 3, torch::kFloat64);
  {
    torch::NoGradGuard g;
    auto p = m->named_parameters();
    p["layer0_w_q"].zero_();
    p["layer0_w_k"].zero_();
  }
  TextEvaluation ev = EvaluateText(m, Data(), 0, TextEvalOptions());
  const double want = ((1 + 0.5) / 8 + 1.0 / 8) / 2;
  for (const char* name :
       {"rationale_mass_head0", "rationale_mass", "rationale_mass_layer_max",
        "rationale_mass_rollout"}) {
    EXPECT_NEAR(ev.scalars.at(name), want, 1e-12) << name;
  }
  EXPECT_EQ(ev.scalars.at("top_k"), 1);  // ceil(0.05 * 8)
  EXPECT_NEAR(ev.scalars.at("ac"), 0, 1e-12);
}

// A classifier that ignores its input (zero weights): deleting or keeping
// tokens changes nothing, so comprehensiveness and sufficiency are 0, and
// accuracy and gold probability follow the bias.
TEST(TextMetricsTest, AnInputBlindModelHasZeroComprehensivenessAndSufficiency) {
  TextModel m(Tiny(), Parameterization::kCaco, 3, torch::kFloat64);
  {
    torch::NoGradGuard g;
    auto p = m->named_parameters();
    p["w_cls"].zero_();
    p["b_cls"].copy_(torch::tensor({2.0, 0.0}, torch::kFloat64));
  }
  TextEvaluation ev = EvaluateText(m, Data(), 0, TextEvalOptions());
  EXPECT_NEAR(ev.scalars.at("comprehensiveness"), 0, 1e-12);
  EXPECT_NEAR(ev.scalars.at("sufficiency"), 0, 1e-12);
  EXPECT_NEAR(ev.scalars.at("accuracy"), 0.5, 1e-12);
  const double p0 = 1 / (1 + std::exp(-2.0));
  EXPECT_NEAR(ev.scalars.at("gold_probability"), (p0 + (1 - p0)) / 2, 1e-12);
  double total = 0;
  for (double v : ev.dtap.values) total += v;
  EXPECT_NEAR(total, 100, 1e-9);
}

}  // namespace
}  // namespace qkov::training::text
