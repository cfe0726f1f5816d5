// Adaptive sweeps through the Coordinator, with a real SQLite file and a
// fake clock: a ratio search submitted, its probes leased and completed
// with made-up results, the follow-up growing the sweep in the completion's
// transaction; a store closed and reopened mid-search; median stopping and
// ASHA on made-up reports; bad search and early-stopping settings.
#include "server/core/adaptive_sweep.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "server/core/coordinator.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;

// The search of these tests: FAFO, distinct_attention >= 0.6 over [1, 100],
// resolution 1.2, 5 coarse points, 2 seeds a probe.
v1::SweepSpec SearchSpec(const std::string& name) {
  v1::SweepSpec s;
  s.set_name(name);
  s.mutable_axes()->add_parameterizations(v1::FAFO);
  s.mutable_axes()->add_eta_ovs(0.1);
  v1::RatioSearch* r = s.mutable_search();
  r->set_metric("distinct_attention");
  r->set_target(0.6);
  r->set_lo(1);
  r->set_hi(100);
  r->set_resolution(1.2);
  r->set_coarse_points(5);
  r->set_seeds_per_probe(2);
  return s;
}

class AdaptiveSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-adaptive-XXXXXX";
    dir_ = mkdtemp(tmpl);
    Open();
  }
  void TearDown() override {
    core_.reset();
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  // (Re)opens the store and a coordinator over it, as a restarted server.
  void Open() {
    core_.reset();
    store_.reset();
    store_ = std::move(*storage::ResultsStore::Open(dir_ + "/r.db"));
    core_ = std::make_unique<Coordinator>(store_.get(), &clock_,
                                          CoordinatorOptions());
    v1::RegisterWorkerRequest r;
    r.set_name("w");
    auto resp = core_->workers().RegisterWorker(r);
    ASSERT_TRUE(resp.ok()) << resp.status();
    worker_ = resp->worker_id();
    key_ = resp->worker_key();
  }

  absl::StatusOr<v1::SubmitSweepResponse> Submit(const v1::SweepSpec& spec) {
    v1::SubmitSweepRequest r;
    *r.mutable_spec() = spec;
    return core_->sweeps().SubmitSweep(r);
  }

  // Leases and ends up to `max` trials: `value(ratio, seed)` is the
  // distinct_attention a trial reports; NaN makes the attempt fail for
  // good. Returns how many ended. Records each (ratio, seed) it ran.
  int Run(const std::function<double(double, uint64_t)>& value,
          int max = 1 << 20) {
    int ended = 0;
    while (ended < max) {
      v1::LeaseTrialRequest lr;
      lr.set_worker_id(worker_);
      lr.set_worker_key(key_);
      auto lease = core_->workers().LeaseTrial(lr);
      EXPECT_TRUE(lease.ok()) << lease.status();
      if (!lease.ok() || lease->outcome() != v1::LeaseTrialResponse::LEASED)
        break;
      const v1::Lease& l = lease->lease();
      const double ratio = l.config().lr_ratio();
      const uint64_t seed = l.config().seed();
      ++runs_[{ratio, seed}];
      const double v = value(ratio, seed);
      if (std::isnan(v)) {
        v1::FailTrialRequest f;
        f.set_worker_id(worker_);
        f.set_worker_key(key_);
        f.set_trial_id(l.trial_id());
        f.set_attempt(l.attempt());
        f.set_reason("made-up failure");
        f.set_permanent(true);
        EXPECT_TRUE(core_->workers().FailTrial(f).ok());
      } else {
        v1::CompleteTrialRequest c;
        c.set_worker_id(worker_);
        c.set_worker_key(key_);
        c.set_trial_id(l.trial_id());
        c.set_attempt(l.attempt());
        c.set_steps(10);
        (*c.mutable_results())["distinct_attention"] = v;
        (*c.mutable_results())["accuracy"] = 1;
        auto done = core_->workers().CompleteTrial(c);
        EXPECT_TRUE(done.ok()) << done.status();
      }
      ++ended;
    }
    return ended;
  }

  v1::Sweep Sweep(const std::string& name) {
    auto s = core_->sweeps().GetSweep(name);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : v1::Sweep();
  }

  std::string dir_;
  FakeClock clock_;
  std::unique_ptr<storage::ResultsStore> store_;
  std::unique_ptr<Coordinator> core_;
  std::string worker_, key_;
  std::map<std::pair<double, uint64_t>, int> runs_;
};

// A made-up monotone response crossing 0.6 at ratio 7.3, seeds 0.02 apart.
double Monotone(double ratio, uint64_t seed) {
  return 0.6 + 0.2 * std::tanh(std::log(ratio / 7.3)) + 0.01 * (seed ? 1 : -1);
}

TEST_F(AdaptiveSweepTest, FindsTheBracketProbingEachRatioOnce) {
  auto sub = Submit(SearchSpec("s"));
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(sub->trials_added(), 5 * 2);  // the coarse grid, both seeds
  ASSERT_EQ(sub->sweep().searches_size(), 1);
  EXPECT_EQ(sub->sweep().searches(0).state(), "running");

  Run(Monotone);
  const v1::Sweep sweep = Sweep("s");
  ASSERT_EQ(sweep.searches_size(), 1);
  const v1::SearchOutcome& o = sweep.searches(0);
  EXPECT_EQ(o.state(), "found");
  EXPECT_LE(o.above() / o.below(), 1.2);
  EXPECT_LT(o.below(), 7.3);
  EXPECT_GE(o.above(), 7.3);
  EXPECT_TRUE(o.non_monotone().empty());
  // Each probe with both seeds, each run once; as many as the pure decision
  // makes on the same response.
  for (const auto& [point, n] : runs_) EXPECT_EQ(n, 1) << point.first;
  RatioSearchSpec spec = SearchSpecOf(SearchSpec("s").search());
  std::vector<ProbeResult> probes;
  for (SearchDecision d = Decide(spec, probes); !d.next_ratios.empty();
       d = Decide(spec, probes)) {
    for (double r : d.next_ratios)
      probes.push_back({r, {Monotone(r, 0), Monotone(r, 1)}, 0, true});
  }
  EXPECT_EQ(o.probes_size(), static_cast<int>(probes.size()));
  EXPECT_EQ(runs_.size(), 2 * probes.size());
  int64_t total = 0;
  for (const v1::StateCount& c : sweep.counts()) total += c.count();
  EXPECT_EQ(total, static_cast<int64_t>(2 * probes.size()));
  // The probe at `above` carries the seed mean and its interval.
  for (const v1::SearchProbe& p : o.probes()) {
    if (p.lr_ratio() != o.above()) continue;
    EXPECT_EQ(p.seeds(), 2);
    EXPECT_NEAR(p.mean(), Monotone(o.above(), 0) + 0.01, 1e-12);
    EXPECT_GT(p.ci95(), 0);
  }

  // Submitting the same file again resumes: nothing added, nothing re-run.
  auto again = Submit(SearchSpec("s"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->trials_added(), 0);
  EXPECT_EQ(Run(Monotone), 0);
}

TEST_F(AdaptiveSweepTest, ReopenedStoreGoesOnWithNoProbeTwiceOrMissing) {
  ASSERT_TRUE(Submit(SearchSpec("s")).ok());
  Run(Monotone, 13);  // the coarse grid and part of the first midpoint
  Open();             // a restarted server on the same file
  Run(Monotone);
  const v1::SearchOutcome o = Sweep("s").searches(0);
  EXPECT_EQ(o.state(), "found");
  for (const auto& [point, n] : runs_) EXPECT_EQ(n, 1) << point.first;
  EXPECT_EQ(runs_.size(), 2u * o.probes_size());
}

// A batch that ends the whole coarse grid in one CompleteTrials grows the
// sweep once, from all of it: the first midpoint, with both seeds, leased
// in the same reply.
TEST_F(AdaptiveSweepTest, ABatchOfCompletionsGrowsTheSweepOnce) {
  ASSERT_TRUE(Submit(SearchSpec("b")).ok());
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(worker_);
  lr.set_worker_key(key_);
  lr.set_max_trials(10);
  std::vector<v1::Lease> leases;
  while (leases.size() < 10) {  // a lease batch may hold fewer
    auto lease = core_->workers().LeaseTrial(lr);
    ASSERT_TRUE(lease.ok()) << lease.status();
    ASSERT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);
    leases.push_back(lease->lease());
    leases.insert(leases.end(), lease->more().begin(), lease->more().end());
  }
  ASSERT_EQ(leases.size(), 10u);
  v1::CompleteTrialsRequest batch;
  batch.set_worker_id(worker_);
  batch.set_worker_key(key_);
  batch.set_lease_next(4);
  for (const v1::Lease& l : leases) {
    v1::CompleteTrialRequest* c = batch.add_trials();
    c->set_trial_id(l.trial_id());
    c->set_attempt(l.attempt());
    c->set_steps(10);
    (*c->mutable_results())["distinct_attention"] =
        Monotone(l.config().lr_ratio(), l.config().seed());
  }
  auto done = core_->workers().CompleteTrials(batch);
  ASSERT_TRUE(done.ok()) << done.status();
  // The coarse grid and the midpoint's two seeds; the outcome lists the
  // midpoint too, with no seed ended yet.
  const v1::Sweep sweep = Sweep("b");
  const v1::SearchOutcome& o = sweep.searches(0);
  EXPECT_EQ(o.state(), "running");
  ASSERT_EQ(o.probes_size(), 6);
  EXPECT_EQ(sweep.total_trials(), 12);
  int queued = 0;
  for (const v1::SearchProbe& p : o.probes()) {
    if (p.complete()) continue;
    ++queued;
    EXPECT_EQ(p.seeds(), 0);
    EXPECT_TRUE(std::isnan(p.mean()));
  }
  EXPECT_EQ(queued, 1);
  // The two seeds of the midpoint of the coarse bracket [3.16, 10].
  const double mid = std::sqrt(std::sqrt(10.0) * 10);
  ASSERT_EQ(done->next().outcome(), v1::LeaseTrialResponse::LEASED);
  std::vector<v1::Lease> next = {done->next().lease()};
  next.insert(next.end(), done->next().more().begin(),
              done->next().more().end());
  ASSERT_EQ(next.size(), 2u);
  for (const v1::Lease& l : next)
    EXPECT_NEAR(l.config().lr_ratio(), mid, 1e-9 * mid);
}

TEST_F(AdaptiveSweepTest, ReportsNonMonotoneReachedAtLoNeverReachedAndFailure) {
  // Reaches at 10, dips below again at 100.
  ASSERT_TRUE(Submit(SearchSpec("dip")).ok());
  Run([](double r, uint64_t) { return r >= 9.9 && r < 99 ? 0.9 : 0.1; });
  v1::SearchOutcome o = Sweep("dip").searches(0);
  EXPECT_EQ(o.state(), "found");
  ASSERT_EQ(o.non_monotone_size(), 1);
  EXPECT_EQ(o.non_monotone(0), 100);

  runs_.clear();
  ASSERT_TRUE(Submit(SearchSpec("low")).ok());
  Run([](double, uint64_t) { return 0.9; });
  EXPECT_EQ(Sweep("low").searches(0).state(), "reached_at_lo");
  EXPECT_EQ(runs_.size(), 10u);  // the coarse grid only

  runs_.clear();
  ASSERT_TRUE(Submit(SearchSpec("never")).ok());
  Run([](double, uint64_t) { return 0.1; });
  EXPECT_EQ(Sweep("never").searches(0).state(), "never_reached");
  EXPECT_EQ(runs_.size(), 10u);

  // Every seed of the first midpoint fails: the search stops there.
  runs_.clear();
  ASSERT_TRUE(Submit(SearchSpec("fails")).ok());
  std::set<double> coarse;
  for (double r : CoarseRatios(SearchSpecOf(SearchSpec("x").search())))
    coarse.insert(r);
  Run([&](double r, uint64_t s) {
    return coarse.count(r) > 0 ? Monotone(r, s) : std::nan("");
  });
  o = Sweep("fails").searches(0);
  EXPECT_EQ(o.state(), "probe_failed");
  EXPECT_EQ(o.probes_size(), 6) << o.DebugString();
  int without_value = 0;
  for (const v1::SearchProbe& p : o.probes()) {
    if (p.seeds() == 0) {
      ++without_value;
      EXPECT_EQ(p.seeds_failed(), 2);
      EXPECT_GT(p.lr_ratio(), o.below());
      EXPECT_LT(p.lr_ratio(), o.above());
    }
  }
  EXPECT_EQ(without_value, 1);
}

TEST_F(AdaptiveSweepTest, OneSearchPerCombinationOfTheOtherAxes) {
  v1::SweepSpec spec = SearchSpec("two");
  spec.mutable_axes()->add_parameterizations(v1::CACO);
  spec.mutable_axes()->add_eta_ovs(0.05);
  auto sub = Submit(spec);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(sub->trials_added(), 4 * 5 * 2);
  EXPECT_EQ(sub->sweep().searches_size(), 4);
}

TEST_F(AdaptiveSweepTest, BadSearchSettingsAreRefusedNamingTheField) {
  struct Case {
    std::function<void(v1::SweepSpec*)> mutate;
    std::string field;
  } cases[] = {
      {[](v1::SweepSpec* s) { s->mutable_search()->set_metric("nope"); },
       "spec.search.metric: unknown result 'nope' for task synthetic"},
      {[](v1::SweepSpec* s) { s->mutable_search()->clear_metric(); },
       "spec.search.metric: is required"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_target(1.5); },
       "spec.search.target: must be in [0, 1] for distinct_attention"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_target(NAN); },
       "spec.search.target"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_hi(1); },
       "spec.search.hi: must be > lo"},
      {[](v1::SweepSpec* s) {
         s->mutable_search()->set_lo(50);
         s->mutable_search()->set_hi(5);
       },
       "spec.search.hi: must be > lo = 50"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_lo(-1); },
       "spec.search.lo: must be finite and > 0"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_axis("eta_ov"); },
       "spec.search.axis: only lr_ratio can be searched (got 'eta_ov')"},
      {[](v1::SweepSpec* s) { s->mutable_axes()->add_lr_ratios(3); },
       "spec.axes.lr_ratios: a ratio search chooses the ratios"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_op(">"); },
       "spec.search.op: must be >= or <="},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_resolution(0.5); },
       "spec.search.resolution"},
      {[](v1::SweepSpec* s) { s->mutable_search()->set_coarse_points(1); },
       "spec.search.coarse_points"},
      {[](v1::SweepSpec* s) {
         s->mutable_axes()->add_seeds(4);
         s->mutable_search()->set_seeds_per_probe(3);
       },
       "spec.search.seeds_per_probe: 3 but axes.seed has 1 seeds"},
      {[](v1::SweepSpec* s) {
         s->mutable_training()->set_task(v1::TASK_FIXED_ATTENTION);
         s->mutable_axes()->add_alphas(0.5);
       },
       "spec.search: the fixed_attention task has no QK circuit"},
  };
  for (const Case& c : cases) {
    v1::SweepSpec spec = SearchSpec("bad");
    c.mutate(&spec);
    auto r = Submit(spec);
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().substr(0, c.field.size()), c.field)
        << r.status();
  }
  EXPECT_TRUE(absl::IsNotFound(core_->sweeps().GetSweep("bad").status()));
}

// --- early stopping ---

// A grid of `seeds` FAFO trials with the rule `rule` on train_loss (lower is
// better), reporting every 100 steps of 1,000.
v1::SweepSpec StoppingSpec(const std::string& name, const std::string& rule,
                           int seeds) {
  v1::SweepSpec s;
  s.set_name(name);
  s.mutable_axes()->add_parameterizations(v1::FAFO);
  s.mutable_axes()->add_lr_ratios(1);
  s.mutable_axes()->add_eta_ovs(0.1);
  for (int i = 0; i < seeds; ++i) s.mutable_axes()->add_seeds(i);
  s.mutable_training()->set_max_steps(1000);
  s.mutable_training()->set_report_every(100);
  v1::EarlyStopping* e = s.mutable_early_stopping();
  e->set_rule(rule);
  e->set_metric("train_loss");
  e->set_min_steps(200);
  e->set_min_peers(2);
  e->set_reduction(2);
  return s;
}

class EarlyStoppingTest : public AdaptiveSweepTest {
 protected:
  v1::Lease LeaseOne() {
    v1::LeaseTrialRequest lr;
    lr.set_worker_id(worker_);
    lr.set_worker_key(key_);
    auto lease = core_->workers().LeaseTrial(lr);
    EXPECT_TRUE(lease.ok()) << lease.status();
    EXPECT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);
    return lease->lease();
  }
  absl::StatusOr<v1::ReportMetricsResponse> Report(const v1::Lease& l,
                                                   int64_t step,
                                                   double train_loss) {
    v1::ReportMetricsRequest r;
    r.set_worker_id(worker_);
    r.set_worker_key(key_);
    r.set_trial_id(l.trial_id());
    r.set_attempt(l.attempt());
    v1::MetricPoint* p = r.add_points();
    p->set_step(step);
    p->set_name("train_loss");
    p->set_value(train_loss);
    return core_->workers().ReportMetrics(r);
  }
  bool Stopped(const absl::StatusOr<v1::ReportMetricsResponse>& r) {
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() && r->lease().directive() == v1::LeaseStatus::STOP_EARLY;
  }
  v1::TrialState State(const v1::Lease& l) {
    auto t = core_->sweeps().GetTrial(l.trial_id());
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? t->state() : v1::TRIAL_STATE_UNSPECIFIED;
  }
};

TEST_F(EarlyStoppingTest, MedianStopsTheTrialBehindItsPeersAndKeepsItsCurve) {
  ASSERT_TRUE(Submit(StoppingSpec("m", "median", 4)).ok());
  const v1::Lease a = LeaseOne(), b = LeaseOne(), c = LeaseOne(),
                  d = LeaseOne();
  // Before min_steps nothing is judged, however far behind.
  EXPECT_FALSE(Stopped(Report(d, 100, 9.0)));
  EXPECT_FALSE(Stopped(Report(a, 200, 1.0)));
  EXPECT_FALSE(Stopped(Report(b, 200, 1.1)));   // one peer: fewer than 2
  EXPECT_FALSE(Stopped(Report(c, 200, 1.05)));  // better than median 1.05
  EXPECT_TRUE(Stopped(Report(d, 200, 5.0)));    // worse than median 1.05
  EXPECT_EQ(State(d), v1::STOPPED_EARLY);
  EXPECT_EQ(State(c), v1::RUNNING);
  // Its curve stays; its attempt says why; it cannot report again.
  v1::GetTrialMetricsRequest mr;
  mr.set_trial_id(d.trial_id());
  auto curve = core_->results().GetTrialMetrics(mr);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_EQ(curve->series_size(), 1);
  EXPECT_EQ(curve->series(0).values_size(), 2);
  auto trial = core_->sweeps().GetTrial(d.trial_id());
  ASSERT_TRUE(trial.ok());
  ASSERT_EQ(trial->attempt_history_size(), 1);
  EXPECT_EQ(trial->attempt_history(0).state(), "stopped_early");
  EXPECT_NE(trial->attempt_history(0).error().find("early stopping (median)"),
            std::string::npos)
      << trial->attempt_history(0).error();
  EXPECT_TRUE(absl::IsFailedPrecondition(Report(d, 300, 0.1).status()));
  // Never leased again: not by retry, re-submission, or once the rest end.
  ASSERT_TRUE(core_->sweeps().RetrySweep("m").ok());
  ASSERT_TRUE(Submit(StoppingSpec("m", "median", 4)).ok());
  for (const v1::Lease& l : {a, b, c}) {
    v1::CompleteTrialRequest done;
    done.set_worker_id(worker_);
    done.set_worker_key(key_);
    done.set_trial_id(l.trial_id());
    done.set_attempt(l.attempt());
    done.set_steps(1000);
    (*done.mutable_results())["accuracy"] = 1;
    ASSERT_TRUE(core_->workers().CompleteTrial(done).ok());
  }
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(worker_);
  lr.set_worker_key(key_);
  auto none = core_->workers().LeaseTrial(lr);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->outcome(), v1::LeaseTrialResponse::NO_WORK);
  const v1::Sweep sweep = Sweep("m");
  std::map<v1::TrialState, int64_t> counts;
  for (const v1::StateCount& sc : sweep.counts())
    counts[sc.state()] = sc.count();
  EXPECT_EQ(counts[v1::DONE], 3);
  EXPECT_EQ(counts[v1::STOPPED_EARLY], 1);
}

TEST_F(EarlyStoppingTest, AshaJudgesAtRungsAgainstTheTrialsThereBefore) {
  // Rungs at 200, 400, 800 (min_steps 200, eta 2, below max_steps 1000).
  ASSERT_TRUE(Submit(StoppingSpec("a", "asha", 3)).ok());
  const v1::Lease a = LeaseOne(), b = LeaseOne(), c = LeaseOne();
  EXPECT_FALSE(Stopped(Report(a, 200, 2.0)));  // first at the rung
  EXPECT_FALSE(Stopped(Report(b, 300, 9.0)));  // not a rung
  EXPECT_FALSE(Stopped(Report(b, 200, 1.0)));  // better than a
  EXPECT_TRUE(Stopped(Report(c, 200, 3.0)));   // outside the best half
  EXPECT_EQ(State(c), v1::STOPPED_EARLY);
  EXPECT_FALSE(Stopped(Report(b, 400, 0.5)));  // first at rung 400
  EXPECT_TRUE(Stopped(Report(a, 400, 0.9)));   // behind b there
  EXPECT_EQ(State(a), v1::STOPPED_EARLY);
  EXPECT_EQ(State(b), v1::RUNNING);
}

TEST_F(EarlyStoppingTest, ASweepWithoutARuleNeverStops) {
  v1::SweepSpec spec = StoppingSpec("none", "median", 3);
  spec.clear_early_stopping();
  ASSERT_TRUE(Submit(spec).ok());
  const v1::Lease a = LeaseOne(), b = LeaseOne(), c = LeaseOne();
  EXPECT_FALSE(Stopped(Report(a, 200, 1.0)));
  EXPECT_FALSE(Stopped(Report(b, 200, 1.0)));
  EXPECT_FALSE(Stopped(Report(c, 200, 50.0)));
  EXPECT_EQ(State(c), v1::RUNNING);
}

TEST_F(EarlyStoppingTest, BadRulesAreRefusedNamingTheField) {
  struct Case {
    std::function<void(v1::EarlyStopping*)> mutate;
    std::string message;
  } cases[] = {
      {[](v1::EarlyStopping* e) { e->set_rule("hyperband"); },
       "spec.early_stopping.rule: must be median or asha (got 'hyperband')"},
      {[](v1::EarlyStopping* e) { e->set_metric("accuracy"); },
       "spec.early_stopping.metric: unknown curve 'accuracy' for task "
       "synthetic"},
      {[](v1::EarlyStopping* e) { e->set_mode("up"); },
       "spec.early_stopping.mode: must be min or max"},
      {[](v1::EarlyStopping* e) { e->set_min_steps(-1); },
       "spec.early_stopping.min_steps: must be >= 0"},
      {[](v1::EarlyStopping* e) {
         e->set_rule("asha");
         e->set_min_steps(150);
       },
       "spec.early_stopping.min_steps: asha's first rung must be a positive "
       "multiple of training.report_every (100)"},
      {[](v1::EarlyStopping* e) {
         e->set_rule("asha");
         e->set_reduction(2.5);
       },
       "spec.early_stopping.reduction: must be an integer in [2, 1000]"},
      {[](v1::EarlyStopping* e) {
         e->set_rule("asha");
         e->set_min_steps(1000);
       },
       "spec.early_stopping.min_steps: must be below training.max_steps"},
  };
  for (const Case& c : cases) {
    v1::SweepSpec spec = StoppingSpec("bad", "median", 2);
    c.mutate(spec.mutable_early_stopping());
    auto r = Submit(spec);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().substr(0, c.message.size()), c.message)
        << r.status();
  }
}

}  // namespace
}  // namespace qkov::core
