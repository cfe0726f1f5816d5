// The text classifier: autograd against central differences for the four
// parameterizations, the collapsed circuits equal to the products of the
// factorized ones, masks, readout positions and parameter groups.
#include "worker/tasks/text/text_model.h"

#include <gtest/gtest.h>

namespace qkov::training::text {
namespace {

constexpr Parameterization kAll[] = {
    Parameterization::kFafo, Parameterization::kFaco, Parameterization::kCafo,
    Parameterization::kCaco};

TextModelOptions Tiny() {
  TextModelOptions o;
  o.vocab_size = 12;
  o.num_classes = 3;
  o.max_len = 5;
  o.shape.n_ctx = 8;
  o.shape.d_model = 6;
  o.shape.heads = 2;
  o.shape.d_head = 3;
  o.shape.d_mlp = 5;
  o.shape.layers = 2;
  o.init_std = 0.5;  // large enough for the loss to depend on everything
  return o;
}

torch::Tensor Ids() {
  return torch::tensor({{3, 5, 7, 0, 0}, {1, 2, 4, 6, 9}, {8, 0, 0, 0, 0}},
                       torch::kInt64);
}

double Loss(TextModel& m, const torch::Tensor& ids) {
  auto out = m->forward(ids, 0);
  return torch::cross_entropy_loss(out.logits, torch::tensor({0, 2, 1}))
      .item<double>();
}

void GradCheck(TextModelOptions o) {
  for (Parameterization p : kAll) {
    TextModel m(o, p, 7, torch::kFloat64);
    // Non-zero biases, so their gradients are checked too.
    {
      torch::NoGradGuard g;
      torch::manual_seed(3);
      for (auto& t : m->parameters()) t.add_(torch::randn_like(t) * 0.1);
    }
    const torch::Tensor ids = Ids();
    for (auto& t : m->parameters()) t.mutable_grad() = torch::Tensor();
    auto out = m->forward(ids, 0);
    torch::cross_entropy_loss(out.logits, torch::tensor({0, 2, 1})).backward();
    for (const auto& item : m->named_parameters()) {
      torch::Tensor w = item.value();
      const torch::Tensor g = w.grad().clone();
      // Three entries of each parameter, central differences.
      for (int64_t k : {int64_t{0}, w.numel() / 2, w.numel() - 1}) {
        const double eps = 1e-6;
        double* x = w.data_ptr<double>() + k;
        const double keep = *x;
        *x = keep + eps;
        const double up = Loss(m, ids);
        *x = keep - eps;
        const double down = Loss(m, ids);
        *x = keep;
        const double numeric = (up - down) / (2 * eps);
        const double analytic = g.view(-1)[k].item<double>();
        EXPECT_NEAR(analytic, numeric, 1e-6 + 1e-5 * std::fabs(numeric))
            << ParameterizationName(p) << " " << item.key() << "[" << k << "]";
      }
    }
  }
}

TEST(TextModelTest, AutogradMatchesCentralDifferencesResidualMlpLayerNorm) {
  TextModelOptions o = Tiny();
  o.layer_norm = true;
  GradCheck(o);
}

TEST(TextModelTest, AutogradMatchesCentralDifferencesAttentionOnly) {
  TextModelOptions o = Tiny();
  o.residual = false;
  o.shape.d_mlp = 0;
  o.shape.layers = 1;
  o.causal = false;
  o.padding_mask = true;
  o.readout = Readout::kLastToken;
  GradCheck(o);
}

// Logits() (the last layer at the readout positions, query and OV factors
// folded) is forward()'s function: the same logits and the same gradient
// of every parameter, in double, for each parameterization and shape of
// block (the authors' two, and two layers with LayerNorm).
void ExpectLogitsMatchForward(const TextModelOptions& o) {
  for (Parameterization p : kAll) {
    TextModel m(o, p, 5, torch::kFloat64);
    {
      torch::NoGradGuard g;
      torch::manual_seed(4);
      for (auto& t : m->parameters()) t.add_(torch::randn_like(t) * 0.1);
    }
    const torch::Tensor labels = torch::tensor({0, 2, 1});
    auto gradients = [&](const torch::Tensor& logits) {
      for (auto& t : m->parameters()) t.mutable_grad() = torch::Tensor();
      torch::cross_entropy_loss(logits, labels).backward();
      std::vector<torch::Tensor> g;
      for (auto& t : m->parameters()) g.push_back(t.grad().clone());
      return g;
    };
    const torch::Tensor full = m->forward(Ids(), 0).logits;
    const std::vector<torch::Tensor> full_grad = gradients(full);
    const torch::Tensor folded = m->Logits(Ids(), 0);
    const std::vector<torch::Tensor> folded_grad = gradients(folded);
    EXPECT_TRUE(torch::allclose(folded, full, 1e-12, 1e-12))
        << ParameterizationName(p) << "\n"
        << folded << "\n"
        << full;
    const auto names = m->named_parameters().keys();
    for (size_t i = 0; i < full_grad.size(); ++i) {
      // (b_K shifts every key's score alike: no gradient under softmax.)
      if (names[i].find("b_k") == std::string::npos) {
        EXPECT_GT(full_grad[i].abs().max().item<double>(), 1e-6)
            << ParameterizationName(p) << " " << names[i];
      }
      EXPECT_TRUE(torch::allclose(folded_grad[i], full_grad[i], 1e-10, 1e-12))
          << ParameterizationName(p) << " " << names[i];
    }
  }
}

// The trainer's sparse embedding gradient, added into a dense buffer, is
// the dense gradient bit for bit (float, as training runs, with tokens
// repeated within and across examples), and leaves the buffer dense.
TEST(TextModelTest, SparseEmbeddingGradientIsTheDenseOne) {
  for (Parameterization p : kAll) {
    TextModel m(Tiny(), p, 9);
    const torch::Tensor labels = torch::tensor({0, 2, 1});
    auto gradients = [&](bool sparse) {
      m->set_sparse_embedding_gradient(sparse);
      for (auto& t : m->parameters()) t.mutable_grad() = torch::Tensor();
      if (sparse) {  // as the trainer keeps it: dense, zeroed
        torch::Tensor w_e = m->named_parameters()["w_e"];
        w_e.mutable_grad() = torch::zeros_like(w_e);
      }
      torch::cross_entropy_loss(m->Logits(Ids(), 0), labels).backward();
      std::vector<torch::Tensor> g;
      for (auto& t : m->parameters()) g.push_back(t.grad().clone());
      return g;
    };
    const std::vector<torch::Tensor> dense = gradients(false);
    const std::vector<torch::Tensor> sparse = gradients(true);
    const auto names = m->named_parameters().keys();
    for (size_t i = 0; i < dense.size(); ++i) {
      ASSERT_EQ(sparse[i].layout(), torch::kStrided) << names[i];
      EXPECT_TRUE(torch::equal(sparse[i], dense[i]))
          << ParameterizationName(p) << " " << names[i];
    }
    ASSERT_EQ(names[0], "w_e");
    EXPECT_GT(dense[0].abs().sum().item<double>(), 0);  // not vacuous
    // Without a buffer the gradient stays sparse: the sparse path ran.
    m->parameters()[0].mutable_grad() = torch::Tensor();
    torch::cross_entropy_loss(m->Logits(Ids(), 0), labels).backward();
    EXPECT_TRUE(m->parameters()[0].grad().is_sparse());
  }
}

// A model that keeps the rows of the tokens it reads, fed the ids
// renumbered into them, is the whole-vocabulary model: the same logits and
// the same gradients (the kept rows' and every other parameter's) bit for
// bit, and no gradient left for the rows it dropped.
TEST(TextModelTest, KeptVocabularyRowsComputeWhatTheWholeVocabularyDoes) {
  // Ids() holds tokens 0-9 but not 10 and 11, nor (below) 5 and 7.
  const torch::Tensor ids = torch::tensor(
      {{3, 1, 9, 0, 0}, {1, 2, 4, 6, 9}, {8, 0, 0, 0, 0}}, torch::kInt64);
  const torch::Tensor rows = torch::tensor({0, 1, 2, 3, 4, 6, 8, 9});
  torch::Tensor renumber = torch::full({12}, -1, torch::kInt64);
  renumber.index_put_({rows}, torch::arange(rows.size(0), torch::kInt64));
  const torch::Tensor kept_ids =
      renumber.index_select(0, ids.reshape(-1)).view_as(ids);
  const torch::Tensor labels = torch::tensor({0, 2, 1});
  for (Parameterization p : kAll) {
    TextModel whole(Tiny(), p, 11), kept(Tiny(), p, 11);
    kept->KeepVocabularyRows(rows);
    EXPECT_EQ(kept->options().vocab_size, 8);
    const torch::Tensor a = whole->Logits(ids, 0);
    const torch::Tensor b = kept->Logits(kept_ids, 0);
    EXPECT_TRUE(torch::equal(a, b)) << ParameterizationName(p);
    torch::cross_entropy_loss(a, labels).backward();
    torch::cross_entropy_loss(b, labels).backward();
    auto whole_params = whole->named_parameters();
    for (const auto& item : kept->named_parameters()) {
      const torch::Tensor g = item.value().grad();
      torch::Tensor expected = whole_params[item.key()].grad();
      if (item.key() == "w_e") {
        EXPECT_EQ(expected.index_select(0, renumber.eq(-1).nonzero().view(-1))
                      .abs()
                      .max()
                      .item<float>(),
                  0);
        expected = expected.index_select(0, rows);
      }
      EXPECT_TRUE(torch::equal(g, expected))
          << ParameterizationName(p) << " " << item.key();
    }
  }
}

TEST(TextModelTest, ReadoutLogitsMatchForwardHateXplainBlock) {
  TextModelOptions o = Tiny();
  o.shape.layers = 1;  // causal, residual, MLP, no LayerNorm, first-pad readout
  ExpectLogitsMatchForward(o);
}

TEST(TextModelTest, ReadoutLogitsMatchForwardAttentionOnlyBlock) {
  TextModelOptions o = Tiny();
  o.residual = false;
  o.shape.d_mlp = 0;
  o.shape.layers = 1;
  o.causal = false;
  o.padding_mask = true;
  o.readout = Readout::kLastToken;
  ExpectLogitsMatchForward(o);
}

TEST(TextModelTest, ReadoutLogitsMatchForwardTwoLayersLayerNormBothMasks) {
  TextModelOptions o = Tiny();
  o.layer_norm = true;
  o.padding_mask = true;
  ExpectLogitsMatchForward(o);
}

// CACO with W_QK = W_Q W_K^T and W_OV = W_V W_O per head computes what FAFO
// computes (zero QK and V biases).
TEST(TextModelTest, CollapsedCircuitsAreTheProductsOfTheFactors) {
  const TextModelOptions o = Tiny();
  TextModel fa(o, Parameterization::kFafo, 11, torch::kFloat64);
  TextModel ca(o, Parameterization::kCaco, 12, torch::kFloat64);
  {
    torch::NoGradGuard g;
    auto f = fa->named_parameters();
    auto c = ca->named_parameters();
    for (std::string n : {"w_e", "w_pos", "w_cls", "b_cls"}) c[n].copy_(f[n]);
    for (int l = 0; l < o.shape.layers; ++l) {
      const std::string p = "layer" + std::to_string(l) + "_";
      c[p + "w_qk"].copy_(
          torch::matmul(f[p + "w_q"], f[p + "w_k"].transpose(1, 2)));
      c[p + "w_ov"].copy_(torch::matmul(f[p + "w_v"], f[p + "w_o"]));
      c[p + "u_qk"].zero_();
      for (std::string n : {"b_o", "w_in", "b_in", "w_out", "b_out"})
        c[p + n].copy_(f[p + n]);
    }
  }
  auto a = fa->forward(Ids(), 0), b = ca->forward(Ids(), 0);
  EXPECT_TRUE(torch::allclose(a.logits, b.logits, 1e-10, 1e-12));
  EXPECT_TRUE(torch::allclose(a.attention[1], b.attention[1], 1e-10, 1e-12));
}

TEST(TextModelTest, MasksAndReadoutPositions) {
  TextModelOptions o = Tiny();
  TextModel causal(o, Parameterization::kFafo, 1, torch::kFloat64);
  auto out = causal->forward(Ids(), 0);
  const torch::Tensor a = out.attention[0];
  EXPECT_TRUE(
      torch::allclose(a.sum(-1), torch::ones({3, 2, 5}, torch::kFloat64)));
  EXPECT_LT(a.triu(1).abs().max().item<double>(), 1e-30);  // causal
  // First pad: 3, none (position 0, as the authors' argmax), 1.
  EXPECT_TRUE(torch::equal(out.readout, torch::tensor({3, 0, 1})));

  o.causal = false;
  o.padding_mask = true;
  o.readout = Readout::kLastToken;
  TextModel padded(o, Parameterization::kCaco, 1, torch::kFloat64);
  out = padded->forward(Ids(), 0);
  // Pad keys get no attention; the last real token is read.
  EXPECT_LT(out.attention[0][0].select(-1, 4).abs().max().item<double>(),
            1e-30);
  EXPECT_TRUE(torch::equal(out.readout, torch::tensor({2, 4, 0})));
}

TEST(TextModelTest, ParameterGroupsNameEveryParameterOnce) {
  TextModel m(Tiny(), Parameterization::kFafo, 1);
  auto groups = m->ParamGroups(ParamGroup::kQk, ParamGroup::kOv);
  EXPECT_EQ(groups.size(), m->parameters().size());
  std::map<std::string, ParamGroup> g(groups.begin(), groups.end());
  EXPECT_EQ(g.at("w_e"), ParamGroup::kQk);
  EXPECT_EQ(g.at("w_pos"), ParamGroup::kOv);
  EXPECT_EQ(g.at("layer0_w_q"), ParamGroup::kQk);
  EXPECT_EQ(g.at("layer0_b_k"), ParamGroup::kQk);
  EXPECT_EQ(g.at("layer0_w_v"), ParamGroup::kOv);
  EXPECT_EQ(g.at("layer1_b_o"), ParamGroup::kOv);
  EXPECT_EQ(g.at("layer0_w_in"), ParamGroup::kMlp);
  EXPECT_EQ(g.at("w_cls"), ParamGroup::kOv);
}

}  // namespace
}  // namespace qkov::training::text
