// The fixed-attention experiment (docs/paper.md §3, Fig-3): with attention held
// at alpha, the loss the OV circuit reaches falls as alpha grows, and the
// factorized OV circuit reaches a lower loss than the collapsed one.
#include <gtest/gtest.h>

#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

double FinalLoss(double alpha, bool factorized) {
  TrialOptions o;
  o.task = "fixed_attention";
  o.alpha = alpha;
  o.parameterization =
      factorized ? Parameterization::kFafo : Parameterization::kFaco;
  o.eta_ov = 0.1;
  o.max_steps = 3000;
  o.batch_size = 128;
  o.report_every = 1000;
  o.eval.num_examples = 512;
  auto r = RunTrial(o, nullptr);
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
  TrialOptions o;
  o.task = "fixed_attention";
  o.alpha = 0;
  EXPECT_EQ(RunTrial(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.alpha = 1.01;
  EXPECT_EQ(RunTrial(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qkov::training
