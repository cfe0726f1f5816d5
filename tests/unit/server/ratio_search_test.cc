// The ratio search's decisions (server/core/ratio_search.h) on made-up
// responses: a monotone one, a non-monotone one, a target never reached,
// one reached at the lower end, a probe failing, waiting on running probes,
// and the refusal of bad specs.
#include "server/core/ratio_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

namespace qkov::core {
namespace {

RatioSearchSpec Spec() {
  RatioSearchSpec s;
  s.lo = 1;
  s.hi = 100;
  s.resolution = 1.2;
  s.coarse_points = 5;
  s.seeds_per_probe = 2;
  s.metric = "distinct_attention";
  s.op = TargetOp::kAtLeast;
  s.target = 0.6;
  return s;
}

// Runs the search to its end against `response` (ratio -> the seeds'
// values; an empty vector: every seed failed); returns the last decision
// and the ratios probed, in order.
SearchDecision RunSearch(
    const RatioSearchSpec& spec,
    const std::function<std::vector<double>(double)>& response,
    std::vector<double>* probed) {
  std::vector<ProbeResult> probes;
  for (int round = 0; round < 100; ++round) {
    SearchDecision d = Decide(spec, probes);
    if (d.next_ratios.empty()) return d;
    for (double r : d.next_ratios) {
      ProbeResult p;
      p.ratio = r;
      p.values = response(r);
      p.failed = p.values.empty() ? spec.seeds_per_probe : 0;
      p.complete = true;
      probes.push_back(p);
      probed->push_back(r);
    }
  }
  ADD_FAILURE() << "no end after 100 rounds";
  return Decide(spec, probes);
}

TEST(RatioSearchTest, StartsWithTheCoarseLogGrid) {
  const SearchDecision d = Decide(Spec(), {});
  EXPECT_EQ(d.state, SearchState::kRunning);
  ASSERT_EQ(d.next_ratios.size(), 5u);
  EXPECT_EQ(d.next_ratios.front(), 1);
  EXPECT_EQ(d.next_ratios.back(), 100);
  for (size_t i = 1; i < 5; ++i)
    EXPECT_NEAR(d.next_ratios[i] / d.next_ratios[i - 1], std::sqrt(10.0),
                1e-12);
}

TEST(RatioSearchTest, MonotoneResponseIsBracketedWithinTheResolution) {
  // A sigmoid in log ratio crossing 0.6 at ratio 7.3.
  const double crossing = 7.3;
  auto response = [&](double r) {
    const double x = std::log(r / crossing);
    const double m = 0.3 + 0.6 / (1 + std::exp(-3 * x));
    return std::vector<double>{m - 0.01, m + 0.01};
  };
  std::vector<double> probed;
  const SearchDecision d = RunSearch(Spec(), response, &probed);
  EXPECT_EQ(d.state, SearchState::kFound);
  EXPECT_LE(d.above / d.below, 1.2);
  EXPECT_LT(d.below, crossing);
  EXPECT_GE(d.above, crossing);
  EXPECT_TRUE(d.non_monotone.empty());
  // 5 coarse probes, then bisection from the bracket [3.16, 10] (a factor
  // 3.16) down to 1.2: ceil(log2(log 3.16 / log 1.2)) = 3 more.
  EXPECT_EQ(probed.size(), 8u);
  // Each probe carries the seed mean and its interval.
  for (const ProbeSummary& p : d.probes) {
    EXPECT_EQ(p.n, 2);
    EXPECT_NEAR(p.ci95,
                0.01 * std::sqrt(2.0) * 12.706204736174698 / std::sqrt(2.0),
                1e-9);
  }
}

TEST(RatioSearchTest, NonMonotoneResponseIsReportedNotHidden) {
  // Reaches the target over [3, 40) only: the ratio-100 probe falls back
  // below it. The search brackets the smallest crossing and names 100.
  auto response = [](double r) {
    const bool up = r >= 3 && r < 40;
    return std::vector<double>{up ? 0.8 : 0.4, up ? 0.8 : 0.4};
  };
  std::vector<double> probed;
  const SearchDecision d = RunSearch(Spec(), response, &probed);
  EXPECT_EQ(d.state, SearchState::kFound);
  EXPECT_LT(d.below, 3);
  EXPECT_GE(d.above, 3);
  ASSERT_EQ(d.non_monotone.size(), 1u);
  EXPECT_EQ(d.non_monotone[0], 100);
}

TEST(RatioSearchTest, TargetNeverReached) {
  std::vector<double> probed;
  const SearchDecision d = RunSearch(
      Spec(),
      [](double) {
        return std::vector<double>{0.3, 0.4};
      },
      &probed);
  EXPECT_EQ(d.state, SearchState::kNeverReached);
  EXPECT_EQ(probed.size(), 5u);  // the coarse grid only
  EXPECT_EQ(d.below, 100);
  EXPECT_EQ(d.above, 100);
}

TEST(RatioSearchTest, TargetReachedAtTheLowerEnd) {
  std::vector<double> probed;
  const SearchDecision d = RunSearch(
      Spec(),
      [](double) {
        return std::vector<double>{0.9, 0.9};
      },
      &probed);
  EXPECT_EQ(d.state, SearchState::kReachedAtLo);
  EXPECT_EQ(d.above, 1);
  EXPECT_EQ(d.below, 0);
  EXPECT_EQ(probed.size(), 5u);
}

TEST(RatioSearchTest, AFailedMidpointEndsTheSearchWithItsBracket) {
  // Crossing at 5; the first midpoint (sqrt(3.16 * 10) = 5.62) fails on
  // every seed.
  auto response = [](double r) {
    if (std::fabs(r - std::sqrt(std::sqrt(10.0) * 10)) < 1e-9)
      return std::vector<double>{};
    return std::vector<double>{r >= 5 ? 0.7 : 0.5, r >= 5 ? 0.7 : 0.5};
  };
  std::vector<double> probed;
  const SearchDecision d = RunSearch(Spec(), response, &probed);
  EXPECT_EQ(d.state, SearchState::kProbeFailed);
  EXPECT_EQ(probed.size(), 6u);
  EXPECT_NEAR(d.below, std::sqrt(10.0), 1e-12);
  EXPECT_NEAR(d.above, 10, 1e-12);
  int failed = 0;
  for (const ProbeSummary& p : d.probes) failed += p.failed;
  EXPECT_EQ(failed, 1);

  // A coarse probe failing away from the bracket does not matter.
  auto far = [](double r) {
    if (r == 100) return std::vector<double>{};
    return std::vector<double>{r >= 5 ? 0.7 : 0.5};
  };
  probed.clear();
  EXPECT_EQ(RunSearch(Spec(), far, &probed).state, SearchState::kFound);
}

TEST(RatioSearchTest, WaitsWhileAProbeRuns) {
  std::vector<ProbeResult> probes;
  for (double r : CoarseRatios(Spec())) {
    ProbeResult p;
    p.ratio = r;
    p.values = {r >= 5 ? 0.7 : 0.5};
    p.complete = r != 100;  // one seed of the last probe still runs
    probes.push_back(p);
  }
  SearchDecision d = Decide(Spec(), probes);
  EXPECT_EQ(d.state, SearchState::kRunning);
  EXPECT_TRUE(d.next_ratios.empty());
  probes.back().complete = true;
  d = Decide(Spec(), probes);
  ASSERT_EQ(d.next_ratios.size(), 1u);
  EXPECT_NEAR(d.next_ratios[0], std::sqrt(std::sqrt(10.0) * 10), 1e-12);
  // The same results in another order give the same decision.
  std::reverse(probes.begin(), probes.end());
  EXPECT_EQ(Decide(Spec(), probes).next_ratios, d.next_ratios);
}

TEST(RatioSearchTest, LowerIsBetterTargets) {
  RatioSearchSpec s = Spec();
  s.op = TargetOp::kAtMost;
  s.target = 0.1;  // e.g. a loss
  std::vector<double> probed;
  const SearchDecision d = RunSearch(
      s, [](double r) { return std::vector<double>{1.0 / r}; }, &probed);
  EXPECT_EQ(d.state, SearchState::kFound);
  EXPECT_LT(d.below, 10);
  EXPECT_GE(d.above, 10);
}

TEST(RatioSearchTest, BadSpecsAreRefusedNamingTheField) {
  const std::string prefix = "spec.search.";
  std::map<std::string, std::function<void(RatioSearchSpec*)>> cases = {
      {"spec.search.hi: must be > lo = 10 (got 10): the range is empty or "
       "inverted",
       [](RatioSearchSpec* s) { s->lo = s->hi = 10; }},
      {"spec.search.hi: must be > lo = 100 (got 1): the range is empty or "
       "inverted",
       [](RatioSearchSpec* s) { std::swap(s->lo, s->hi); }},
      {"spec.search.lo: must be finite and > 0 (got nan)",
       [](RatioSearchSpec* s) { s->lo = std::nan(""); }},
      {"spec.search.lo: must be finite and > 0 (got -1)",
       [](RatioSearchSpec* s) { s->lo = -1; }},
      {"spec.search.resolution: must be a finite factor > 1 (got 1)",
       [](RatioSearchSpec* s) { s->resolution = 1; }},
      {"spec.search.coarse_points: must be in [2, 1000] (got 1)",
       [](RatioSearchSpec* s) { s->coarse_points = 1; }},
      {"spec.search.seeds_per_probe: must be in [1, 1000] (got 0)",
       [](RatioSearchSpec* s) { s->seeds_per_probe = 0; }},
      {"spec.search.metric: is required",
       [](RatioSearchSpec* s) { s->metric.clear(); }},
      {"spec.search.target: must be finite (got inf)",
       [](RatioSearchSpec* s) { s->target = INFINITY; }},
  };
  EXPECT_TRUE(ValidateRatioSearch(Spec(), prefix).ok());
  for (const auto& [message, mutate] : cases) {
    RatioSearchSpec s = Spec();
    mutate(&s);
    const absl::Status st = ValidateRatioSearch(s, prefix);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << message;
    EXPECT_EQ(st.message(), message);
  }
}

}  // namespace
}  // namespace qkov::core
