// Coordinator with a real SQLite file and a fake clock: lease expiry and
// fencing without sleeping.
#include "server/core/coordinator.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>

#include "common/lease_limits.h"
#include "server/core/sweep_spec.h"
#include "server/core/trial_memory.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-coord-XXXXXX";
    dir_ = mkdtemp(tmpl);
    store_ = std::move(*storage::ResultsStore::Open(dir_ + "/r.db"));
    CoordinatorOptions o;
    o.lease_duration = absl::Seconds(10);
    core_ = std::make_unique<Coordinator>(store_.get(), &clock_, o);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Submits (or extends) sweep "demo": FAFO, ratio 1, eta_ov 0.1, seeds
  // 0..seeds-1.
  v1::SubmitSweepResponse SubmitDemo(int seeds) {
    v1::SubmitSweepRequest r;
    auto* s = r.mutable_spec();
    s->set_name("demo");
    s->mutable_axes()->add_parameterizations(v1::FAFO);
    s->mutable_axes()->add_lr_ratios(1);
    s->mutable_axes()->add_eta_ovs(0.1);
    for (int i = 0; i < seeds; ++i) s->mutable_axes()->add_seeds(i);
    auto resp = core_->sweeps().SubmitSweep(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? *resp : v1::SubmitSweepResponse();
  }

  // Registers a worker; its key is Key(id).
  std::string Register() {
    v1::RegisterWorkerRequest r;
    r.set_name("w");
    absl::StatusOr<v1::RegisterWorkerResponse> resp =
        core_->workers().RegisterWorker(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    keys_[resp->worker_id()] = resp->worker_key();
    return resp->worker_id();
  }
  std::string Key(const std::string& worker_id) { return keys_[worker_id]; }
  // A lease request of worker `w`, and its completion of `lease`.
  v1::LeaseTrialRequest LeaseRequest(const std::string& w) {
    v1::LeaseTrialRequest r;
    r.set_worker_id(w);
    r.set_worker_key(Key(w));
    return r;
  }
  v1::CompleteTrialRequest Completion(const std::string& w,
                                      const v1::Lease& lease) {
    v1::CompleteTrialRequest r;
    r.set_worker_id(w);
    r.set_worker_key(Key(w));
    r.set_trial_id(lease.trial_id());
    r.set_attempt(lease.attempt());
    return r;
  }

  std::map<std::string, std::string> keys_;

  std::string dir_;
  FakeClock clock_;
  std::unique_ptr<storage::ResultsStore> store_;
  std::unique_ptr<Coordinator> core_;
};

TEST_F(CoordinatorTest, LateReportAfterLeaseExpiryIsRefusedAndLeavesNoRow) {
  SubmitDemo(1);
  const std::string w1 = Register(), w2 = Register();
  EXPECT_NE(w1, w2);
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(w1);
  lr.set_worker_key(Key(w1));
  auto lease = core_->workers().LeaseTrial(lr);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(lease->lease().config().training().batch_size(),
            32);  // defaults reached the worker

  clock_.Advance(absl::Seconds(11));  // w1 is cut off past its lease
  lr.set_worker_id(w2);
  lr.set_worker_key(Key(w2));
  auto lease2 = core_->workers().LeaseTrial(lr);
  ASSERT_EQ(lease2->outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(lease2->lease().attempt(), 2);

  v1::ReportMetricsRequest late;
  late.set_worker_id(w1);
  late.set_worker_key(Key(w1));
  late.set_trial_id(lease->lease().trial_id());
  late.set_attempt(1);
  auto* p = late.add_points();
  p->set_step(100);
  p->set_name("train_loss");
  p->set_value(0.3);
  EXPECT_EQ(core_->workers().ReportMetrics(late).status().code(),
            absl::StatusCode::kFailedPrecondition);
  v1::CompleteTrialRequest done;
  done.set_worker_id(w1);
  done.set_worker_key(Key(w1));
  done.set_trial_id(lease->lease().trial_id());
  done.set_attempt(1);
  (*done.mutable_results())["accuracy"] = 1;
  EXPECT_EQ(core_->workers().CompleteTrial(done).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store_->trials().Metrics(lease->lease().trial_id())->empty());

  // The heartbeat of the stale attempt says STOP.
  v1::HeartbeatRequest hb;
  hb.set_worker_id(w1);
  hb.set_worker_key(Key(w1));
  auto* ref = hb.add_leases();
  ref->set_trial_id(lease->lease().trial_id());
  ref->set_attempt(1);
  EXPECT_EQ(core_->workers().Heartbeat(hb)->leases(0).directive(),
            v1::LeaseStatus::STOP);

  done.set_worker_id(w2);

  done.set_worker_key(Key(w2));
  done.set_attempt(2);
  ASSERT_TRUE(core_->workers().CompleteTrial(done).ok());
  auto trial = core_->sweeps().GetTrial(lease->lease().trial_id());
  EXPECT_EQ(trial->state(), v1::DONE);
  EXPECT_EQ(trial->attempt_history(0).state(), "lost");
  EXPECT_EQ(trial->results().at("accuracy"), 1);
}

// A watcher reads the change count, then the state, then waits on the
// count: a change made while it read (here: between the count and the
// wait) wakes the wait at once instead of being missed.
TEST_F(CoordinatorTest, AChangeBeforeTheWaitIsNotMissed) {
  SubmitDemo(1);
  const uint64_t seen = core_->changes().ChangeCount();
  EXPECT_EQ(core_->changes().WaitForChange(seen, absl::Now()), seen)
      << "nothing changed, yet the wait saw a change";
  v1::PauseSweepRequest pause;
  pause.set_name("demo");
  pause.set_paused(true);
  ASSERT_TRUE(core_->sweeps().PauseSweep(pause).ok());
  // Missed, the wait would run to its deadline, a minute away.
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  const uint64_t after = core_->changes().WaitForChange(seen, deadline);
  EXPECT_LT(absl::Now(), deadline) << "the wait missed the pause";
  EXPECT_NE(after, seen);
  EXPECT_EQ(after, core_->changes().ChangeCount());
}

TEST_F(CoordinatorTest, NoWorkOutcomes) {
  const std::string w = Register();
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(w);
  lr.set_worker_key(Key(w));
  EXPECT_EQ(core_->workers().LeaseTrial(lr)->outcome(),
            v1::LeaseTrialResponse::NO_WORK);
  SubmitDemo(1);
  EXPECT_EQ(core_->workers().LeaseTrial(lr)->outcome(),
            v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(core_->workers().LeaseTrial(lr)->outcome(),
            v1::LeaseTrialResponse::NO_WORK_NOW);
}

TEST_F(CoordinatorTest, ResubmitSchedulesOnlyNewPoints) {
  SubmitDemo(2);
  const v1::SubmitSweepResponse resp = SubmitDemo(5);
  EXPECT_EQ(resp.trials_added(), 3);
  EXPECT_EQ(resp.trials_existing(), 2);
  EXPECT_EQ(resp.sweep().total_trials(), 5);
}

TEST_F(CoordinatorTest, MalformedWorkerCallsAreInvalidArgument) {
  v1::LeaseTrialRequest lr;
  EXPECT_EQ(core_->workers().LeaseTrial(lr).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::ReportMetricsRequest m;
  m.set_worker_id("w");
  m.set_trial_id("x");
  m.set_attempt(0);
  EXPECT_EQ(core_->workers().ReportMetrics(m).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::GetSweepRequest g;
  EXPECT_EQ(core_->sweeps().GetSweep("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(CoordinatorTest,
       BatchCompletionValidatesEachTrialAndLeasesTheNextBatch) {
  SubmitDemo(6);
  const std::string w = Register();
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(w);
  lr.set_worker_key(Key(w));
  lr.set_max_trials(3);
  auto batch = core_->workers().LeaseTrial(lr);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->more_size(), 2);
  std::vector<v1::Lease> leases = {batch->lease(), batch->more(0),
                                   batch->more(1)};
  v1::CompleteTrialsRequest r;
  r.set_worker_id(w);
  r.set_worker_key(Key(w));
  r.set_lease_next(3);
  for (const v1::Lease& l : leases) {
    v1::CompleteTrialRequest* c = r.add_trials();
    c->set_trial_id(l.trial_id());
    c->set_attempt(l.attempt());
    (*c->mutable_results())["accuracy"] = 1;
  }
  // A bad member is refused with its path; nothing is stored.
  v1::CompleteTrialsRequest bad = r;
  bad.mutable_trials(1)->clear_results();
  auto refused = core_->workers().CompleteTrials(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message().rfind("trials[1].results:", 0), 0u)
      << refused.status();
  bad = r;
  *bad.add_trials() = r.trials(0);
  refused = core_->workers().CompleteTrials(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("appears twice"),
            std::string::npos);
  bad = r;
  bad.set_lease_next(-1);
  EXPECT_EQ(core_->workers().CompleteTrials(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.clear_trials();
  EXPECT_EQ(core_->workers().CompleteTrials(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const v1::Lease& l : leases) {
    EXPECT_EQ(core_->sweeps().GetTrial(l.trial_id())->state(), v1::RUNNING);
  }

  auto done = core_->workers().CompleteTrials(r);
  ASSERT_TRUE(done.ok()) << done.status();
  for (const v1::Lease& l : leases) {
    EXPECT_EQ(core_->sweeps().GetTrial(l.trial_id())->state(), v1::DONE);
  }
  ASSERT_EQ(done->next().outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(done->next().more_size(), 2);
  // The leases carry the full config (read from the stored binary).
  EXPECT_EQ(done->next().lease().config().training().batch_size(), 32);
  // The same batch again (a retry whose reply was lost): answered as the
  // first, with the leases the first granted, and nothing written.
  r.set_resend_held(true);
  auto again = core_->workers().CompleteTrials(r);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->next().lease().trial_id(), done->next().lease().trial_id());
  EXPECT_EQ(again->next().lease().attempt(), done->next().lease().attempt());
  EXPECT_EQ(again->next().more_size(), 2);
  for (const v1::Lease& l : leases) {
    EXPECT_EQ(core_->sweeps().GetTrial(l.trial_id())->attempts(), 1);
  }
}

// A worker's memory budget caps what one lease holds (TrialsThatFit on the
// sweep's training), and fill_budget leases as many as fit.
TEST_F(CoordinatorTest, LeasesHoldWhatFitsTheWorkersMemoryBudget) {
  SubmitDemo(42);
  const std::string w = Register();
  v1::LeaseTrialRequest probe;
  probe.set_worker_id(w);
  probe.set_worker_key(Key(w));
  auto one = core_->workers().LeaseTrial(probe);
  ASSERT_TRUE(one.ok()) << one.status();
  const v1::Training& t = one->lease().config().training();
  const int64_t first = EstimateTrialMemoryBytes(t);
  const int64_t each = EstimateStackedTrialBytes(t);
  ASSERT_GT(each, 0);

  auto leased = [&](int max_trials, int64_t budget, bool fill) {
    v1::LeaseTrialRequest r = probe;
    r.set_max_trials(max_trials);
    r.set_memory_budget_bytes(budget);
    r.set_fill_budget(fill);
    auto resp = core_->workers().LeaseTrial(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? 1 + resp->more_size() : -1;
  };
  EXPECT_EQ(leased(8, first + 2 * each + each / 2, false), 3);
  EXPECT_EQ(leased(8, first - 1, false), 1);  // one, even when none fits
  EXPECT_EQ(leased(8, 0, false), 8);          // no budget: max_trials
  EXPECT_EQ(leased(0, first + 20 * each, true), 21);  // fill: up to 4096
  EXPECT_EQ(leased(2, first + 20 * each, true), 2);   // fill, capped

  v1::LeaseTrialRequest bad = probe;
  bad.set_max_trials(limits::kMaxLeaseTrials + 1);
  auto too_many = core_->workers().LeaseTrial(bad);
  EXPECT_EQ(too_many.status().message(),
            "max_trials: must be in [0, 4096] (got 4097)");
  bad = probe;
  bad.set_fill_budget(true);
  auto refused = core_->workers().LeaseTrial(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "fill_budget: needs memory_budget_bytes > 0");
  bad = probe;
  bad.set_memory_budget_bytes(-5);
  refused = core_->workers().LeaseTrial(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "memory_budget_bytes: must be >= 0 (got -5)");

  // A batch completion's next lease follows its budget too.
  v1::CompleteTrialsRequest done;
  done.set_worker_id(w);
  done.set_worker_key(Key(w));
  v1::CompleteTrialRequest* c = done.add_trials();
  c->set_trial_id(one->lease().trial_id());
  c->set_attempt(one->lease().attempt());
  (*c->mutable_results())["accuracy"] = 1;
  done.set_lease_next(256);
  done.set_fill_budget(true);
  done.set_memory_budget_bytes(first + 4 * each);
  auto next = core_->workers().CompleteTrials(done);
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_EQ(next->next().outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(1 + next->next().more_size(), 5);  // 42 - 36 leased = 6 queued
}

// Trials that train one after another (here the theory task) are leased one
// at a time, whether the worker fills its budget or asks for a number, with
// or without a budget: a lease of several would only keep them from idle
// workers.
TEST_F(CoordinatorTest, LeasesOneTrialOfAKindThatDoesNotStack) {
  v1::SubmitSweepRequest submit;
  v1::SweepSpec* spec = submit.mutable_spec();
  spec->set_name("theory");
  spec->mutable_training()->set_task(v1::TASK_THEORY);
  for (double r : {0.1, 1.0, 10.0, 100.0})
    spec->mutable_axes()->add_lr_ratios(r);
  spec->mutable_axes()->add_eta_ovs(1);
  ASSERT_TRUE(core_->sweeps().SubmitSweep(submit).ok());
  const std::string w = Register();
  v1::LeaseTrialRequest r;
  r.set_worker_id(w);
  r.set_worker_key(Key(w));
  r.set_memory_budget_bytes(int64_t{1} << 40);
  r.set_fill_budget(true);
  auto one = core_->workers().LeaseTrial(r);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(one->more_size(), 0);
  r.set_fill_budget(false);
  r.set_max_trials(3);
  auto asked = core_->workers().LeaseTrial(r);
  ASSERT_TRUE(asked.ok()) << asked.status();
  ASSERT_EQ(asked->outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(asked->more_size(), 0);
  r.set_memory_budget_bytes(0);
  auto unbudgeted = core_->workers().LeaseTrial(r);
  ASSERT_TRUE(unbudgeted.ok()) << unbudgeted.status();
  ASSERT_EQ(unbudgeted->outcome(), v1::LeaseTrialResponse::LEASED);
  EXPECT_EQ(unbudgeted->more_size(), 0);
}

}  // namespace
}  // namespace qkov::core

namespace qkov::core {
namespace {

// The cached result rows (server/core/result_rows.h) follow completions and
// extensions, and QueryResults filters, sorts and pages them on the server.
// The DTAP grid averages the first per_group done trials' heatmaps; each
// completion that changes that set changes the grid, and one that does not
// leaves it as it was.
TEST_F(CoordinatorTest, SweepHeatmapsFollowCompletions) {
  SubmitDemo(4);
  const std::string w = Register();
  v1::SweepHeatmapsRequest q;
  q.set_sweep_name("demo");
  q.set_per_group(3);
  auto grid = core_->results().SweepHeatmaps(q);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->groups_size(), 0);
  // Trial k's map (2 x 1 bins) is {k, 10 k}: the mean of the first n is
  // {m, 10 m}.
  const double expected_mean[] = {0, 0.5, 1, 1};  // the 4th is past per_group
  for (int k = 0; k < 4; ++k) {
    v1::LeaseTrialRequest lr;
    lr.set_worker_id(w);
    lr.set_worker_key(Key(w));
    auto lease = core_->workers().LeaseTrial(lr);
    ASSERT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);
    v1::CompleteTrialRequest done;
    done.set_worker_id(w);
    done.set_worker_key(Key(w));
    done.set_trial_id(lease->lease().trial_id());
    done.set_attempt(lease->lease().attempt());
    (*done.mutable_results())["accuracy"] = 0.5;
    v1::Heatmap* h = done.add_heatmaps();
    h->set_name("dtap");
    for (double e : {0.0, 0.5, 1.0}) h->add_x_edges(e);
    for (double e : {0.0, 1.0}) h->add_y_edges(e);
    h->add_values(k);
    h->add_values(10 * k);
    auto completed = core_->workers().CompleteTrial(done);
    ASSERT_TRUE(completed.ok()) << completed.status();
    clock_.Advance(absl::Seconds(1));  // past the rows' refresh interval
    grid = core_->results().SweepHeatmaps(q);
    ASSERT_TRUE(grid.ok()) << grid.status();
    ASSERT_EQ(grid->groups_size(), 1);
    EXPECT_EQ(grid->groups(0).n(), std::min(k + 1, 3)) << k;
    ASSERT_EQ(grid->groups(0).mean().values_size(), 2);
    EXPECT_DOUBLE_EQ(grid->groups(0).mean().values(0), expected_mean[k]) << k;
    EXPECT_DOUBLE_EQ(grid->groups(0).mean().values(1), 10 * expected_mean[k]);
  }
  // Another per_group is another grid.
  q.set_per_group(1);
  grid = core_->results().SweepHeatmaps(q);
  ASSERT_EQ(grid->groups_size(), 1);
  EXPECT_EQ(grid->groups(0).n(), 1);
  EXPECT_DOUBLE_EQ(grid->groups(0).mean().values(0), 0);
}

TEST_F(CoordinatorTest, ResultRowsFollowCompletionsAndPageOnTheServer) {
  SubmitDemo(4);
  v1::QueryResultsRequest q;
  q.set_sweep_name("demo");
  auto before = core_->results().QueryResults(q);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->total_rows(), 4);
  for (const auto& r : before->rows()) EXPECT_TRUE(r.values().empty());

  // Complete seeds 0..2 with accuracy 0.1 * (seed + 1), one at a time.
  const std::string w = Register();
  for (int i = 0; i < 3; ++i) {
    v1::LeaseTrialRequest lr;
    lr.set_worker_id(w);
    lr.set_worker_key(Key(w));
    auto lease = core_->workers().LeaseTrial(lr);
    ASSERT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);
    clock_.Advance(absl::Seconds(1));  // past the cache's refresh interval
    v1::CompleteTrialRequest done;
    done.set_worker_id(w);
    done.set_worker_key(Key(w));
    done.set_trial_id(lease->lease().trial_id());
    done.set_attempt(lease->lease().attempt());
    (*done.mutable_results())["accuracy"] =
        0.1 * (lease->lease().config().seed() + 1);
    ASSERT_TRUE(core_->workers().CompleteTrial(done).ok());
    clock_.Advance(absl::Seconds(1));
    // Each read sees the completion just made, with the trial's full config.
    v1::QueryResultsRequest done_only = q;
    done_only.add_where("state=done");
    auto rows = core_->results().QueryResults(done_only);
    ASSERT_TRUE(rows.ok()) << rows.status();
    EXPECT_EQ(rows->total_rows(), i + 1);
    for (const auto& r : rows->rows())
      EXPECT_EQ(r.config().training().batch_size(), 32) << "full config";
  }
  v1::QueryResultsRequest sorted = q;
  sorted.set_sort_by("accuracy");
  sorted.set_descending(true);
  sorted.set_limit(2);
  auto page = core_->results().QueryResults(sorted);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total_rows(), 4);
  ASSERT_EQ(page->rows_size(), 2);
  EXPECT_DOUBLE_EQ(page->rows(0).values().at("accuracy"), 0.3);
  EXPECT_DOUBLE_EQ(page->rows(1).values().at("accuracy"), 0.2);
  sorted.set_offset(2);
  page = core_->results().QueryResults(sorted);
  ASSERT_EQ(page->rows_size(), 2);
  EXPECT_DOUBLE_EQ(page->rows(0).values().at("accuracy"), 0.1);
  EXPECT_TRUE(page->rows(1).values().empty()) << "missing values sort last";

  // An extension appends its trials after the cached ones.
  SubmitDemo(6);
  clock_.Advance(absl::Seconds(1));
  auto extended = core_->results().QueryResults(q);
  ASSERT_EQ(extended->total_rows(), 6);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(extended->rows(i).config().seed(), static_cast<uint64_t>(i));

  // Aggregation over the same rows: mean of the three done trials.
  v1::AggregateResultsRequest a;
  a.set_sweep_name("demo");
  a.add_by("parameterization");
  a.add_metrics("accuracy");
  a.add_where("state=done");
  auto agg = core_->results().AggregateResults(a);
  ASSERT_TRUE(agg.ok()) << agg.status();
  EXPECT_EQ(agg->rows(), 3);
  ASSERT_EQ(agg->groups_size(), 1);
  EXPECT_EQ(agg->groups(0).keys(0), "FAFO");
  EXPECT_EQ(agg->groups(0).metrics().at("accuracy").n(), 3);
  EXPECT_NEAR(agg->groups(0).metrics().at("accuracy").mean(), 0.2, 1e-15);

  v1::QueryResultsRequest unknown = q;
  unknown.set_sweep_name("nope");
  EXPECT_EQ(core_->results().QueryResults(unknown).status().code(),
            absl::StatusCode::kNotFound);
  v1::QueryResultsRequest bad = q;
  bad.set_sort_by("a b");
  EXPECT_EQ(core_->results().QueryResults(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The columns the notebook client reads (ResultColumns): every setting of
// the stored configs under its sweep-file key, each trial's bookkeeping and
// times, a result named like an axis kept apart from the axis, and the
// same sort and page as QueryResults. The sweep arrives as a sweep file's
// text, as the notebook client submits it.
TEST_F(CoordinatorTest, ResultColumnsCarryEverySettingAndTheTrialsTimes) {
  v1::SubmitSweepRequest submit;
  submit.set_sweep_file(
      "name: cols\n"
      "axes: {parameterization: [FAFO], lr_ratio: [1], eta_ov: [0.1], "
      "seed: [1, 2, 3]}\n"
      "training: {max_steps: 40, optimizer: {weight_decay: 0.25}}\n");
  submit.add_overrides("training.batch_size=16");
  auto submitted = core_->sweeps().SubmitSweep(submit);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(submitted->trials_added(), 3);

  const absl::Time t0 = clock_.Now();
  const std::string w = Register();
  auto lease = core_->workers().LeaseTrial(LeaseRequest(w));
  ASSERT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);
  clock_.Advance(absl::Seconds(7));
  v1::CompleteTrialRequest done = Completion(w, lease->lease());
  (*done.mutable_results())["alpha"] = 0.75;  // a result named like an axis
  ASSERT_TRUE(core_->workers().CompleteTrial(done).ok());
  clock_.Advance(absl::Seconds(1));

  v1::QueryResultsRequest q;
  q.set_sweep_name("cols");
  auto chunks = core_->results().ResultColumns(q, 2);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->size(), 2u) << "3 rows, 2 a message";
  const v1::ResultColumns& c = (*chunks)[0];
  EXPECT_EQ(c.total_rows(), 3);
  ASSERT_EQ(c.trial_ids_size(), 2);
  std::map<std::string, const v1::SettingColumn*> by_name;
  for (const v1::SettingColumn& s : c.settings()) by_name[s.name()] = &s;
  for (const v1::ResultColumns& other : *chunks) {
    ASSERT_EQ(other.settings_size(), c.settings_size()) << "same columns";
  }
  ASSERT_TRUE(by_name.count("training.optimizer.weight_decay"));
  EXPECT_DOUBLE_EQ(by_name["training.optimizer.weight_decay"]->numbers(1),
                   0.25);
  ASSERT_TRUE(by_name.count("training.batch_size"));
  EXPECT_EQ(by_name["training.batch_size"]->integers(0), 16);
  EXPECT_EQ(by_name["training.max_steps"]->integers(0), 40);
  EXPECT_EQ(by_name["seed"]->integers(1), 2);
  const v1::SettingColumn* p = by_name["parameterization"];
  ASSERT_EQ(p->categories_size(), 1) << "one value, sent once";
  EXPECT_EQ(p->categories(0), "FAFO");
  EXPECT_EQ(p->codes_size(), 2);
  EXPECT_EQ(p->codes(1), 0);
  EXPECT_EQ(by_name["training.task"]->categories(0), "synthetic");
  EXPECT_FALSE(by_name.count("alpha")) << "the synthetic task takes none";
  EXPECT_EQ(c.metrics_size(), 1);
  EXPECT_EQ(c.metrics(0).name(), "alpha");

  // The done trial (ordinal 0): its attempt's start and end, the rest never
  // started.
  int done_row = -1;
  for (int i = 0; i < c.trial_ids_size(); ++i) {
    if (c.trial_ids(i) == lease->lease().trial_id()) done_row = i;
  }
  ASSERT_GE(done_row, 0);
  EXPECT_EQ(c.started_ms(done_row), absl::ToUnixMillis(t0));
  EXPECT_EQ(c.ended_ms(done_row), absl::ToUnixMillis(t0 + absl::Seconds(7)));
  EXPECT_EQ(c.attempts(done_row), 1);
  EXPECT_DOUBLE_EQ(c.metrics(0).values(done_row), 0.75);
  EXPECT_EQ(c.started_ms(1 - done_row), 0);
  EXPECT_EQ(c.ended_ms(1 - done_row), 0);
  EXPECT_EQ(c.ordinal(0), 0);
  EXPECT_EQ(c.ordinal(1), 1);
  EXPECT_EQ(c.config_hash(0).size(), 64u);

  // Sorted by the result, one row from offset 0: the done trial.
  q.set_sort_by("alpha");
  q.set_limit(1);
  chunks = core_->results().ResultColumns(q);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->size(), 1u);
  EXPECT_EQ((*chunks)[0].total_rows(), 3);
  ASSERT_EQ((*chunks)[0].trial_ids_size(), 1);
  EXPECT_EQ((*chunks)[0].trial_ids(0), lease->lease().trial_id());
  q.set_offset(-1);
  EXPECT_EQ(core_->results().ResultColumns(q).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A sweep by source: the text's errors name it and its line; a preset by
// name; two sources, or overrides with a spec, are refused.
TEST_F(CoordinatorTest, SubmitReadsASweepFileOrAPresetOnTheServer) {
  v1::SubmitSweepRequest bad;
  bad.set_sweep_file("name: x\naxes: {parameterization: [NOPE]}\n");
  bad.set_sweep_file_name("mine.yaml");
  absl::Status s = core_->sweeps().SubmitSweep(bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("mine.yaml:2"), std::string::npos) << s;

  v1::SubmitSweepRequest both;
  both.set_sweep_file("name: x\n");
  both.set_preset("paper-ratio");
  EXPECT_EQ(core_->sweeps().SubmitSweep(both).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::SubmitSweepRequest spec_and_set;
  spec_and_set.mutable_spec()->set_name("x");
  spec_and_set.add_overrides("training.max_steps=3");
  EXPECT_EQ(core_->sweeps().SubmitSweep(spec_and_set).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::SubmitSweepRequest unknown;
  unknown.set_preset("no-such-preset");
  EXPECT_EQ(core_->sweeps().SubmitSweep(unknown).status().code(),
            absl::StatusCode::kNotFound);

  v1::SubmitSweepRequest preset;
  preset.set_preset("paper-ratio");
  preset.set_quick(true);
  preset.add_overrides("axes.seed=[1]");
  auto r = core_->sweeps().SubmitSweep(preset);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->trials_added(), 0);
  auto sweep = core_->sweeps().GetSweep(r->sweep().name());
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(r->sweep().name(), "paper-ratio-quick");
}

// The server-wide leasing switch: an admin's alone; while paused a worker
// gets NO_WORK_NOW (also as the next lease of a completion) with a
// retry_after; it holds across a reopen of the store; resumed, leasing goes
// on.
TEST_F(CoordinatorTest, LeasingPausedServerWideLeasesNothingNew) {
  SubmitDemo(3);
  const std::string w = Register();
  const v1::LeaseTrialRequest lr = LeaseRequest(w);
  auto first = core_->workers().LeaseTrial(lr);
  ASSERT_EQ(first->outcome(), v1::LeaseTrialResponse::LEASED);

  v1::LeasingRequest pause;
  pause.set_paused(true);
  pause.set_reason("upgrade to 0.2");
  EXPECT_EQ(core_->sweeps()
                .Leasing(pause, storage::Actor{"alice", false})
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  auto state = core_->sweeps().Leasing(pause, storage::Actor{"root", true});
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_TRUE(state->paused());
  EXPECT_EQ(state->actor(), "root");
  EXPECT_EQ(state->reason(), "upgrade to 0.2");
  EXPECT_TRUE(state->has_since());

  auto none = core_->workers().LeaseTrial(lr);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->outcome(), v1::LeaseTrialResponse::NO_WORK_NOW);
  EXPECT_GT(none->retry_after().seconds() + none->retry_after().nanos(), 0);
  // The running trial finishes; its completion leases nothing next.
  v1::CompleteTrialRequest done = Completion(w, first->lease());
  (*done.mutable_results())["accuracy"] = 1;
  done.set_lease_next(true);
  auto next = core_->workers().CompleteTrial(done);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->next().outcome(), v1::LeaseTrialResponse::NO_WORK_NOW);

  // A restart keeps it paused.
  core_.reset();
  store_.reset();
  store_ = std::move(*storage::ResultsStore::Open(dir_ + "/r.db"));
  core_ = std::make_unique<Coordinator>(store_.get(), &clock_,
                                        CoordinatorOptions());
  EXPECT_TRUE(core_->sweeps().Leasing({})->paused());
  EXPECT_EQ(core_->workers().LeaseTrial(lr)->outcome(),
            v1::LeaseTrialResponse::NO_WORK_NOW);

  v1::LeasingRequest resume;
  resume.set_paused(false);
  EXPECT_FALSE(
      core_->sweeps().Leasing(resume, storage::Actor{"root", true})->paused());
  EXPECT_EQ(core_->workers().LeaseTrial(lr)->outcome(),
            v1::LeaseTrialResponse::LEASED);
  v1::LeasingRequest long_reason = pause;
  long_reason.set_reason(std::string(201, 'x'));
  EXPECT_EQ(core_->sweeps()
                .Leasing(long_reason, storage::Actor{"root", true})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// Watchers share one view of the sweep (Progress with a reuse window): a
// call inside the window may get the view from before a report, but the
// next round after it starts early enough to bring that report, with the
// trial's latest values; without a window every change is read at once.
TEST_F(CoordinatorTest, WatchersShareAViewAndMissNoReport) {
  SubmitDemo(2);
  const std::string w = Register();
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(w);
  lr.set_worker_key(Key(w));
  auto lease = core_->workers().LeaseTrial(lr);
  ASSERT_TRUE(lease.ok() && lease->outcome() == v1::LeaseTrialResponse::LEASED);
  auto report = [&](int64_t step, double loss) {
    v1::ReportMetricsRequest r;
    r.set_worker_id(w);
    r.set_worker_key(Key(w));
    r.set_trial_id(lease->lease().trial_id());
    r.set_attempt(lease->lease().attempt());
    v1::MetricPoint* p = r.add_points();
    p->set_step(step);
    p->set_name("train_loss");
    p->set_value(loss);
    ASSERT_TRUE(core_->workers().ReportMetrics(r).ok());
  };
  auto latest = [&](const v1::SweepProgress& p) {
    for (const v1::Trial& t : p.updated())
      if (t.trial_id() == lease->lease().trial_id() &&
          t.latest().count("train_loss"))
        return t.latest().at("train_loss");
    return -1.0;
  };
  const absl::Duration reuse = SweepControl::kProgressReuse;
  report(10, 0.9);
  absl::Time a = absl::InfinitePast(), b = absl::InfinitePast();
  auto first = core_->sweeps().Progress("demo", &a, false, reuse);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->updated_size(), 2);
  EXPECT_EQ(latest(*first), 0.9);
  // A second watcher inside the window shares that view.
  clock_.Advance(reuse / 2);
  auto shared = core_->sweeps().Progress("demo", &b, false, reuse);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(latest(*shared), 0.9);
  EXPECT_EQ(a, b);
  // A report inside the window: a shared view may not have it yet...
  report(20, 0.5);
  auto early = core_->sweeps().Progress("demo", &a, false, reuse);
  ASSERT_TRUE(early.ok());
  EXPECT_NE(latest(*early), 0.5);
  // ...but the round after the window does, from where the last one began.
  clock_.Advance(reuse);
  auto next = core_->sweeps().Progress("demo", &a, false, reuse);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(latest(*next), 0.5);
  // Without a window, a change is read at once.
  report(30, 0.25);
  absl::Time c = a;
  auto fresh = core_->sweeps().Progress("demo", &c);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(latest(*fresh), 0.25);
  EXPECT_EQ(fresh->sweep().total_trials(), 2);
  EXPECT_FALSE(fresh->finished());
}

}  // namespace
}  // namespace qkov::core
