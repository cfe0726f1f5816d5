// Aggregation over seeds to the last digit.
#include "common/aggregate.h"

#include <gtest/gtest.h>

#include <cmath>

namespace qkov {
namespace {

TEST(AggregateTest, StudentTQuantileMatchesTables) {
  // scipy.stats.t.ppf(0.975, df)
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706204736174707, 1e-11);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.302652729749464, 1e-12);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.7764451051977987, 1e-12);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.2281388519862744, 1e-12);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.0422724563012373, 1e-12);
  EXPECT_NEAR(StudentTQuantile(0.025, 4), -2.7764451051977987, 1e-12);
  EXPECT_TRUE(std::isnan(StudentTQuantile(1.5, 4)));
}

TEST(AggregateTest, SummaryToTheLastDigit) {
  Summary s = Summarize({1, 2, 3, 4, 5});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.std, 1.5811388300841898);  // sqrt(10 / 4)
  // t(0.975, 4) * std / sqrt(5) with scipy's t(0.975, 4); our quantile is
  // found numerically, accurate to ~1e-14 relative (a few ulps).
  EXPECT_NEAR(s.ci95, 1.9632431614775607, 1e-13);
  // NaN (a diverged seed without the metric) is left out, not counted.
  Summary t = Summarize({0.5, std::nan(""), 0.7});
  EXPECT_EQ(t.n, 2);
  EXPECT_DOUBLE_EQ(t.mean, 0.6);
  EXPECT_DOUBLE_EQ(t.std, std::sqrt(0.02));
  EXPECT_NEAR(t.ci95, 12.706204736174707 * std::sqrt(0.02) / std::sqrt(2.0),
              1e-13);
  Summary one = Summarize({0.25});
  EXPECT_EQ(one.n, 1);
  EXPECT_EQ(one.mean, 0.25);
  EXPECT_TRUE(std::isnan(one.std));
  EXPECT_TRUE(std::isnan(one.ci95));
}

qkov::v1::ResultRow Row(qkov::v1::Parameterization p, double ratio,
                        uint64_t seed, double value,
                        qkov::v1::TrialState state = qkov::v1::DONE) {
  qkov::v1::ResultRow r;
  r.mutable_config()->set_parameterization(p);
  r.mutable_config()->set_lr_ratio(ratio);
  r.mutable_config()->set_eta_ov(0.01);
  r.mutable_config()->set_seed(seed);
  r.set_state(state);
  (*r.mutable_values())["distinct_attention"] = value;
  return r;
}

TEST(AggregateTest, GroupsByAxesSortsNumericallyAndFilters) {
  std::vector<qkov::v1::ResultRow> rows = {
      Row(qkov::v1::FAFO, 20, 1, 0.8),
      Row(qkov::v1::FAFO, 20, 2, 0.9),
      Row(qkov::v1::FAFO, 5, 1, 0.5),
      Row(qkov::v1::FAFO, 5, 2, 0.7),
      Row(qkov::v1::CACO, 5, 1, 0.4),
      Row(qkov::v1::CACO, 5, 2, 99, qkov::v1::FAILED)};
  auto groups = Aggregate(rows, {"parameterization", "lr_ratio"},
                          {"distinct_attention"}, {"state=done"});
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 3u);
  EXPECT_EQ((*groups)[0].keys, (std::vector<std::string>{"CACO", "5"}));
  EXPECT_EQ((*groups)[0].metrics.at("distinct_attention").n,
            1);  // the failed seed is filtered out
  EXPECT_EQ((*groups)[1].keys,
            (std::vector<std::string>{"FAFO", "5"}));  // 5 before 20
  EXPECT_DOUBLE_EQ((*groups)[1].metrics.at("distinct_attention").mean, 0.6);
  EXPECT_EQ((*groups)[2].keys, (std::vector<std::string>{"FAFO", "20"}));
  EXPECT_DOUBLE_EQ((*groups)[2].metrics.at("distinct_attention").std,
                   std::sqrt(0.005));
  EXPECT_FALSE(Aggregate(rows, {"colour"}, {"ac"}, {}).ok());
  EXPECT_FALSE(Aggregate(rows, {"seed"}, {"ac"}, {"nonsense"}).ok());
}

}  // namespace
}  // namespace qkov
