// ResultsStore on a real SQLite file: leases and their fencing (attempt,
// expiry, worker), retries and budgets, scheduling (priority, fair share,
// pause), counts, batch completion, ownership, repeated calls and resent
// leases.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/migrations.h"
#include "storage/results_store.h"
#include "tests/unit/storage/results_store_fixture.h"

namespace qkov::storage {
namespace {

TEST_F(ResultsStoreTest, SupersededOrExpiredAttemptWritesNothing) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);  // expires at 3000
  EXPECT_EQ(*store_->leases().ExpireLeases(3001), 1);
  LeaseRecord l2 = Lease(3002);
  EXPECT_EQ(l2.trial_id, l.trial_id);
  EXPECT_EQ(l2.attempt, 2);
  auto s = store_->results().AddMetrics("w1", l.trial_id, 1,
                                        {{5, "train_loss", 1}}, 3003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("superseded"), std::string::npos);
  Completion c = Done(l, {{"accuracy", 1}});
  c.final_points = {{5, "x", 1}};
  s = store_->results().CompleteTrial(c, 3003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  // The live attempt past its expiry is refused too.
  s = store_->results().AddMetrics("w1", l.trial_id, 2, {{5, "train_loss", 1}},
                                   4003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("expired"), std::string::npos);
}

TEST_F(ResultsStoreTest, HeartbeatRenewsLease) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  int64_t expires = 0;
  EXPECT_TRUE(*store_->leases().Heartbeat("w1", l.trial_id, 1, 50, 2900, 1000,
                                          &expires));
  EXPECT_EQ(expires, 3900);
  EXPECT_EQ(*store_->leases().ExpireLeases(3500), 0);
  EXPECT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 1, {{60, "a", 1}}, 3800)
                  .ok());
  EXPECT_FALSE(*store_->leases().Heartbeat("w1", l.trial_id, 7, 50, 3800, 1000,
                                           &expires));
}

TEST_F(ResultsStoreTest, FailuresSpendBudgetPreemptionDoesNot) {
  Submit("s", 2, /*max_attempts=*/2);
  LeaseRecord l = Lease();
  EXPECT_EQ(*store_->leases().FailTrial("w1", l.trial_id, 1, "oom", false, "",
                                        0, 2100),
            "queued");
  l = Lease(2200);
  EXPECT_EQ(l.attempt, 2);
  EXPECT_EQ(*store_->leases().FailTrial("w1", l.trial_id, 2, "worker stopped",
                                        true, "ckpt-bytes", 30, 2300),
            "queued");
  // Preempted trial goes first and carries its checkpoint.
  l = Lease(2400);
  EXPECT_EQ(l.trial_id, "1-00000000");
  EXPECT_EQ(l.checkpoint, "ckpt-bytes");
  EXPECT_EQ(l.checkpoint_step, 30);
  EXPECT_EQ(*store_->leases().FailTrial("w1", l.trial_id, 3, "oom again", false,
                                        "", 0, 2500),
            "failed");
  auto t = store_->trials().GetTrial("1-00000000");
  EXPECT_EQ(t->state, "failed");
  EXPECT_EQ(t->failures, 2);
  EXPECT_EQ(t->attempt_history[0].error, "oom");
  EXPECT_EQ(t->attempt_history[1].state, "preempted");
}

TEST_F(ResultsStoreTest, CurveSpansResumedAttemptsButNotRestarts) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  ASSERT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 1,
                              {{10, "loss", 1.0}, {20, "loss", 0.9}}, 2001)
                  .ok());
  // Attempt 1 hands back at step 25 (points up to 20 were sent).
  ASSERT_TRUE(
      store_->leases()
          .FailTrial("w1", l.trial_id, 1, "sigterm", true, "ckpt", 25, 2002)
          .ok());
  l = Lease(2003);
  EXPECT_EQ(l.checkpoint_step, 25);
  ASSERT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 2, {{30, "loss", 0.8}}, 2004)
                  .ok());
  auto m = *store_->trials().Metrics(l.trial_id);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].step, 10);
  EXPECT_EQ(m[2].step, 30);
  // Attempt 2 fails without a checkpoint; attempt 3 restarts from step 0.
  ASSERT_TRUE(store_->leases()
                  .FailTrial("w1", l.trial_id, 2, "crash", false, "", 0, 2005)
                  .ok());
  l = Lease(2006);
  EXPECT_EQ(l.checkpoint_step, 0);
  ASSERT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 3, {{10, "loss", 1.1}}, 2007)
                  .ok());
  m = *store_->trials().Metrics(l.trial_id);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].value, 1.1);
}

TEST_F(ResultsStoreTest, CancelStopsQueuedAndRunning) {
  Submit("s", 3);
  LeaseRecord l = Lease();
  EXPECT_EQ(*store_->sweeps().CancelSweep("s", 2100), 3);
  int64_t expires;
  EXPECT_FALSE(*store_->leases().Heartbeat("w1", l.trial_id, 1, 1, 2200, 1000,
                                           &expires));
  LeaseRecord none;
  EXPECT_EQ(*store_->leases().LeaseNext("w1", 2300, 1000, &none),
            LeaseAvailability::kNoWork);
  EXPECT_EQ(store_->sweeps().CancelSweep("nope", 1).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ResultsStoreTest, PriorityThenFairShareAmongEqualPriorities) {
  Submit("a", 4);
  Submit("b", 4);
  Submit("urgent", 1, 3, /*priority=*/5);
  EXPECT_EQ(Lease(2000).sweep_name, "urgent");
  // a and b alternate: each lease goes to the sweep with fewer running trials.
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) order.push_back(Lease(2001 + i).sweep_name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "a", "b"}));
}

TEST_F(ResultsStoreTest, PausedSweepGetsNoLeases) {
  Submit("a", 2);
  ASSERT_TRUE(store_->sweeps().SetPaused("a", true, 1500).ok());
  LeaseRecord l;
  EXPECT_EQ(*store_->leases().LeaseNext("w", 2000, 1000, &l),
            LeaseAvailability::kNoWork);
  ASSERT_TRUE(store_->sweeps().SetPaused("a", false, 2100).ok());
  EXPECT_EQ(*store_->leases().LeaseNext("w", 2200, 1000, &l),
            LeaseAvailability::kLeased);
  EXPECT_EQ(store_->sweeps().SetPaused("nope", true, 1).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ResultsStoreTest, RetryRequeuesFailedAndResubmitRequeuesCancelled) {
  Submit("a", 2, /*max_attempts=*/1);
  LeaseRecord l = Lease(2000);
  EXPECT_EQ(*store_->leases().FailTrial("w1", l.trial_id, 1, "boom", false, "",
                                        0, 2100),
            "failed");
  EXPECT_EQ(*store_->sweeps().RetryFailed("a", 2200), 1);
  EXPECT_EQ(store_->trials().GetTrial(l.trial_id)->state, "queued");
  EXPECT_EQ(store_->trials().GetTrial(l.trial_id)->failures, 0);
  EXPECT_EQ(*store_->sweeps().CancelSweep("a", 2300), 2);
  SubmitOutcome again = Submit("a", 2, 1);
  EXPECT_EQ(again.added, 0);
  EXPECT_EQ(again.requeued, 2);
  EXPECT_FALSE(again.sweep.cancelled);
  EXPECT_EQ(again.sweep.counts["queued"], 2);
}

// GetSweep reads counts kept by triggers (sweep_counts) and throughput from
// 10-second buckets (sweep_ended): after every kind of state change the
// counts equal counting the trials themselves, and throughput counts each
// trial's ends (done, diverged, failed) in the window.
TEST_F(ResultsStoreTest, CountsAndThroughputFollowEveryStateChange) {
  auto counted = [this](const std::string& sweep) {
    auto db = Database::Open(path_, {});
    auto st = (*db)->Prepare(
        "SELECT t.state, COUNT(*) FROM trials t JOIN sweeps s USING "
        "(sweep_id) WHERE s.name = ? GROUP BY t.state");
    (*st)->BindText(1, sweep);
    std::map<std::string, int64_t> out;
    while (*(*st)->Step()) out[(*st)->ColumnText(0)] = (*st)->ColumnInt64(1);
    return out;
  };
  auto check = [&](const std::string& step, int64_t ended) {
    int64_t ended_seen = 0;
    for (const char* sweep : {"s", "other"}) {
      SCOPED_TRACE(absl::StrCat(step, ", sweep ", sweep));
      absl::StatusOr<SweepRecord> r = store_->sweeps().GetSweep(sweep);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->counts, counted(sweep));
      int64_t total = 0;
      for (const auto& [state, n] : r->counts) total += n;
      EXPECT_EQ(r->total_trials, total);
      ended_seen += r->ended_last_10min;
    }
    EXPECT_EQ(ended_seen, ended) << step;
  };
  // Real times: throughput is read against the real clock.
  const int64_t t = absl::ToUnixMillis(absl::Now());
  Submit("s", 6, /*max_attempts=*/2);
  Submit("other", 2);
  check("submitted", 0);
  std::vector<LeaseRecord> l;
  for (int i = 0; i < 5; ++i) l.push_back(Lease(t + i));
  check("leased", 0);
  ASSERT_TRUE(store_->results()
                  .CompleteTrial(Done(l[0], {{"accuracy", 1}}), t + 10)
                  .ok());
  Completion diverged = Done(l[1], {});
  diverged.diverged = true;
  ASSERT_TRUE(store_->results().CompleteTrial(diverged, t + 11).ok());
  check("completed", 2);
  EXPECT_EQ(*store_->leases().FailTrial("w1", l[2].trial_id, 1, "oom", false,
                                        "", 0, t + 12),
            "queued");
  EXPECT_EQ(*store_->leases().FailTrial("w1", l[3].trial_id, 1, "stop", true,
                                        "c", 5, t + 13),
            "queued");
  EXPECT_EQ(*store_->leases().FailTrial("w1", l[4].trial_id, 1, "bad", false,
                                        "", 0, t + 14, /*permanent=*/true),
            "failed");
  check("failed and handed back", 3);
  // An expired lease ends its trial when that spends its retry budget.
  const LeaseRecord expiring = Lease(t + 20);
  EXPECT_EQ(*store_->leases().ExpireLeases(t + 20 + 1001), 1);
  const int64_t ended =
      3 +
      (store_->trials().GetTrial(expiring.trial_id)->state == "failed" ? 1 : 0);
  check("expired", ended);
  EXPECT_EQ(*store_->sweeps().RetryFailed("s", t + 1100) +
                *store_->sweeps().RetryFailed("other", t + 1100),
            ended - 2);
  check("retried", ended);
  EXPECT_GT(*store_->sweeps().CancelSweep("s", t + 1200), 0);
  check("cancelled", ended);
  EXPECT_GT(Submit("s", 7, 2).requeued, 0);
  check("resubmitted", ended);
  // An end older than the window is not counted.
  LeaseRecord old = Lease(t - 700 * 1000);
  ASSERT_TRUE(
      store_->results().CompleteTrial(Done(old, {}), t - 700 * 1000 + 1).ok());
  check("ended 11 minutes ago", ended);
}

TEST_F(ResultsStoreTest, NoWorkNowWhileOthersRun) {
  Submit("s", 1);
  Lease();
  LeaseRecord l;
  EXPECT_EQ(*store_->leases().LeaseNext("w2", 2100, 1000, &l),
            LeaseAvailability::kNoWorkNow);
  EXPECT_FALSE(*store_->leases().AllIdle());
}

TEST_F(ResultsStoreTest, LeaseCarriesTheBinaryConfigSubmitted) {
  SweepRecord sweep;
  sweep.name = "pb";
  sweep.spec_json = "{}";
  sweep.training_pb = std::string("\x2a\x02\x00\xff", 4);
  NewTrial t{"{}", "h0", "FAFO", 1.0, 0.1, 0, "", ""};
  t.axes_pb = std::string("\x08\x01", 2);
  NewTrial u{"{}", "h1", "FAFO", 1.0, 0.1, 1, "", ""};
  u.axes_pb = std::string("\x08\x02", 2);
  ASSERT_TRUE(store_->sweeps().SubmitSweep(sweep, {t, u}, 1000).ok());
  // Bytes kept exactly; the training part stored once for both.
  EXPECT_EQ(Lease().config_pb, t.axes_pb + sweep.training_pb);
  EXPECT_EQ(Lease().config_pb, u.axes_pb + sweep.training_pb);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trainings"), 1);
}

TEST_F(ResultsStoreTest, CompleteAndLeaseCommitsBothOrNeither) {
  Submit("s", 3);
  LeaseRecord first = Lease(2000);
  std::vector<LeaseRecord> next;
  auto a = store_->results().CompleteAndLease({Done(first, {{"accuracy", 1}})},
                                              "w1", 2100, 1000, 1, &next);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, LeaseAvailability::kLeased);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(next[0].trial_id, first.trial_id);
  EXPECT_EQ(store_->trials().GetTrial(first.trial_id)->state, "done");
  // A refused completion (lease expired at 3100) leases nothing either.
  a = store_->results().CompleteAndLease({Done(next[0], {{"accuracy", 1}})},
                                         "w1", 3200, 1000, 1, &next);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'queued'"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 1);
}

TEST_F(ResultsStoreTest, BatchCompletionIsAllOrNone) {
  Submit("s", 6);
  std::vector<LeaseRecord> batch = LeaseN(3);
  ASSERT_EQ(batch.size(), 3u);
  // One completion of the batch carries a superseded attempt: nothing of the
  // batch is stored and nothing is leased.
  LeaseRecord stale = batch[2];
  stale.attempt = 5;
  std::vector<LeaseRecord> next;
  auto a = store_->results().CompleteAndLease(
      {Done(batch[0], {{"accuracy", 1}}), Done(batch[1], {{"accuracy", 1}}),
       Done(stale, {{"accuracy", 1}})},
      "w1", 2100, 1000, 3, &next);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(a.status().message().find(batch[2].trial_id), std::string::npos);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running'"), 3);
  // The whole batch, then the next batch of 3, in one write.
  a = store_->results().CompleteAndLease(
      {Done(batch[0], {{"accuracy", 1}}), Done(batch[1], {{"accuracy", 1}}),
       Done(batch[2], {{"accuracy", 1}})},
      "w1", 2100, 1000, 3, &next);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, LeaseAvailability::kLeased);
  EXPECT_EQ(next.size(), 3u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'done'"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running'"), 3);
  // max_trials 0: completes without leasing.
  std::vector<Completion> last;
  for (const LeaseRecord& l : next) last.push_back(Done(l, {{"accuracy", 1}}));
  a = store_->results().CompleteAndLease(last, "w1", 2200, 1000, 0, &next);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(next.empty());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'done'"), 6);
}

TEST_F(ResultsStoreTest, ALeaseBelongsToTheWorkerItWasGrantedTo) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);  // granted to w1
  int64_t expires = 0;
  auto hb = store_->leases().Heartbeat("w2", l.trial_id, l.attempt, 5, 2100,
                                       1000, &expires);
  EXPECT_EQ(hb.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->results()
                .AddMetrics("w2", l.trial_id, l.attempt, {{5, "loss", 1}}, 2100)
                .code(),
            absl::StatusCode::kPermissionDenied);
  Completion forged = Done(l, {{"accuracy", 0}});
  forged.worker_id = "w2";
  absl::Status s = store_->results().CompleteTrial(forged, 2100);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("leased to another worker"), std::string::npos)
      << s;
  EXPECT_EQ(store_->leases()
                .FailTrial("w2", l.trial_id, l.attempt, "x", false, "", 0, 2100)
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  // Nothing of theirs was stored; the holder's reports go through.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  EXPECT_EQ(store_->trials().GetTrial(l.trial_id)->state, "running");
  ASSERT_TRUE(
      store_->results().CompleteTrial(Done(l, {{"accuracy", 1}}), 2200).ok());
  EXPECT_EQ(store_->trials().GetTrial(l.trial_id)->results["accuracy"], 1);
}

TEST_F(ResultsStoreTest, OnlyTheOwnerOrAnAdminChangesASweep) {
  SweepRecord sweep;
  sweep.name = "mine";
  sweep.spec_json = "{}";
  sweep.max_attempts = 1;
  std::vector<NewTrial> trials = {
      NewTrial{"{}", "h0", "FAFO", 1, 0.1, 0, "", ""},
      NewTrial{"{\"x\":1}", "h1", "FAFO", 1, 0.1, 1, "", ""}};
  const Actor alice{"alice", false}, bob{"bob", false}, root{"root", true};
  auto out = store_->sweeps().SubmitSweep(sweep, {trials[0]}, 1000, alice);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->sweep.owner, "alice");
  LeaseRecord l = Lease(2000);
  ASSERT_TRUE(store_->leases()
                  .FailTrial("w1", l.trial_id, 1, "boom", false, "", 0, 2100)
                  .ok());

  auto cancel = store_->sweeps().CancelSweep("mine", 2200, bob);
  EXPECT_EQ(cancel.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(cancel.status().message().find("belongs to alice"),
            std::string::npos)
      << cancel.status();
  EXPECT_EQ(store_->sweeps().SetPaused("mine", true, 2200, bob).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->sweeps().RetryFailed("mine", 2200, bob).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(
      store_->sweeps().SubmitSweep(sweep, trials, 2200, bob).status().code(),
      absl::StatusCode::kPermissionDenied);
  // Nothing changed.
  SweepRecord now = *store_->sweeps().GetSweep("mine");
  EXPECT_FALSE(now.cancelled);
  EXPECT_FALSE(now.paused);
  EXPECT_EQ(now.total_trials, 1);
  EXPECT_EQ(store_->trials().GetTrial(l.trial_id)->state, "failed");

  EXPECT_TRUE(store_->sweeps().SetPaused("mine", true, 2300, alice).ok());
  EXPECT_TRUE(store_->sweeps().SetPaused("mine", false, 2300, root).ok());
  EXPECT_EQ(*store_->sweeps().RetryFailed("mine", 2300, root), 1);
  auto extended = store_->sweeps().SubmitSweep(sweep, trials, 2400, alice);
  ASSERT_TRUE(extended.ok()) << extended.status();
  EXPECT_EQ(extended->added, 1);
  EXPECT_EQ(extended->sweep.owner, "alice");  // an extension keeps the owner
  EXPECT_EQ(*store_->sweeps().CancelSweep("mine", 2500, root), 2);
  // A sweep without an owner (no tokens, or stored before owners) is
  // anyone's.
  sweep.name = "shared";
  ASSERT_TRUE(
      store_->sweeps().SubmitSweep(sweep, {trials[0]}, 2600, Actor{}).ok());
  EXPECT_TRUE(store_->sweeps().SetPaused("shared", true, 2700, bob).ok());
}

TEST_F(ResultsStoreTest, APermanentFailureEndsTheTrialWithBudgetLeft) {
  Submit("s", 1, /*max_attempts=*/3);
  LeaseRecord l = Lease(2000);
  EXPECT_EQ(
      *store_->leases().FailTrial("w1", l.trial_id, l.attempt,
                                  "out of memory: libtorch: can't allocate",
                                  false, "", 0, 2100, /*permanent=*/true),
      "failed");
  TrialRecord t = *store_->trials().GetTrial(l.trial_id);
  EXPECT_EQ(t.state, "failed");
  EXPECT_EQ(t.attempts, 1);
  EXPECT_EQ(t.failures, 1);
}

// A call applied whose reply was lost comes again from the same worker: a
// completion or failure of an attempt it already ended is answered as the
// first (OK) and writes nothing; from another worker it is refused.
TEST_F(ResultsStoreTest, ARepeatedCompletionOrFailureWritesNothing) {
  Submit("s", 3);
  LeaseRecord l = Lease(2000);
  ASSERT_TRUE(
      store_->results().CompleteTrial(Done(l, {{"accuracy", 0.5}}), 2100).ok());
  EXPECT_TRUE(
      store_->results().CompleteTrial(Done(l, {{"accuracy", 0.9}}), 2200).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE value = 0.5"), 1);
  EXPECT_EQ(Count("SELECT n FROM sweep_counts WHERE state = 'done'"), 1);
  Completion other = Done(l, {{"accuracy", 0.9}});
  other.worker_id = "w2";
  EXPECT_EQ(store_->results().CompleteTrial(other, 2300).code(),
            absl::StatusCode::kFailedPrecondition);
  Completion diverged = Done(l, {{"accuracy", 0.9}});
  diverged.diverged = true;  // not how the attempt ended
  EXPECT_EQ(store_->results().CompleteTrial(diverged, 2300).code(),
            absl::StatusCode::kFailedPrecondition);

  LeaseRecord f = Lease(2400);
  EXPECT_EQ(*store_->leases().FailTrial("w1", f.trial_id, f.attempt, "oom",
                                        false, "", 0, 2500),
            "queued");
  EXPECT_EQ(*store_->leases().FailTrial("w1", f.trial_id, f.attempt, "oom",
                                        false, "", 0, 2600),
            "queued");
  EXPECT_EQ(store_->trials().GetTrial(f.trial_id)->failures, 1);
  EXPECT_EQ(
      store_->leases()
          .FailTrial("w2", f.trial_id, f.attempt, "oom", false, "", 0, 2600)
          .status()
          .code(),
      absl::StatusCode::kFailedPrecondition);
  // A hand-back repeated is not a failure.
  EXPECT_EQ(
      store_->leases()
          .FailTrial("w1", f.trial_id, f.attempt, "stop", true, "c", 5, 2600)
          .status()
          .code(),
      absl::StatusCode::kFailedPrecondition);
}

// resend_held: leases the worker never heard of (their reply lost) come back
// as the same attempts, renewed, before anything new.
TEST_F(ResultsStoreTest, ResendHeldGivesBackLeasesWhoseReplyWasLost) {
  Submit("s", 3);
  LeaseRecord first = Lease(2000);  // its reply "lost"
  std::vector<LeaseRecord> again;
  ASSERT_EQ(*store_->leases().LeaseBatch("w1", 2500, 1000, 1, &again, nullptr,
                                         /*resend_held=*/true),
            LeaseAvailability::kLeased);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].trial_id, first.trial_id);
  EXPECT_EQ(again[0].attempt, 1);
  EXPECT_EQ(again[0].expires_ms, 3500);
  EXPECT_EQ(again[0].sweep_name, "s");
  EXPECT_EQ(again[0].config_json, first.config_json);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 1);
  EXPECT_EQ(Count("SELECT lease_expires_ms FROM trials WHERE state = "
                  "'running'"),
            3500);
  // The completion applied, its reply (with the next lease) lost, retried.
  std::vector<LeaseRecord> next;
  ASSERT_EQ(
      *store_->results().CompleteAndLease({Done(first, {{"a", 1}})}, "w1", 2600,
                                          1000, 1, &next, nullptr, true),
      LeaseAvailability::kLeased);
  std::vector<LeaseRecord> next_again;
  ASSERT_EQ(
      *store_->results().CompleteAndLease({Done(first, {{"a", 1}})}, "w1", 2700,
                                          1000, 1, &next_again, nullptr, true),
      LeaseAvailability::kLeased);
  ASSERT_EQ(next_again.size(), 1u);
  EXPECT_EQ(next_again[0].trial_id, next[0].trial_id);
  EXPECT_EQ(next_again[0].attempt, 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 2);
  // Another worker's lease is never resent; without resend_held a worker
  // gets new work.
  std::vector<LeaseRecord> w2;
  ASSERT_EQ(
      *store_->leases().LeaseBatch("w2", 2800, 1000, 1, &w2, nullptr, true),
      LeaseAvailability::kLeased);
  EXPECT_NE(w2[0].trial_id, next[0].trial_id);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 3);
  // An expired lease is not resent (the reaper requeues it).
  std::vector<LeaseRecord> late;
  EXPECT_EQ(
      *store_->leases().LeaseBatch("w2", 9000, 1000, 1, &late, nullptr, true),
      LeaseAvailability::kLeased);
  EXPECT_EQ(late[0].attempt, 2);
}

// After a restart every running lease gets a lease period from the restart;
// none is shortened.
TEST_F(ResultsStoreTest, ExtendRunningLeasesAfterARestart) {
  Submit("s", 2);
  LeaseRecord l = Lease(2000);   // expires at 3000
  LeaseRecord m = Lease(20000);  // expires at 21000
  EXPECT_EQ(*store_->leases().ExtendRunningLeases(10000), 1);
  EXPECT_EQ(*store_->leases().ExpireLeases(9999), 0);
  EXPECT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 1, {{5, "train_loss", 1}}, 9999)
                  .ok());
  EXPECT_EQ(*store_->leases().ExpireLeases(10001), 1);
  EXPECT_EQ(*store_->leases().ExpireLeases(20999), 0);
  EXPECT_EQ(m.expires_ms, 21000);
}

}  // namespace
}  // namespace qkov::storage

namespace qkov::storage {
namespace {

// The events a sink hears, as "kind trial attempt state duration_ms".
class EventLog {
 public:
  void Add(const std::vector<TrialEvent>& events) {
    for (const TrialEvent& e : events) {
      lines_.push_back(absl::StrCat(TrialEventName(e.kind), " ", e.trial_id,
                                    " ", e.attempt, " ", e.worker_id, " ",
                                    e.state, " ", e.duration_ms));
    }
  }
  std::vector<std::string> Take() { return std::exchange(lines_, {}); }

 private:
  std::vector<std::string> lines_;
};

TEST_F(ResultsStoreTest, EventsTellWhatCommittedAndNothingElse) {
  EventLog log;
  store_->SetEventSink(
      [&log](const std::vector<TrialEvent>& events) { log.Add(events); });
  Submit("s", 2, /*max_attempts=*/2);
  EXPECT_TRUE(log.Take().empty());  // a submission starts no attempt
  LeaseRecord a = Lease(2000);
  EXPECT_EQ(log.Take(), std::vector<std::string>{"leased " + a.trial_id +
                                                 " 1 w1 running -1"});
  // A re-sent lease (the worker lost the reply) is the same attempt.
  std::vector<LeaseRecord> again;
  ASSERT_TRUE(store_->leases()
                  .LeaseBatch("w1", 2100, 1000, 1, &again, nullptr,
                              /*resend_held=*/true)
                  .ok());
  EXPECT_TRUE(log.Take().empty());
  // Completed: its duration from the lease (2000) to the end (2500).
  ASSERT_TRUE(
      store_->results().CompleteTrial(Done(a, {{"accuracy", 1}}), 2500).ok());
  EXPECT_EQ(log.Take(), std::vector<std::string>{"completed " + a.trial_id +
                                                 " 1 w1 done 500"});
  // The same completion again (a lost reply): nothing written, no event.
  ASSERT_TRUE(
      store_->results().CompleteTrial(Done(a, {{"accuracy", 1}}), 2600).ok());
  EXPECT_TRUE(log.Take().empty());
  // A refused call (not the lease holder): no event.
  LeaseRecord b = Lease(3000);
  log.Take();
  Completion stranger = Done(b, {});
  stranger.worker_id = "w2";
  EXPECT_FALSE(store_->results().CompleteTrial(stranger, 3100).ok());
  EXPECT_TRUE(log.Take().empty());
  // Expired (requeued: a retry), then failed for good on its last attempt.
  ASSERT_EQ(*store_->leases().ExpireLeases(4001), 1);
  EXPECT_EQ(log.Take(), std::vector<std::string>{"expired " + b.trial_id +
                                                 " 1 w1 queued 1001"});
  LeaseRecord b2 = Lease(5000);
  log.Take();
  ASSERT_EQ(*store_->leases().FailTrial("w1", b2.trial_id, 2, "oom", false, "",
                                        0, 5300),
            "failed");
  EXPECT_EQ(log.Take(), std::vector<std::string>{"failed " + b.trial_id +
                                                 " 2 w1 failed 300"});
}

}  // namespace
}  // namespace qkov::storage

namespace qkov::storage {
namespace {

// A sweep with arms (server/core/sweep_arms.h): each trial may carry its
// own training part, stored once per distinct part, and its lease's binary
// config is its axes followed by that part; a trial without one takes the
// sweep's.
TEST_F(ResultsStoreTest, TrialsOfArmsLeaseTheirOwnTrainingPart) {
  SweepRecord sweep;
  sweep.name = "arms";
  sweep.spec_json = "{}";
  sweep.training_pb = "S";
  std::vector<NewTrial> trials = {
      NewTrial{"{\"a\":0}", "h0", "FAFO", 1, 0.1, 0, "axes0", "armA"},
      NewTrial{"{\"a\":1}", "h1", "FAFO", 30, 0.1, 0, "axes1", "armB"},
      NewTrial{"{\"a\":2}", "h2", "FAFO", 1, 0.1, 1, "axes2", "armA"},
      NewTrial{"{\"a\":3}", "h3", "FAFO", 1, 0.1, 2, "axes3", ""}};
  ASSERT_TRUE(store_->sweeps().SubmitSweep(sweep, trials, 1000).ok());
  std::map<std::string, std::string> pb;
  for (const LeaseRecord& l : LeaseN(4)) pb[l.config_json] = l.config_pb;
  EXPECT_EQ(pb["{\"a\":0}"], "axes0armA");
  EXPECT_EQ(pb["{\"a\":1}"], "axes1armB");
  EXPECT_EQ(pb["{\"a\":2}"], "axes2armA");
  EXPECT_EQ(pb["{\"a\":3}"], "axes3S");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trainings"), 3);  // S, armA, armB
}

}  // namespace
}  // namespace qkov::storage
