// The report's verdict rule (common/report/claims.h): a level counts for
// the claim where the faster arm is better by at least the claim's effect
// and by more than both CIs; a difference inside the effect is never
// "reproduced", however tight its CIs; CIs too wide to tell give
// "inconclusive" with the seeds per arm that would decide it; the same data
// with the arms swapped is contradicted; one-trial arms (a deterministic ODE)
// count no CI; levels an arm did not reach are not compared. A claim of
// closeness (comparable accuracy) is reproduced where the arms' difference,
// widened by both CIs, is within a tolerance derived from the paper's own
// arms. A claim against the paper's numbers is reproduced where ours are
// within the digits the notebook prints.
#include "common/report/claims.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/aggregate.h"

namespace qkov::report {
namespace {

Claim RatioClaim() {
  Claim c;
  c.id = "test";
  c.metric = "distinct_attention";
  c.by = {"lr_ratio"};
  c.faster = {"20"};
  c.baseline = {"1"};
  c.effect = 0.1;
  return c;
}

// One level's two groups: (mean, ci95, n) of each arm; reached = n. The
// standard deviation is the one the CI implies.
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
    const double ci = arm == 0 ? fast_ci : base_ci;
    s.set_ci95(n < 2 ? NAN : ci);
    s.set_std(n < 2
                  ? NAN
                  : ci * std::sqrt(double(n)) / StudentTQuantile(0.975, n - 1));
  }
}

TEST(ClaimsTest, AboveByTheEffectAndBothCisAtEveryLevelIsReproduced) {
  v1::MatchedResponse t;
  AddLevel(&t, 0.5, 0.70, 0.05, 0.35, 0.01);
  AddLevel(&t, 0.2, 0.78, 0.04, 0.36, 0.01);
  const Judgement j = Judge(RatioClaim(), t);
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  ASSERT_EQ(j.levels.size(), 2u);
  EXPECT_NEAR(j.levels[0].difference, 0.35, 1e-12);
  EXPECT_NEAR(j.levels[0].margin, 0.06, 1e-12);
  EXPECT_EQ(j.levels[0].reading, LevelReading::kFor);
  // The same data read with the arms swapped.
  Claim swapped = RatioClaim();
  std::swap(swapped.faster, swapped.baseline);
  EXPECT_EQ(Judge(swapped, t).verdict, Verdict::kContradicted);
}

TEST(ClaimsTest, ADifferenceInsideTheEffectIsNeverReproducedHoweverTight) {
  // 0.3513 against 0.3491 with CIs of 1e-4: beyond both CIs, far inside the
  // effect. The arms were measured closer than the claim needs.
  for (double ci : {1e-3, 1e-4, 1e-6}) {
    v1::MatchedResponse t;
    AddLevel(&t, 0.78, 0.3513, ci, 0.3491, ci);
    const Judgement j = Judge(RatioClaim(), t);
    EXPECT_EQ(j.levels[0].reading, LevelReading::kEqual) << ci;
    EXPECT_EQ(j.verdict, Verdict::kNotReproduced) << j.why;
  }
  // Just past the effect, with tight CIs: it counts.
  v1::MatchedResponse at;
  AddLevel(&at, 0.78, 0.4501, 1e-4, 0.3491, 1e-4);
  EXPECT_EQ(Judge(RatioClaim(), at).verdict, Verdict::kReproduced);
}

TEST(ClaimsTest, CisTooWideToTellAreInconclusiveWithTheSeedsThatWouldDecide) {
  // Higher by 0.06 (inside the effect 0.1), CIs 0.08 each: the CIs reach
  // past the effect, so the level cannot tell "equal" from "for".
  v1::MatchedResponse t;
  AddLevel(&t, 0.8, 0.41, 0.08, 0.35, 0.08);
  const Judgement j = Judge(RatioClaim(), t);
  EXPECT_EQ(j.levels[0].reading, LevelReading::kInconclusive);
  EXPECT_EQ(j.verdict, Verdict::kInconclusive) << j.why;
  ASSERT_GT(j.seeds_to_decide, 3);
  EXPECT_EQ(j.seeds_to_decide, j.levels[0].seeds_to_decide);
  EXPECT_NE(j.why.find(absl::StrCat("about ", j.seeds_to_decide,
                                    " seeds per arm would decide")),
            std::string::npos)
      << j.why;
  // With that many seeds and the same means and spreads, the level decides
  // (the arms measured closer than the effect); with one fewer it does not.
  const double sd = j.levels[0].faster_value.std();
  for (int n : {j.seeds_to_decide, j.seeds_to_decide - 1}) {
    const double ci = StudentTQuantile(0.975, n - 1) * sd / std::sqrt(n);
    v1::MatchedResponse more;
    AddLevel(&more, 0.8, 0.41, ci, 0.35, ci, n);
    EXPECT_EQ(Judge(RatioClaim(), more).levels[0].reading,
              n == j.seeds_to_decide ? LevelReading::kEqual
                                     : LevelReading::kInconclusive)
        << n;
  }
  // Above the effect but inside the CIs: inconclusive too.
  v1::MatchedResponse wide;
  AddLevel(&wide, 0.8, 0.50, 0.2, 0.35, 0.01);
  EXPECT_EQ(Judge(RatioClaim(), wide).verdict, Verdict::kInconclusive);
  EXPECT_EQ(SeedsToDecide(0.15, 0.1, 0, 0, false), 0);  // no spread known
}

TEST(ClaimsTest, MixedLevelsArePartlyOrNotReproduced) {
  v1::MatchedResponse some;
  AddLevel(&some, 0.5, 0.40, 0.01, 0.36, 0.01);  // equal
  AddLevel(&some, 0.2, 0.70, 0.05, 0.36, 0.02);  // for
  const Judgement partly = Judge(RatioClaim(), some);
  EXPECT_EQ(partly.verdict, Verdict::kPartly);
  EXPECT_EQ(partly.why,
            "the faster arm above the baseline by at least the effect (0.1) "
            "and both CIs at 1 of 2 levels, the baseline so at 0; the arms "
            "closer than the effect at 1");
  v1::MatchedResponse mixed;
  AddLevel(&mixed, 0.5, 0.20, 0.01, 0.36, 0.02);  // against
  AddLevel(&mixed, 0.2, 0.70, 0.05, 0.36, 0.02);  // for
  EXPECT_EQ(Judge(RatioClaim(), mixed).verdict, Verdict::kNotReproduced);
}

TEST(ClaimsTest, OneTrialArmsSeparateOnlyWhereTheClaimIsDeterministic) {
  v1::MatchedResponse one;
  AddLevel(&one, 1.0, 0.45, 0, 0.10, 0, /*n=*/1);
  Claim ode = RatioClaim();
  ode.deterministic = true;
  EXPECT_EQ(Judge(ode, one).verdict, Verdict::kReproduced);
  // One seed of a stochastic run: no CI, so no level can be decided.
  const Judgement seed = Judge(RatioClaim(), one);
  EXPECT_EQ(seed.verdict, Verdict::kInconclusive);
  EXPECT_NE(seed.why.find("an arm of one trial has no CI"), std::string::npos)
      << seed.why;
}

TEST(ClaimsTest, UnreachedLevelsAreNotCompared) {
  v1::MatchedResponse unreached;
  AddLevel(&unreached, 0.5, 0.70, 0.05, 0.35, 0.01, 3, /*fast_reached=*/0);
  const Judgement j = Judge(RatioClaim(), unreached);
  EXPECT_FALSE(j.levels[0].compared);
  EXPECT_EQ(j.verdict, Verdict::kInconclusive);
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

// An equal-steps claim (fixed attention's: FAFO's final loss below CACO's at
// each alpha) read from rows as `qkov results --by parameterization,alpha
// --metrics loss --where state=done` groups them.
Claim LossClaim() {
  Claim c;
  c.id = "loss";
  c.comparison = Comparison::kEqualSteps;
  c.lower_is_better = true;
  c.reference = "alpha";
  c.metric = "loss";
  c.by = {"parameterization"};
  c.faster = {"FAFO"};
  c.baseline = {"CACO"};
  c.effect = 0.0005;
  return c;
}

v1::ResultRow Row(v1::Parameterization p, double alpha, uint64_t seed,
                  double loss, v1::TrialState state = v1::DONE) {
  v1::ResultRow r;
  r.set_trial_id(absl::StrCat(p, "-", alpha, "-", seed));
  r.mutable_config()->set_parameterization(p);
  r.mutable_config()->set_alpha(alpha);
  r.mutable_config()->set_seed(seed);
  r.mutable_config()->mutable_training()->set_task(v1::TASK_FIXED_ATTENTION);
  r.set_state(state);
  (*r.mutable_values())["loss"] = loss;
  return r;
}

TEST(ClaimsTest, EqualStepsTableIsTheAggregateOfFinishedTrialsAtEachLevel) {
  google::protobuf::RepeatedPtrField<v1::ResultRow> rows;
  const double fafo[2][3] = {{0.004, 0.005, 0.003}, {0.0006, 0.0007, 0.0005}};
  const double caco[2][3] = {{0.60, 0.58, 0.61}, {0.035, 0.034, 0.036}};
  const double alphas[2] = {0.2, 0.8};
  for (int a = 0; a < 2; ++a) {
    for (int s = 0; s < 3; ++s) {
      *rows.Add() = Row(v1::FAFO, alphas[a], s + 1, fafo[a][s]);
      *rows.Add() = Row(v1::CACO, alphas[a], s + 1, caco[a][s]);
    }
  }
  // Unfinished or failed trials are not part of an equal-steps comparison.
  *rows.Add() = Row(v1::FAFO, 0.2, 9, 50.0, v1::FAILED);
  *rows.Add() = Row(v1::CACO, 0.8, 9, 1e-9, v1::RUNNING);
  absl::StatusOr<v1::MatchedResponse> t = EqualStepsTable(LossClaim(), rows);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->levels_size(), 2);
  EXPECT_EQ(t->levels(0), 0.2);
  EXPECT_EQ(t->levels(1), 0.8);
  // Each arm and level: the summary `qkov results --by` prints.
  for (const v1::MatchedGroup& g : t->groups()) {
    const int a = g.level() == 0.2 ? 0 : 1;
    const double* v = g.keys(0) == "FAFO" ? fafo[a] : caco[a];
    const Summary want = Summarize({v[0], v[1], v[2]});
    const v1::MetricSummary& got = g.metrics().at("loss");
    EXPECT_EQ(got.n(), 3) << g.keys(0) << " " << g.level();
    EXPECT_EQ(g.reached(), 3);
    EXPECT_DOUBLE_EQ(got.mean(), want.mean);
    EXPECT_DOUBLE_EQ(got.ci95(), want.ci95);
  }
  const Judgement j = Judge(LossClaim(), *t);
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  EXPECT_EQ(j.why,
            "the faster arm below the baseline by at least the effect "
            "(0.0005) and both CIs at 2 of 2 levels, the baseline so at 0; "
            "the arms closer than the effect at 0");
  EXPECT_GT(j.levels[0].difference, 0);  // the advantage: CACO - FAFO
  EXPECT_EQ(LevelName(LossClaim()), "alpha");
  EXPECT_EQ(LevelText(LossClaim(), 0.2), "0.2");
  // The arms swapped, the verdict flips.
  Claim swapped = LossClaim();
  std::swap(swapped.faster, swapped.baseline);
  EXPECT_EQ(Judge(swapped, *t).verdict, Verdict::kContradicted);
  // Higher read as better, the same data contradicts the claim.
  Claim higher = LossClaim();
  higher.lower_is_better = false;
  EXPECT_EQ(Judge(higher, *t).verdict, Verdict::kContradicted);
}

TEST(ClaimsTest, EqualStepsWithoutAnAxisComparesTheEndAndRefusesUnknownKeys) {
  google::protobuf::RepeatedPtrField<v1::ResultRow> rows;
  for (int s = 0; s < 3; ++s) {
    *rows.Add() = Row(v1::FAFO, 0.2, s + 1, 0.01 * (s + 1));
    *rows.Add() = Row(v1::CACO, 0.2, s + 1, 0.5 + 0.01 * s);
  }
  Claim end = LossClaim();
  end.reference = "";
  absl::StatusOr<v1::MatchedResponse> t = EqualStepsTable(end, rows);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->levels_size(), 1);
  EXPECT_EQ(LevelName(end), "end");
  EXPECT_EQ(LevelText(end, t->levels(0)), "end");
  EXPECT_EQ(Judge(end, *t).verdict, Verdict::kReproduced);
  Claim unknown = LossClaim();
  unknown.reference = "no_such_axis";
  EXPECT_EQ(EqualStepsTable(unknown, rows).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A claim of comparable accuracy: the arms within 0.03 of each other.
Claim CloseClaim() {
  Claim c = RatioClaim();
  c.tolerance = 0.03;
  return c;
}

TEST(ClaimsTest, ClosenessIsTheDifferenceWidenedByBothCisWithinTheTolerance) {
  v1::MatchedResponse close;
  AddLevel(&close, 0.5, 0.56, 0.005, 0.57, 0.005);  // 0.01 + 0.01 <= 0.03
  const Judgement j = Judge(CloseClaim(), close);
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  EXPECT_NEAR(j.levels[0].difference, -0.01, 1e-12);
  EXPECT_EQ(j.why,
            "the arms within 0.03 (their difference and both CIs) at 1 of 1 "
            "levels, apart by more than 0.03 and both CIs at 0");
  // Closeness does not care which arm is higher; separation finds none.
  Claim swapped = CloseClaim();
  std::swap(swapped.faster, swapped.baseline);
  EXPECT_EQ(Judge(swapped, close).verdict, Verdict::kReproduced);
  EXPECT_EQ(Judge(RatioClaim(), close).verdict, Verdict::kNotReproduced);
  // The paper's own HateXplain arms (test accuracy, 5 seeds each) pass the
  // tolerance derived from them; a fixed 0.03 would refuse them.
  const std::vector<double> fast = {0.568, 0.546, 0.563, 0.561, 0.535};
  const std::vector<double> base = {0.566, 0.575, 0.580, 0.578, 0.577};
  const double tol = ClosenessTolerance(fast, base);
  const Summary f = Summarize(fast), b = Summarize(base);
  EXPECT_NEAR(tol, std::abs(f.mean - b.mean) + f.ci95 + b.ci95, 1e-15);
  EXPECT_GT(tol, 0.03);
  v1::MatchedResponse paper;
  AddLevel(&paper, 0, f.mean, f.ci95, b.mean, b.ci95, 5);
  Claim derived = RatioClaim();
  derived.tolerance = tol;
  EXPECT_EQ(Judge(derived, paper).verdict, Verdict::kReproduced);
  EXPECT_NE(Judge(CloseClaim(), paper).verdict, Verdict::kReproduced);
}

TEST(ClaimsTest, ArmsApartBeyondTheToleranceAreContradictedEitherWay) {
  // The faster arm far above: separation (with an effect of 0.05)
  // reproduced, closeness contradicted.
  v1::MatchedResponse above;
  AddLevel(&above, 0.5, 0.64, 0.005, 0.57, 0.005);  // 0.07 - 0.01 > 0.03
  Claim separation = RatioClaim();
  separation.effect = 0.05;
  EXPECT_EQ(Judge(separation, above).verdict, Verdict::kReproduced);
  EXPECT_EQ(Judge(CloseClaim(), above).verdict, Verdict::kContradicted);
  v1::MatchedResponse below;
  AddLevel(&below, 0.5, 0.50, 0.005, 0.57, 0.005);
  EXPECT_EQ(Judge(CloseClaim(), below).verdict, Verdict::kContradicted);
  // Close means with wide CIs show neither: inconclusive, with the seeds
  // that would bring the CIs inside the tolerance; with a close level,
  // partly.
  v1::MatchedResponse wide;
  AddLevel(&wide, 0.5, 0.56, 0.02, 0.57, 0.02);  // 0.05 > 0.03 > -0.03
  const Judgement unsure = Judge(CloseClaim(), wide);
  EXPECT_EQ(unsure.verdict, Verdict::kInconclusive);
  EXPECT_GT(unsure.seeds_to_decide, 3);
  AddLevel(&wide, 0.2, 0.56, 0.005, 0.57, 0.005);
  EXPECT_EQ(Judge(CloseClaim(), wide).verdict, Verdict::kPartly);
  // One within and one apart: not reproduced.
  AddLevel(&below, 0.2, 0.56, 0.005, 0.57, 0.005);
  EXPECT_EQ(Judge(CloseClaim(), below).verdict, Verdict::kNotReproduced);
  // One seed per arm has no CI: never within, never apart.
  v1::MatchedResponse one;
  AddLevel(&one, 1.0, 0.57, 0, 0.57, 0, /*n=*/1);
  const Judgement j = Judge(CloseClaim(), one);
  EXPECT_EQ(j.verdict, Verdict::kInconclusive);
  EXPECT_NE(j.why.find("an arm of one trial has no CI"), std::string::npos);
}

// A claim against the paper's own numbers: the ODE's final alpha at each r
// (one deterministic trajectory each, as `qkov results --by lr_ratio`
// groups the finished trials) within half a unit of the paper's last digit.
v1::ResultRow TheoryRow(double r, double alpha) {
  v1::ResultRow row;
  row.set_trial_id(absl::StrCat("theory-", r));
  row.mutable_config()->set_lr_ratio(r);
  row.mutable_config()->mutable_training()->set_task(v1::TASK_THEORY);
  row.set_state(v1::DONE);
  (*row.mutable_values())["alpha"] = alpha;
  return row;
}

Judgement JudgeAlphas(const Claim& c,
                      std::vector<std::pair<double, double>> rs) {
  google::protobuf::RepeatedPtrField<v1::ResultRow> rows;
  for (const auto& [r, alpha] : rs) *rows.Add() = TheoryRow(r, alpha);
  absl::StatusOr<v1::MatchedResponse> t = EqualStepsTable(c, rows);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? Judge(c, *t) : Judgement();
}

TEST(ClaimsTest, OursWithinThePapersDigitsAtEveryLevelIsReproduced) {
  const Claim* alpha = nullptr;
  for (const Claim& c : Claims())
    if (c.id == "ode-end-point-alpha") alpha = &c;
  ASSERT_NE(alpha, nullptr);
  // The paper: 0.149 at r = 0.01, 0.287 at r = 0.1; r = 1 is not published.
  Judgement j =
      JudgeAlphas(*alpha, {{0.01, 0.14883}, {0.1, 0.28747}, {1, 0.59}});
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  ASSERT_EQ(j.levels.size(), 2u);
  EXPECT_NEAR(j.levels[0].difference, 0.14883 - 0.149, 1e-12);
  EXPECT_EQ(j.levels[0].margin, 0);  // one deterministic trajectory
  EXPECT_EQ(j.levels[1].baseline_value.mean(), 0.287);
  // 0.2876 rounds to 0.288: apart at one level, within at the other.
  j = JudgeAlphas(*alpha, {{0.01, 0.14883}, {0.1, 0.2876}});
  EXPECT_EQ(j.verdict, Verdict::kNotReproduced) << j.why;
  EXPECT_EQ(j.why,
            "ours within the paper's number (to the digits it gives, with our "
            "CI) at 1 of 2 "
            "levels, apart at 1");
  j = JudgeAlphas(*alpha, {{0.01, 0.30}, {0.1, 0.2876}});
  EXPECT_EQ(j.verdict, Verdict::kContradicted) << j.why;
  // One published level run: judged on it, the other named.
  j = JudgeAlphas(*alpha, {{0.01, 0.1491}});
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  EXPECT_NE(j.why.find("no finished trial at lr_ratio 0.1"), std::string::npos);
  // No published level run: not run.
  j = JudgeAlphas(*alpha, {{1, 0.59}, {10, 0.92}});
  EXPECT_EQ(j.verdict, Verdict::kNotRun);
  EXPECT_EQ(j.why, "the sweep has no finished trial at lr_ratio 0.01 or 0.1");
}

// An ordered claim (a ranking): each two neighbours judged on the same
// table, '>' by the effect and '~' as closer than it; the claim reproduced
// only where every neighbour pair is.
TEST(ClaimsTest, AnOrderedClaimJudgesEachTwoNeighbours) {
  Claim rank;
  rank.id = "rank";
  rank.metric = "distinct_attention";
  rank.by = {"parameterization"};
  rank.order = {{"FACO"}, {"FAFO"}, {"CACO"}};
  rank.relations = ">~";
  rank.effect = 0.05;
  auto table = [](double faco, double fafo, double caco) {
    v1::MatchedResponse t;
    t.add_levels(0.1);
    for (const auto& [arm, mean] :
         {std::pair<const char*, double>{"FACO", faco},
          {"FAFO", fafo},
          {"CACO", caco}}) {
      v1::MatchedGroup* g = t.add_groups();
      g->add_keys(arm);
      g->set_level(0.1);
      g->set_trials(3);
      g->set_reached(3);
      v1::MetricSummary& s = (*g->mutable_metrics())["distinct_attention"];
      s.set_n(3);
      s.set_mean(mean);
      s.set_ci95(0.005);
      s.set_std(0.002);
    }
    return t;
  };
  Judgement j = Judge(rank, table(0.30, 0.10, 0.11));
  ASSERT_EQ(j.pairs.size(), 2u);
  EXPECT_EQ(j.pairs[0].claim.id, "rank: FACO > FAFO");
  EXPECT_EQ(j.pairs[0].judgement.verdict, Verdict::kReproduced);
  EXPECT_EQ(j.pairs[1].claim.tolerance, 0.05);  // '~': within the effect
  EXPECT_EQ(j.pairs[1].judgement.verdict, Verdict::kReproduced);
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  // FAFO far above CACO: the '~' link fails, the '>' link holds.
  j = Judge(rank, table(0.30, 0.10, 0.01));
  EXPECT_EQ(j.pairs[1].judgement.verdict, Verdict::kContradicted);
  EXPECT_EQ(j.verdict, Verdict::kNotReproduced) << j.why;
  // Neither link holds: contradicted; one of two: not reproduced.
  j = Judge(rank, table(0.05, 0.30, 0.31));
  EXPECT_EQ(j.verdict, Verdict::kNotReproduced) << j.why;
  j = Judge(rank, table(0.05, 0.30, 0.60));
  EXPECT_EQ(j.verdict, Verdict::kContradicted) << j.why;
  // An arm the sweep lacks: not run.
  rank.order.push_back({"CAFO"});
  rank.relations += ">";
  EXPECT_EQ(Judge(rank, table(0.30, 0.10, 0.11)).verdict, Verdict::kNotRun);
}

// The ODE's end point at the digits the authors' notebook prints
// (shared/paper/NOTES.md, section 4): ours, as the committed database holds
// them (docs/results.md), are within half a unit of each.
TEST(ClaimsTest, TheOdeEndPointMatchesTheNotebooksDigits) {
  const std::map<std::string, std::pair<double, double>> ours = {
      {"ode-end-point-mu-ov", {81.66871, 42.28152}},
      {"ode-end-point-mu-qk", {0.558776, 1.394889}},
      {"ode-end-point-alpha", {0.14883, 0.287471}}};
  for (const Claim& c : Claims()) {
    auto it = ours.find(c.id);
    if (it == ours.end()) continue;
    Claim alpha_named = c;  // TheoryRow stores the value as "alpha"
    alpha_named.metric = "alpha";
    const Judgement j = JudgeAlphas(
        alpha_named, {{0.01, it->second.first}, {0.1, it->second.second}});
    EXPECT_EQ(j.verdict, Verdict::kReproduced) << c.id << ": " << j.why;
  }
  // mu_QK at r = 0.1 is 1.395 in the notebook; 1.39 would not be.
  for (const Claim& c : Claims()) {
    if (c.id != "ode-end-point-mu-qk") continue;
    Claim alpha_named = c;
    alpha_named.metric = "alpha";
    EXPECT_EQ(JudgeAlphas(alpha_named, {{0.01, 0.559}, {0.1, 1.39}}).verdict,
              Verdict::kNotReproduced);
  }
}

TEST(ClaimsTest, EveryClaimOfThePaperIsJudgedWithItsNumberEffectAndScale) {
  std::set<std::string> ids;
  int closeness = 0, published = 0;
  for (const Claim& c : Claims()) {
    ids.insert(c.id);
    EXPECT_FALSE(c.presets.empty()) << c.id;
    EXPECT_FALSE(c.task.empty()) << c.id;
    if (c.order.empty()) {
      EXPECT_EQ(c.faster.size(), c.by.size()) << c.id;
      EXPECT_EQ(c.baseline.size(), c.by.size()) << c.id;
    } else {
      EXPECT_EQ(c.relations.size() + 1, c.order.size()) << c.id;
      for (const auto& arm : c.order)
        EXPECT_EQ(arm.size(), c.by.size()) << c.id;
    }
    EXPECT_FALSE(c.metric.empty() || c.paper.empty()) << c.id;
    EXPECT_FALSE(c.paper_source.empty() || c.paper_scale.empty()) << c.id;
    // Only an equal-steps claim may compare the end alone.
    EXPECT_TRUE(!c.reference.empty() || c.comparison == Comparison::kEqualSteps)
        << c.id;
    closeness += c.tolerance > 0;
    published += !c.published.empty();
    if (c.tolerance > 0) {
      // Closeness: a tolerance from the paper's own arms.
      EXPECT_FALSE(c.paper_faster.empty()) << c.id;
      EXPECT_FALSE(c.tolerance_basis.empty()) << c.id;
    } else if (c.published.empty()) {
      // Separation: an effect, and how it was chosen.
      EXPECT_GT(c.effect, 0) << c.id;
      EXPECT_FALSE(c.effect_basis.empty()) << c.id;
    } else {
      EXPECT_EQ(c.comparison, Comparison::kEqualSteps) << c.id;
      for (const Published& p : c.published) EXPECT_GT(p.tolerance, 0) << c.id;
    }
  }
  EXPECT_EQ(closeness, 3) << "the text tasks' comparable accuracy and F1";
  EXPECT_EQ(published, 5) << "the ODE's end point: mu_OV, mu_QK, alpha; "
                             "the fixed-attention run's final losses";
  // The claims issue 59 names.
  for (const char* id :
       {"fast-qk-sharpens", "collapsed-ov-sharpens", "ode-alpha-grows-with-r",
        "ode-mu-qk-grows-with-r", "ode-mu-ov-falls-with-r",
        "hatexplain-comprehensiveness", "hatexplain-sufficiency",
        "sva-comprehensiveness", "sva-sufficiency", "squad-answer-attention",
        "squad-attention-confidence", "four-parameterizations-ranking",
        "ratio-trend", "fixed-attention-loss-falls-in-alpha-collapsed",
        "fixed-attention-loss-falls-in-alpha-factorized",
        "fixed-attention-end-loss-collapsed",
        "fixed-attention-end-loss-factorized"})
    EXPECT_TRUE(ids.count(id)) << id;
}

}  // namespace
}  // namespace qkov::report

namespace qkov::report {
namespace {

namespace v1f = ::qkov::v1;

// The fixed-attention run's final loss against the paper's one seed: ours
// (a seed mean with its CI) within 10% of the paper's number at each alpha.
v1f::ResultRow FixedRow(int i, double alpha, double loss) {
  v1f::ResultRow row;
  row.set_trial_id(absl::StrCat("fixed-", i));
  row.mutable_config()->set_parameterization(v1f::CACO);
  row.mutable_config()->set_alpha(alpha);
  row.mutable_config()->mutable_training()->set_task(v1f::TASK_FIXED_ATTENTION);
  row.set_state(v1f::DONE);
  (*row.mutable_values())["loss"] = loss;
  return row;
}

Judgement JudgeCollapsed(const std::vector<std::pair<double, double>>& losses) {
  const Claim* claim = nullptr;
  for (const Claim& c : Claims())
    if (c.id == "fixed-attention-end-loss-collapsed") claim = &c;
  EXPECT_NE(claim, nullptr);
  if (claim == nullptr) return Judgement();
  google::protobuf::RepeatedPtrField<v1f::ResultRow> rows;
  int i = 0;
  // Three seeds a point, 0.1% apart.
  for (const auto& [alpha, loss] : losses)
    for (double f : {0.999, 1.0, 1.001})
      *rows.Add() = FixedRow(i++, alpha, loss * f);
  absl::StatusOr<v1f::MatchedResponse> t = EqualStepsTable(*claim, rows);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? Judge(*claim, *t) : Judgement();
}

TEST(ClaimsTest, FixedAttentionEndLossWithinTenPercentOfThePapers) {
  // Ours as measured at the paper's budget (docs/results.md).
  Judgement j = JudgeCollapsed({{0.2, 0.5985},
                                {0.4, 0.158},
                                {0.6, 0.06426},
                                {0.8, 0.03443},
                                {1, 0.02146}});
  EXPECT_EQ(j.verdict, Verdict::kReproduced) << j.why;
  ASSERT_EQ(j.levels.size(), 5u);
  EXPECT_DOUBLE_EQ(j.levels[0].level_tolerance, 0.0598);
  // 15% above the paper at alpha 0.2 (the quick run's 0.695 is 16%): apart
  // there, within at the others.
  j = JudgeCollapsed({{0.2, 0.598 * 1.15},
                      {0.4, 0.158},
                      {0.6, 0.06426},
                      {0.8, 0.03443},
                      {1, 0.02146}});
  EXPECT_EQ(j.verdict, Verdict::kNotReproduced) << j.why;
  EXPECT_EQ(j.levels[0].reading, LevelReading::kAgainst);
  EXPECT_NE(j.why.find("within 10% of the paper's number"), std::string::npos)
      << j.why;
}

}  // namespace
}  // namespace qkov::report
