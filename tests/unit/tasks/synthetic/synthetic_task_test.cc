// The synthetic data generator against docs/paper.md §2.
#include "worker/tasks/synthetic/synthetic_task.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace qkov::training {
namespace {

TEST(SyntheticTaskTest, ClassDistributionMatchesPaperWeights) {
  SyntheticTask task(SyntheticTaskOptions{});
  for (int c = 0; c < 4; ++c) {
    std::vector<double> p = task.ClassDistribution(c);
    const double total = 10 * 1.0 + 5.5;  // ten common tokens + 0.1 + ... + 1.0
    for (int t = 0; t < 10; ++t) EXPECT_NEAR(p[t], 1.0 / total, 1e-12) << t;
    for (int j = 0; j < 10; ++j) {
      EXPECT_NEAR(p[(c + 1) * 10 + j], 0.1 * (j + 1) / total, 1e-12)
          << c << " " << j;
    }
    for (int other = 0; other < 4; ++other) {
      if (other == c) continue;
      for (int j = 0; j < 10; ++j) EXPECT_EQ(p[(other + 1) * 10 + j], 0.0);
    }
  }
}

TEST(SyntheticTaskTest, SampledFrequenciesMatchClassDistribution) {
  SyntheticTask task(SyntheticTaskOptions{});
  std::mt19937_64 rng(42);
  const int n = 400000;
  for (int c = 0; c < 4; ++c) {
    std::vector<double> counts(50, 0);
    for (int i = 0; i < n; ++i) counts[task.SampleContextToken(c, rng)] += 1;
    std::vector<double> p = task.ClassDistribution(c);
    double common = 0;
    for (int t = 0; t < 50; ++t) {
      const double sd = std::sqrt(p[t] * (1 - p[t]) / n);
      // 5 standard deviations: a wrong weight (e.g. 0.1 off) is > 20 sd away.
      EXPECT_NEAR(counts[t] / n, p[t], 5 * sd + 1e-12)
          << "class " << c << " token " << t;
      if (t < 10) common += counts[t] / n;
    }
    EXPECT_NEAR(common, 10 / 15.5, 0.005);
  }
}

TEST(SyntheticTaskTest, SequenceLayoutIsContextQueryLabel) {
  SyntheticTask task(SyntheticTaskOptions{});
  std::mt19937_64 rng(7);
  Batch b = task.Sample(256, rng);
  ASSERT_EQ(b.tokens.size(0), 256);
  ASSERT_EQ(b.tokens.size(1), 63);
  std::vector<int> class_count(4, 0);
  for (int i = 0; i < 256; ++i) {
    const int c = b.classes[i].item<int>();
    ++class_count[c];
    EXPECT_EQ(b.tokens[i][62].item<int>(), 5 + c);  // query q_c in {5..8}
    EXPECT_EQ(b.labels[i].item<int>(), 1 + c);      // label y_c in {1..4}
    for (int j = 0; j < 62; ++j) {
      const int t = b.tokens[i][j].item<int>();
      EXPECT_TRUE(t < 10 || (t >= (c + 1) * 10 && t < (c + 2) * 10)) << t;
    }
  }
  for (int c = 0; c < 4; ++c) EXPECT_GT(class_count[c], 30);
}

TEST(SyntheticTaskTest, SameSeedSameBatches) {
  SyntheticTask task(SyntheticTaskOptions{});
  std::mt19937_64 a(99), b(99), c(100);
  auto x = task.Sample(32, a);
  auto y = task.Sample(32, b);
  auto z = task.Sample(32, c);
  EXPECT_TRUE(torch::equal(x.tokens, y.tokens));
  EXPECT_FALSE(torch::equal(x.tokens, z.tokens));
}

TEST(SyntheticTaskTest, ValidateRejectsBlocksThatDoNotFit) {
  SyntheticTaskOptions o;
  o.num_classes = 5;  // 10 + 5*10 > 50
  EXPECT_FALSE(o.Validate().ok());
  o = SyntheticTaskOptions{};
  o.seq_len = 2;
  EXPECT_FALSE(o.Validate().ok());
  EXPECT_TRUE(SyntheticTaskOptions{}.Validate().ok());
}

}  // namespace
}  // namespace qkov::training
