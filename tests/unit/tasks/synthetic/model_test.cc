// The four models against the paper's dense equations, autograd against
// finite differences, and the implicit learning-rate rescaling of a
// factorized circuit.
#include "worker/tasks/synthetic/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "worker/tasks/synthetic/synthetic_task.h"

namespace qkov::training {
namespace {

constexpr Parameterization kAll[] = {
    Parameterization::kFafo, Parameterization::kFaco, Parameterization::kCafo,
    Parameterization::kCaco};

InitOptions RandomInit() {
  InitOptions init;
  init.qk = InitKind::kDefaultLinear;
  init.ov = InitKind::kDefaultLinear;
  return init;
}

Batch SmallBatch(int n, uint64_t seed) {
  SyntheticTask task(SyntheticTaskOptions{});
  std::mt19937_64 rng(seed);
  return task.Sample(n, rng);
}

// The paper's notebook equations with dense one-hot inputs (docs/paper.md §1).
torch::Tensor DenseLogits(AttentionModel& m, const torch::Tensor& tokens) {
  const int v = m->vocab_size();
  auto x = torch::one_hot(tokens, v).to(torch::kFloat64);  // [B, T, V]
  auto xt = x.select(1, tokens.size(1) - 1);               // [B, V]
  auto params = m->named_parameters();
  torch::Tensor scores;
  if (QkFactorized(m->parameterization())) {
    auto k = x.matmul(params["w_k"].t());   // W_K x_i
    auto q = xt.matmul(params["w_q"].t());  // W_Q x_T
    scores = k.matmul(q.unsqueeze(2)).squeeze(2);
  } else {
    auto wx = x.matmul(params["w_qk"].t());          // W_QK x_i
    scores = wx.matmul(xt.unsqueeze(2)).squeeze(2);  // x_T . (W_QK x_i)
  }
  auto a = torch::softmax(scores / std::sqrt(static_cast<double>(v)), 1);
  auto values =
      OvFactorized(m->parameterization()) ? x.matmul(params["w_v"].t()) : x;
  auto ctx = (a.unsqueeze(2) * values).sum(1);
  return ctx.matmul(params["w_o"].t());
}

TEST(ModelTest, GatherFormulationEqualsPaperEquations) {
  Batch b = SmallBatch(16, 3);
  for (Parameterization p : kAll) {
    AttentionModel m(p, 50, RandomInit(), 11, torch::kFloat64);
    auto got = m->forward(b.tokens).logits;
    auto want = DenseLogits(m, b.tokens);
    EXPECT_TRUE(torch::allclose(got, want, 1e-10, 1e-12))
        << ParameterizationName(p);
  }
}

// The batched trainer's forward over stacked trials equals each trial's
// module forward (the module is that forward with one trial).
TEST(ModelTest, StackedForwardEqualsEachTrialsModule) {
  Batch b1 = SmallBatch(8, 5), b2 = SmallBatch(8, 6);
  for (Parameterization p : kAll) {
    AttentionModel m1(p, 50, RandomInit(), 21, torch::kFloat64);
    AttentionModel m2(p, 50, RandomInit(), 22, torch::kFloat64);
    ModelOutput stacked = StackedAttentionForward(
        torch::stack({m1->QkCircuit(), m2->QkCircuit()}),
        torch::stack({m1->OvCircuit(), m2->OvCircuit()}),
        torch::stack({b1.tokens, b2.tokens}));
    const ModelOutput one = m1->forward(b1.tokens),
                      two = m2->forward(b2.tokens);
    EXPECT_TRUE(torch::allclose(stacked.logits[0], one.logits, 1e-12, 1e-14))
        << ParameterizationName(p);
    EXPECT_TRUE(torch::allclose(stacked.logits[1], two.logits, 1e-12, 1e-14))
        << ParameterizationName(p);
    EXPECT_TRUE(
        torch::allclose(stacked.attention[1], two.attention, 1e-12, 1e-14))
        << ParameterizationName(p);
  }
}

TEST(ModelTest, ParameterSetsMatchParameterization) {
  EXPECT_EQ(AttentionModel(Parameterization::kFafo, 50, InitOptions{}, 1)
                ->parameters()
                .size(),
            4u);
  EXPECT_EQ(AttentionModel(Parameterization::kFaco, 50, InitOptions{}, 1)
                ->parameters()
                .size(),
            3u);
  EXPECT_EQ(AttentionModel(Parameterization::kCafo, 50, InitOptions{}, 1)
                ->parameters()
                .size(),
            3u);
  EXPECT_EQ(AttentionModel(Parameterization::kCaco, 50, InitOptions{}, 1)
                ->parameters()
                .size(),
            2u);
}

TEST(ModelTest, IdentityInitIsScaledIdentity) {
  InitOptions init;
  init.identity_scale = 1e-6;
  AttentionModel m(Parameterization::kCaco, 50, init, 1, torch::kFloat64);
  EXPECT_TRUE(
      torch::allclose(m->QkCircuit(), torch::eye(50, torch::kFloat64) * 1e-6));
}

TEST(ModelTest, AutogradMatchesCentralDifferences) {
  Batch b = SmallBatch(8, 5);
  for (Parameterization p : kAll) {
    AttentionModel m(p, 50, RandomInit(), 17, torch::kFloat64);
    auto loss_fn = [&]() {
      return torch::cross_entropy_loss(m->forward(b.tokens).logits, b.labels);
    };
    m->zero_grad();
    loss_fn().backward();
    for (auto& item : m->named_parameters()) {
      torch::Tensor w = item.value();
      torch::Tensor grad = w.grad().clone();
      // Check a spread of entries, including those the batch touches.
      for (int idx : {0, 7, 55, 263, 511, 1024, 1777, 2499}) {
        const double h = 1e-6;
        double* d = w.data_ptr<double>() + idx;
        const double orig = *d;
        double plus, minus;
        {
          torch::NoGradGuard g;
          *d = orig + h;
          plus = loss_fn().item<double>();
          *d = orig - h;
          minus = loss_fn().item<double>();
          *d = orig;
        }
        const double fd = (plus - minus) / (2 * h);
        const double ad = grad.view(-1)[idx].item<double>();
        EXPECT_NEAR(ad, fd, 1e-7 + 1e-5 * std::abs(fd))
            << ParameterizationName(p) << " " << item.key() << "[" << idx
            << "]";
      }
    }
  }
}

// One SGD step on W = W_O W_V moves W by -eta (G W_V^T W_V + W_O W_O^T G)
// + eta^2 G W_V^T W_O^T G, with G = dL/dW: the factorization rescales the
// collapsed gradient by the factors' Gram matrices (paper §"implicit
// rescaling"). Same for W_QK = W_Q^T W_K.
TEST(ModelTest, FactorizedStepFollowsChainRule) {
  Batch b = SmallBatch(16, 9);
  AttentionModel f(Parameterization::kFafo, 50, RandomInit(), 23,
                   torch::kFloat64);
  const double eta = 0.3;
  auto params = f->named_parameters();
  auto w_q = params["w_q"].detach().clone(),
       w_k = params["w_k"].detach().clone();
  auto w_v = params["w_v"].detach().clone(),
       w_o = params["w_o"].detach().clone();

  // Gradients with respect to the effective circuits, through a CACO model
  // that holds exactly those circuits.
  AttentionModel c(Parameterization::kCaco, 50, RandomInit(), 1,
                   torch::kFloat64);
  {
    torch::NoGradGuard g;
    c->named_parameters()["w_qk"].copy_(w_q.t().matmul(w_k));
    c->named_parameters()["w_o"].copy_(w_o.matmul(w_v));
  }
  torch::cross_entropy_loss(c->forward(b.tokens).logits, b.labels).backward();
  auto g_qk = c->named_parameters()["w_qk"].grad();
  auto g_ov = c->named_parameters()["w_o"].grad();

  torch::optim::SGD sgd(f->parameters(), torch::optim::SGDOptions(eta));
  torch::cross_entropy_loss(f->forward(b.tokens).logits, b.labels).backward();
  sgd.step();

  torch::NoGradGuard g;
  auto ov_before = w_o.matmul(w_v);
  auto ov_want = ov_before -
                 eta * (g_ov.matmul(w_v.t()).matmul(w_v) +
                        w_o.matmul(w_o.t()).matmul(g_ov)) +
                 eta * eta * g_ov.matmul(w_v.t()).matmul(w_o.t()).matmul(g_ov);
  EXPECT_TRUE(torch::allclose(f->OvCircuit(), ov_want, 1e-9, 1e-12));
  // A = W_Q^T W_K with W1 = W_Q^T, W2 = W_K.
  auto w1 = w_q.t(), w2 = w_k;
  auto qk_want =
      w1.matmul(w2) -
      eta * (g_qk.matmul(w2.t()).matmul(w2) + w1.matmul(w1.t()).matmul(g_qk)) +
      eta * eta * g_qk.matmul(w2.t()).matmul(w1.t()).matmul(g_qk);
  EXPECT_TRUE(torch::allclose(f->QkCircuit(), qk_want, 1e-9, 1e-12));
  // And the step is not simply the collapsed step.
  EXPECT_FALSE(
      torch::allclose(f->OvCircuit(), ov_before - eta * g_ov, 1e-6, 1e-9));
}

TEST(ModelTest, BalancednessIsZeroForEqualFactorsAndCollapsed) {
  InitOptions init;  // identity: W_O^T W_O = W_V W_V^T
  AttentionModel f(Parameterization::kFafo, 50, init, 1, torch::kFloat64);
  EXPECT_NEAR(f->OvBalancedness(), 0.0, 1e-12);
  EXPECT_NEAR(f->QkBalancedness(), 0.0, 1e-12);
  AttentionModel r(Parameterization::kFafo, 50, RandomInit(), 1,
                   torch::kFloat64);
  EXPECT_GT(r->OvBalancedness(), 0.1);
  AttentionModel c(Parameterization::kCaco, 50, RandomInit(), 1,
                   torch::kFloat64);
  EXPECT_EQ(c->OvBalancedness(), 0.0);
}

}  // namespace
}  // namespace qkov::training
