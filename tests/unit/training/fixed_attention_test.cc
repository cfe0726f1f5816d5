// The fixed-attention experiment (docs/paper.md §3, Fig-3): with attention held
// at alpha, the loss the OV circuit reaches falls as alpha grows, and the
// factorized OV circuit reaches a lower loss than the collapsed one.
#include "worker/training/fixed_attention.h"

#include <gtest/gtest.h>

namespace qkov::training {
namespace {

double FinalLoss(double alpha, bool factorized) {
  FixedAttentionOptions o;
  o.alpha = alpha;
  o.factorized = factorized;
  o.trial.eta_ov = 0.1;
  o.trial.max_steps = 3000;
  o.trial.batch_size = 128;
  o.trial.report_every = 1000;
  o.trial.eval.num_examples = 512;
  auto r = RunFixedAttention(o, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->results.at("loss") : 0;
}

TEST(FixedAttentionTest, LossFallsWithAlphaAndFactorizedWins) {
  double last_collapsed = 1e9, last_factorized = 1e9;
  for (double alpha : {0.2, 0.6, 1.0}) {
    const double c = FinalLoss(alpha, false), f = FinalLoss(alpha, true);
    EXPECT_LT(c, last_collapsed) << alpha;
    EXPECT_LT(f, last_factorized) << alpha;
    EXPECT_LT(f, c) << alpha;
    last_collapsed = c;
    last_factorized = f;
  }
}

TEST(FixedAttentionTest, RefusesAlphaOutsideUnitInterval) {
  FixedAttentionOptions o;
  o.alpha = 0;
  EXPECT_EQ(RunFixedAttention(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.alpha = 1.01;
  EXPECT_EQ(RunFixedAttention(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qkov::training
