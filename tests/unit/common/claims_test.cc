// The report's verdict rule (common/report/claims.h): reproduced where the
// faster arm is above the baseline by more than both CIs at every level both
// reach; the same data with the arms swapped is contradicted; a mix is
// partly or not reproduced; one-trial arms (a deterministic ODE) count no
// CI; levels an arm did not reach are not compared.
#include "common/report/claims.h"

#include <gtest/gtest.h>

#include <cmath>

namespace qkov::report {
namespace {

Claim RatioClaim() {
  Claim c;
  c.id = "test";
  c.metric = "distinct_attention";
  c.by = {"lr_ratio"};
  c.faster = {"20"};
  c.baseline = {"1"};
  return c;
}

// One level's two groups: (mean, ci95, n) of each arm; reached = n.
void AddLevel(v1::MatchedResponse* t, double level, double fast_mean,
              double fast_ci, double base_mean, double base_ci, int n = 3,
              int fast_reached = -1) {
  t->add_levels(level);
  for (int arm = 0; arm < 2; ++arm) {
    v1::MatchedGroup* g = t->add_groups();
    g->add_keys(arm == 0 ? "20" : "1.0");  // keys compare as numbers
    g->set_level(level);
    g->set_trials(n);
    const int reached = arm == 0 && fast_reached >= 0 ? fast_reached : n;
    g->set_reached(reached);
    v1::MetricSummary& s = (*g->mutable_metrics())["distinct_attention"];
    s.set_n(reached);
    s.set_mean(arm == 0 ? fast_mean : base_mean);
    s.set_ci95(n < 2 ? NAN : (arm == 0 ? fast_ci : base_ci));
  }
}

TEST(ClaimsTest, AboveByMoreThanBothCisAtEveryLevelIsReproduced) {
  v1::MatchedResponse t;
  AddLevel(&t, 0.5, 0.70, 0.05, 0.35, 0.01);
  AddLevel(&t, 0.2, 0.78, 0.04, 0.36, 0.01);
  const Judgement j = Judge(RatioClaim(), t);
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  ASSERT_EQ(j.levels.size(), 2u);
  EXPECT_NEAR(j.levels[0].difference, 0.35, 1e-12);
  EXPECT_NEAR(j.levels[0].margin, 0.06, 1e-12);
  // The same data read with the arms swapped.
  Claim swapped = RatioClaim();
  std::swap(swapped.faster, swapped.baseline);
  EXPECT_EQ(Judge(swapped, t).verdict, Verdict::kContradicted);
}

TEST(ClaimsTest, OverlappingCisOrMixedLevelsAreNotReproducedOrPartly) {
  v1::MatchedResponse overlap;
  AddLevel(&overlap, 0.5, 0.40, 0.05, 0.36, 0.02);  // 0.04 < 0.07
  EXPECT_EQ(Judge(RatioClaim(), overlap).verdict, Verdict::kNotReproduced);
  v1::MatchedResponse some;
  AddLevel(&some, 0.5, 0.40, 0.05, 0.36, 0.02);
  AddLevel(&some, 0.2, 0.70, 0.05, 0.36, 0.02);
  const Judgement partly = Judge(RatioClaim(), some);
  EXPECT_EQ(partly.verdict, Verdict::kPartly);
  EXPECT_EQ(partly.why,
            "the faster arm above the baseline by more than both CIs at 1 of "
            "2 levels, below at 0");
  v1::MatchedResponse mixed;
  AddLevel(&mixed, 0.5, 0.20, 0.01, 0.36, 0.02);
  AddLevel(&mixed, 0.2, 0.70, 0.05, 0.36, 0.02);
  EXPECT_EQ(Judge(RatioClaim(), mixed).verdict, Verdict::kNotReproduced);
}

TEST(ClaimsTest, OneTrialArmsSeparateOnlyWhereTheClaimIsDeterministic) {
  v1::MatchedResponse one;
  AddLevel(&one, 1.0, 0.45, 0, 0.10, 0, /*n=*/1);
  Claim ode = RatioClaim();
  ode.deterministic = true;
  EXPECT_EQ(Judge(ode, one).verdict, Verdict::kReproduced);
  // One seed of a stochastic run: no CI, so no level separates the arms.
  const Judgement seed = Judge(RatioClaim(), one);
  EXPECT_EQ(seed.verdict, Verdict::kNotReproduced);
  EXPECT_NE(seed.why.find("an arm of one trial has no CI"), std::string::npos)
      << seed.why;
}

TEST(ClaimsTest, UnreachedLevelsAreNotCompared) {
  v1::MatchedResponse unreached;
  AddLevel(&unreached, 0.5, 0.70, 0.05, 0.35, 0.01, 3, /*fast_reached=*/0);
  const Judgement j = Judge(RatioClaim(), unreached);
  EXPECT_FALSE(j.levels[0].compared);
  EXPECT_EQ(j.verdict, Verdict::kNotReproduced);
  EXPECT_EQ(j.why, "no level that both arms reached");
}

TEST(ClaimsTest, ASweepWithoutAnArmIsNotRun) {
  v1::MatchedResponse t;
  AddLevel(&t, 0.5, 0.70, 0.05, 0.35, 0.01);
  Claim other = RatioClaim();
  other.faster = {"30"};
  const Judgement j = Judge(other, t);
  EXPECT_EQ(j.verdict, Verdict::kNotRun);
  EXPECT_EQ(j.why, "the sweep has no arm lr_ratio 30");
}

TEST(ClaimsTest, EveryClaimNamesItsSweepsArmsAndPaperNumber) {
  ASSERT_GE(Claims().size(), 6u);
  for (const Claim& c : Claims()) {
    EXPECT_FALSE(c.presets.empty()) << c.id;
    EXPECT_EQ(c.faster.size(), c.by.size()) << c.id;
    EXPECT_EQ(c.baseline.size(), c.by.size()) << c.id;
    EXPECT_FALSE(c.reference.empty() || c.metric.empty() || c.paper.empty())
        << c.id;
  }
}

}  // namespace
}  // namespace qkov::report
