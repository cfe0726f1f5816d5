// The matched value (common/matched.h) on hand-made curves: the first
// crossing, a crossing exactly at a report, noisy curves and the smoothing
// window, levels never reached, decreasing and increasing references, and
// the metric interpolated between its reports.
#include "common/matched.h"

#include <gtest/gtest.h>

#include <cmath>

namespace qkov {
namespace {

std::vector<CurvePoint> Curve(const std::vector<double>& values,
                              int64_t every = 100) {
  std::vector<CurvePoint> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back({static_cast<int64_t>(i + 1) * every, values[i]});
  return out;
}

TEST(MatchedTest, FirstCrossingOfADecreasingCurveIsInterpolated) {
  // 1.0 at 100, 0.6 at 200, 0.2 at 300: 0.5 lies a quarter of the way
  // from 200 to 300.
  const auto loss = Curve({1.0, 0.6, 0.2, 0.1});
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 0.5, true), 225);
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 0.8, true), 150);
}

TEST(MatchedTest, ACrossingExactlyAtAReportIsThatReport) {
  const auto loss = Curve({1.0, 0.6, 0.2});
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 0.6, true), 200);
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 1.0, true), 100);  // starts on it
  // Already past the level at its first report: reached there.
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 1.5, true), 100);
}

TEST(MatchedTest, TheDirectionIsTheSweepsOverallTrend) {
  EXPECT_TRUE(FallsOverall({Curve({1.0, 0.5}), Curve({0.8, 0.9})}));
  EXPECT_FALSE(FallsOverall({Curve({0.1, 0.5}), Curve({0.8, 0.7})}));
}

TEST(MatchedTest, OnlyTheFirstCrossingCounts) {
  // Down through 0.5 between 100 and 200, back up, down again later.
  const auto loss = Curve({0.9, 0.4, 0.8, 0.3});
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 0.5, true), 180);
}

TEST(MatchedTest, AnIncreasingReferenceCrossesUpwards) {
  // 0.0 at 100 ... 0.6 at 300: 0.4 lies halfway from 200 to 300.
  const auto f1 = Curve({0.0, 0.2, 0.6, 0.7});
  EXPECT_DOUBLE_EQ(FirstCrossing(f1, 0.4, /*downwards=*/false), 250);
  EXPECT_EQ(FirstCrossing(f1, 0.9, /*downwards=*/false), -1);
}

TEST(MatchedTest, NeverReachedIsMinusOneAndNaNValues) {
  const auto loss = Curve({1.0, 0.9, 0.8});
  EXPECT_EQ(FirstCrossing(loss, 0.5, true), -1);
  MatchedValue v = MatchAt(loss, 1, 0.5, true, {Curve({0.1, 0.2, 0.3})});
  EXPECT_FALSE(v.reached);
  ASSERT_EQ(v.values.size(), 1u);
  EXPECT_TRUE(std::isnan(v.values[0]));
}

TEST(MatchedTest, TheWindowSmoothsANoisyCurveBeforeItCrosses) {
  // Raw: a single dip to 0.45 at step 200 would cross 0.5 there; the
  // trailing mean over 3 reports crosses only when the level is held.
  const auto noisy = Curve({0.9, 0.45, 0.9, 0.75, 0.5, 0.25, 0.25});
  EXPECT_NEAR(FirstCrossing(noisy, 0.5, true), 100 + 100 * 0.4 / 0.45, 1e-9);
  const auto smoothed = SmoothTrailing(noisy, 3);
  ASSERT_EQ(smoothed.size(), 5u);
  EXPECT_EQ(smoothed[0].step, 300);
  EXPECT_DOUBLE_EQ(smoothed[0].value, (0.9 + 0.45 + 0.9) / 3);
  // Means: 0.75 (300), 0.7 (400), 0.7167 (500), 0.5 (600): at 600.
  EXPECT_DOUBLE_EQ(FirstCrossing(smoothed, 0.5, true), 600);
  EXPECT_TRUE(SmoothTrailing(noisy, 8).empty());  // too short
}

TEST(MatchedTest, TheMetricIsInterpolatedAtTheCrossing) {
  const auto loss = Curve({1.0, 0.6, 0.2});
  const auto attention = Curve({0.1, 0.3, 0.7});
  MatchedValue v = MatchAt(loss, 1, 0.5, true, {attention});
  ASSERT_TRUE(v.reached);
  EXPECT_DOUBLE_EQ(v.step, 225);
  EXPECT_DOUBLE_EQ(v.values[0], 0.3 + 0.25 * 0.4);
  // A metric reported on other steps: interpolated between its own.
  std::vector<CurvePoint> sparse = {{50, 0.0}, {250, 1.0}};
  EXPECT_DOUBLE_EQ(ValueAt(sparse, 225), 0.875);
  EXPECT_TRUE(std::isnan(ValueAt(sparse, 10)));
  EXPECT_TRUE(std::isnan(ValueAt(sparse, 300)));
}

TEST(MatchedTest, NaNReportsAreSkipped) {
  const auto loss = Curve({1.0, std::nan(""), 0.2});
  EXPECT_DOUBLE_EQ(FirstCrossing(loss, 0.6, true), 200);  // 100 -> 300, halfway
}

TEST(MatchedTest, ParsesTheSpecAndRefusesBadOnes) {
  auto spec = ParseMatchedSpec("train_loss=0.5,0.25");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->reference, "train_loss");
  EXPECT_EQ(spec->levels, (std::vector<double>{0.5, 0.25}));
  EXPECT_FALSE(ParseMatchedSpec("train_loss").ok());
  EXPECT_FALSE(ParseMatchedSpec("=0.5").ok());
  EXPECT_FALSE(ParseMatchedSpec("train_loss=").ok());
  EXPECT_FALSE(ParseMatchedSpec("train_loss=0.5,nan").ok());
  EXPECT_FALSE(ParseMatchedSpec("train_loss=x").ok());
}

// Arms, unreached trials counted, means over those that reach, and the
// errors named.
TEST(MatchTrialsTest, GroupsArmsAndCountsTrialsThatNeverReach) {
  auto trial = [](std::string arm, std::vector<double> loss,
                  std::vector<double> attention) {
    MatchedTrial t;
    t.keys = {std::move(arm)};
    t.curves["train_loss"] = Curve(loss);
    t.curves["attention"] = Curve(attention);
    return t;
  };
  const std::vector<MatchedTrial> trials = {
      trial("10", {1.0, 0.6, 0.2}, {0.1, 0.3, 0.7}),   // 0.5 at 225: 0.4
      trial("10", {1.0, 0.5, 0.2}, {0.1, 0.6, 0.7}),   // 0.5 at 200: 0.6
      trial("2", {1.0, 0.9, 0.8}, {0.1, 0.2, 0.3}),    // never
      trial("2", {1.0, 0.75, 0.25}, {0.2, 0.4, 0.6}),  // 0.5 at 250: 0.5
      trial("3", {0.4, 0.3, 0.2}, {0.9, 0.8, 0.7})};   // past 0.5 at 100
  auto table = MatchTrials(trials, {"train_loss", {0.5}}, 1, {"attention"},
                           {"lr_ratio"});
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->groups.size(), 3u);
  EXPECT_TRUE(table->downwards);
  const MatchedGroup& two = table->groups[0];  // "2" before "10" by value
  EXPECT_EQ(two.keys[0], "2");
  EXPECT_EQ(two.trials, 2);
  EXPECT_EQ(two.reached, 1);
  EXPECT_DOUBLE_EQ(two.metrics[0].mean, 0.5);
  EXPECT_DOUBLE_EQ(two.step.mean, 250);
  const MatchedGroup& three = table->groups[1];
  EXPECT_EQ(three.reached, 1);
  EXPECT_DOUBLE_EQ(three.step.mean, 100);
  EXPECT_DOUBLE_EQ(three.metrics[0].mean, 0.9);
  const MatchedGroup& ten = table->groups[2];
  EXPECT_EQ(ten.reached, 2);
  EXPECT_DOUBLE_EQ(ten.metrics[0].mean, 0.5);
  EXPECT_DOUBLE_EQ(ten.step.mean, 212.5);
  EXPECT_EQ(ten.metrics[0].n, 2);

  auto unreached = MatchTrials(trials, {"train_loss", {0.5, 0.01}}, 1,
                               {"attention"}, {"lr_ratio"});
  EXPECT_EQ(unreached.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unreached.status().message().find("no trial reaches train_loss = "
                                              "0.01"),
            std::string::npos)
      << unreached.status();
  auto unknown = MatchTrials(trials, {"val_loss", {0.5}}, 1, {"attention"},
                             {"lr_ratio"}, [] { return "a, b"; });
  EXPECT_NE(unknown.status().message().find(
                "no trial reports a curve named 'val_loss' (its curves: a, b)"),
            std::string::npos)
      << unknown.status();
  auto too_short = MatchTrials(trials, {"train_loss", {0.5}}, 4, {"attention"},
                               {"lr_ratio"});
  EXPECT_NE(too_short.status().message().find("fewer than 4 reports"),
            std::string::npos)
      << too_short.status();
}

TEST(DefaultLevelsTest, SpanEveryTrialReachesInTheOrderTheyAreReached) {
  auto trial = [](std::vector<double> loss) {
    MatchedTrial t;
    t.curves["train_loss"] = Curve(loss);
    return t;
  };
  // Lowest values 0.2 and 0.4; first values 2.0 and 1.6: every trial
  // reaches 0.4, none has passed 1.6 at its first report.
  const std::vector<MatchedTrial> falling = {trial({2.0, 1.0, 0.2}),
                                             trial({1.6, 0.9, 0.4})};
  EXPECT_EQ(DefaultLevels(falling, "train_loss", 1, 4),
            (std::vector<double>{1.3, 1.0, 0.7, 0.4}));
  auto table = MatchTrials(
      falling, {"train_loss", DefaultLevels(falling, "train_loss", 1, 4)}, 1,
      {"train_loss"}, {"parameterization"});
  ASSERT_TRUE(table.ok()) << table.status();
  for (const MatchedGroup& g : table->groups) EXPECT_EQ(g.reached, 2);
  // A rising score, smoothed over 2 reports: means 0.15, 0.35 and 0.2,
  // 0.5; every trial reaches 0.35, none is past 0.2 at its first.
  const std::vector<MatchedTrial> rising = {trial({0.1, 0.2, 0.5}),
                                            trial({0.1, 0.3, 0.7})};
  EXPECT_EQ(DefaultLevels(rising, "train_loss", 2, 2),
            (std::vector<double>{0.275, 0.35}));
  // Arms that share no span: the slow one never gets where the fast one
  // starts. The levels cover all values, 3 significant digits; the lowest,
  // 0.1234, rounds up to 0.124 (0.123 is a loss no trial reaches).
  const std::vector<MatchedTrial> apart = {trial({3.0, 2.5, 2.0}),
                                           trial({1.0, 0.5, 0.1234})};
  EXPECT_EQ(DefaultLevels(apart, "train_loss", 1, 2),
            (std::vector<double>{1.56, 0.124}));
  // Every trial reaches 1.39363 at the least: the first level is 1.40, not
  // the nearest 1.39, which no trial reaches.
  const std::vector<MatchedTrial> near = {trial({3.9, 2.0, 1.39363}),
                                          trial({3.8, 1.5, 1.2})};
  const std::vector<double> levels = DefaultLevels(near, "train_loss", 1, 3);
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.back(), 1.4);
  auto reached = MatchTrials(near, {"train_loss", levels}, 1, {"train_loss"},
                             {"parameterization"});
  ASSERT_TRUE(reached.ok()) << reached.status();
  EXPECT_TRUE(DefaultLevels(falling, "val_loss", 1, 3).empty());
}

}  // namespace
}  // namespace qkov
