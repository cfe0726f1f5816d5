// Median stopping and ASHA (server/core/early_stopping.h) on made-up metric
// streams: who stops, from which step, against which peers.
#include "server/core/early_stopping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

namespace qkov::core {
namespace {

TEST(MedianStoppingTest, StopsTrialsBelowThePeersMedianAfterMinSteps) {
  MedianRule rule;
  rule.min_steps = 1000;
  rule.min_peers = 3;
  const std::vector<double> peers = {0.2, 0.5, 0.9, 0.6};  // median 0.55
  EXPECT_FALSE(MedianStops(rule, 999, 0.1, peers));        // too early
  EXPECT_TRUE(MedianStops(rule, 1000, 0.54, peers));
  EXPECT_FALSE(MedianStops(rule, 1000, 0.55, peers));  // not worse
  EXPECT_FALSE(MedianStops(rule, 1000, 0.8, peers));
  // Too few peers to judge; NaN peers do not count.
  EXPECT_FALSE(MedianStops(rule, 5000, 0.0, {0.5, 0.6}));
  EXPECT_FALSE(MedianStops(rule, 5000, 0.0, {0.5, 0.6, std::nan("")}));
  // A trial without a value (NaN) is worse than any median.
  EXPECT_TRUE(MedianStops(rule, 5000, std::nan(""), {0.5, 0.6, 0.7}));
  // For a loss, higher is worse.
  rule.direction = Direction::kLowerIsBetter;
  EXPECT_TRUE(MedianStops(rule, 1000, 0.56, peers));
  EXPECT_FALSE(MedianStops(rule, 1000, 0.3, peers));
}

// A stream of 9 trials whose metric at every step is a fixed quality q
// times the step fraction: median stopping at each report keeps the trials
// at or above the median of the others and stops the rest, once.
TEST(MedianStoppingTest, OnAStreamTheWorstHalfStops) {
  MedianRule rule;
  rule.min_steps = 200;
  const std::vector<double> quality = {0.1, 0.9, 0.3, 0.7, 0.5,
                                       0.2, 0.8, 0.4, 0.6};
  std::vector<bool> running(quality.size(), true);
  std::vector<int64_t> stopped_at(quality.size(), -1);
  for (int64_t step = 100; step <= 1000; step += 100) {
    for (size_t t = 0; t < quality.size(); ++t) {
      if (!running[t]) continue;
      std::vector<double> peers;
      for (size_t u = 0; u < quality.size(); ++u)
        if (u != t && running[u]) peers.push_back(quality[u] * step / 1000.0);
      if (MedianStops(rule, step, quality[t] * step / 1000.0, peers)) {
        running[t] = false;
        stopped_at[t] = step;
      }
    }
  }
  EXPECT_EQ(stopped_at[0], 200);  // 0.1: stopped at the first judged step
  EXPECT_EQ(stopped_at[1], -1);   // 0.9 runs to the end
  int kept = 0;
  for (bool r : running) kept += r;
  EXPECT_GE(kept, 1);
  EXPECT_LE(kept, 3);
  for (size_t t = 0; t < quality.size(); ++t) {
    if (stopped_at[t] >= 0) {
      EXPECT_GE(stopped_at[t], rule.min_steps) << t;
    }
  }
}

TEST(AshaTest, RungsAreGeometricBelowMaxSteps) {
  AshaRule rule;
  rule.min_steps = 100;
  rule.max_steps = 10000;
  rule.reduction = 3;
  EXPECT_EQ(AshaRungs(rule), (std::vector<int64_t>{100, 300, 900, 2700, 8100}));
  rule.reduction = 1;
  EXPECT_TRUE(AshaRungs(rule).empty());
}

TEST(AshaTest, OnlyTheBestThirdOfEachRungGoesOn) {
  AshaRule rule;
  rule.reduction = 3;
  // The first trial at a rung always continues; then the cut is the 2/3
  // quantile of those recorded before.
  EXPECT_FALSE(AshaStops(rule, 0.1, {}));
  EXPECT_TRUE(AshaStops(rule, 0.5, {0.1, 0.9, 0.6}));  // cut 0.7
  EXPECT_FALSE(AshaStops(rule, 0.75, {0.1, 0.9, 0.6}));
  EXPECT_FALSE(AshaStops(rule, 0.95, {0.1, 0.9, 0.6}));
  EXPECT_TRUE(AshaStops(rule, std::nan(""), {0.1}));
  rule.direction = Direction::kLowerIsBetter;  // cut: the 1/3 quantile, 0.43
  EXPECT_FALSE(AshaStops(rule, 0.3, {0.1, 0.9, 0.6}));
  EXPECT_TRUE(AshaStops(rule, 0.5, {0.1, 0.9, 0.6}));

  // Asynchronous promotion on a stream: 27 trials arrive at the first rung
  // in a scrambled order of quality; the ones that go on are the best
  // ones seen so far, about a third of them.
  std::vector<double> arrivals;
  for (int i = 0; i < 27; ++i) arrivals.push_back(((i * 11) % 27) / 27.0);
  rule.direction = Direction::kHigherIsBetter;
  std::vector<double> recorded;
  int promoted = 0;
  for (double v : arrivals) {
    if (!AshaStops(rule, v, recorded)) ++promoted;
    recorded.push_back(v);
  }
  EXPECT_GE(promoted, 9);
  EXPECT_LE(promoted, 14);
  // The best arrival is always promoted, the worst (after the first) never.
  double best = 0;
  for (double v : arrivals) best = std::max(best, v);
  std::vector<double> before_best(
      arrivals.begin(), std::find(arrivals.begin(), arrivals.end(), best));
  EXPECT_FALSE(AshaStops(rule, best, before_best));
}

}  // namespace
}  // namespace qkov::core
