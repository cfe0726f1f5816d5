// The reduced gradient flow against the asymptotics and recorded values of
// docs/paper.md §4.
#include "worker/tasks/theory/theory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "common/task_info.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

TEST(TheoryTest, RecordedValuesAtLossTarget) {
  // docs/paper.md §4: at loss 1e-4, r=0.1 gives mu_OV ~ 42.3, mu_QK ~ 1.40,
  // alpha ~ 0.287 (the authors' notebook, dtau = 10).
  TheoryOptions o;
  o.max_tau = 5e7;
  auto r = IntegrateTheory(o, TheoryRates{1, 0.1});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->reached_target);
  EXPECT_NEAR(r->final_point.mu_ov, 42.3, 0.5);
  EXPECT_NEAR(r->final_point.mu_qk, 1.40, 0.05);
  EXPECT_NEAR(r->final_point.alpha, 0.287, 0.005);
}

// A theory trial at eta_OV = 1 and the given ratio.
TrialOptions TheoryTrial(double lr_ratio) {
  TrialOptions o;
  o.task = "theory";
  o.lr_ratio = lr_ratio;
  o.eta_ov = 1;
  return o;
}

// The theory task as a trial (its trainer behind RunTrial): the ODE at the
// trial's rates, the trajectory as final points, the end state as results.
TEST(TheoryTest, RunsAsATrialThroughItsTrainer) {
  TrialOptions o = TheoryTrial(0.1);
  auto trial = RunTrial(o, nullptr);
  ASSERT_TRUE(trial.ok()) << trial.status();
  auto r = IntegrateTheory(TheoryOptions(), TheoryRates{1, 0.1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(trial->end, TrialEnd::kConverged);
  EXPECT_DOUBLE_EQ(trial->results.at("alpha"), r->final_point.alpha);
  EXPECT_DOUBLE_EQ(trial->results.at("mu_qk"), r->final_point.mu_qk);
  int alphas = 0;
  for (const MetricPoint& p : trial->final_points)
    alphas += p.name == "theory_alpha";
  EXPECT_EQ(alphas, static_cast<int>(r->trajectory.size()));
  o.lr_ratio = -1;
  EXPECT_EQ(RunTrial(o, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Fig. 4 is drawn from the task table's description alone (CurveFigure):
// every curve it names is one the trial reports, and each figure's x and y
// curves are reported at the same steps, so that every point pairs.
TEST(TheoryTest, FiguresNameTheCurvesTheTrialReports) {
  const TaskInfo* task = FindTask("theory");
  ASSERT_NE(task, nullptr);
  ASSERT_EQ(task->curve_figures.size(), 3u);
  auto trial = RunTrial(TheoryTrial(10), nullptr);
  ASSERT_TRUE(trial.ok()) << trial.status();
  std::map<std::string, std::set<int64_t>> steps;
  for (const MetricPoint& p : trial->final_points) steps[p.name].insert(p.step);
  for (const CurveFigure& f : task->curve_figures) {
    EXPECT_EQ(f.kind, "theory");
    ASSERT_TRUE(steps.count(f.x)) << f.name << ": " << f.x;
    for (const CurvePanel& panel : f.panels) {
      ASSERT_TRUE(steps.count(panel.y)) << f.name << ": " << panel.y;
      EXPECT_EQ(steps[panel.y], steps[f.x]) << f.name << ": " << panel.y;
    }
  }
  EXPECT_TRUE(task->curve_figures.back().overlay_matched);
}

TheoryPoint At(double ratio, double tau) {
  TheoryOptions o;
  o.max_tau = tau;
  o.target_loss = 1e-300;  // run to tau
  o.relative_step = 1e-3;
  auto r = IntegrateTheory(o, TheoryRates{1, ratio});
  EXPECT_TRUE(r.ok());
  return r->final_point;
}

TEST(TheoryTest, OvGrowsLikeLogT) {
  // mu_OV(t) ~ log(eta_OV t / b) + O(1): increments per decade tend to log 10.
  const double r = 10;
  const double a = At(r, 1e8).mu_ov, b = At(r, 1e10).mu_ov,
               c = At(r, 1e12).mu_ov;
  EXPECT_NEAR((c - b) / 2, std::log(10.0), 0.1);
  EXPECT_NEAR((b - a) / 2, std::log(10.0), 0.2);
}

TEST(TheoryTest, QkOddsGrowLikeLogSquaredT) {
  // exp(mu_QK) ~ [r (M-1) n / (2 m M b)] log^2(t / b)   (docs/paper.md §4).
  const double r = 100;
  TheoryOptions o;
  const double t = 1e12;
  const double predicted = r * (o.M - 1) * o.n / (2 * o.m * o.M * o.b) *
                           std::pow(std::log(t / o.b), 2);
  const double simulated = std::exp(At(r, t).mu_qk);
  EXPECT_NEAR(simulated / predicted, 1.0, 0.05)
      << simulated << " vs " << predicted;
  // And the ratio of odds between two horizons follows log^2.
  const double s8 = std::exp(At(r, 1e8).mu_qk);
  const double want = std::pow(std::log(1e12 / o.b) / std::log(1e8 / o.b), 2);
  EXPECT_NEAR(simulated / s8, want, 0.1 * want);
}

TEST(TheoryTest, LargerRatioGivesSharperAttentionAtSameLoss) {
  double last_alpha = 0, last_mu_ov = 1e9;
  for (double r : {0.1, 1.0, 10.0, 100.0}) {
    TheoryOptions o;
    o.target_loss = 1e-4;
    o.relative_step = 1e-4;
    o.max_tau = 1e12;
    auto res = IntegrateTheory(o, TheoryRates{1, r});
    ASSERT_TRUE(res.ok());
    ASSERT_TRUE(res->reached_target) << r;
    EXPECT_GT(res->final_point.alpha, last_alpha) << r;
    EXPECT_LT(res->final_point.mu_ov, last_mu_ov) << r;
    last_alpha = res->final_point.alpha;
    last_mu_ov = res->final_point.mu_ov;
  }
}

TEST(TheoryTest, RejectsNonPositiveSettings) {
  const TheoryOptions o;
  for (TheoryRates rates :
       {TheoryRates{1, 0}, TheoryRates{1, std::nan("")}, TheoryRates{-1, 1}}) {
    EXPECT_EQ(IntegrateTheory(o, rates).status().code(),
              absl::StatusCode::kInvalidArgument)
        << rates.eta_ov << " " << rates.lr_ratio;
  }
  TheoryOptions bad = o;
  bad.M = 1;
  EXPECT_EQ(IntegrateTheory(bad, TheoryRates()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qkov::training
