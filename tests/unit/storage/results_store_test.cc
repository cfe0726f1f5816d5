// ResultsStore on a real SQLite file in a temporary directory.
#include "storage/results_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "storage/migrations.h"

namespace qkov::storage {
namespace {

class ResultsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-storage-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/results.db";
    auto s = ResultsStore::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  SubmitOutcome Submit(const std::string& name, int n, int max_attempts = 3,
                       int priority = 0) {
    SweepRecord sweep;
    sweep.name = name;
    sweep.spec_json = "{}";
    sweep.max_attempts = max_attempts;
    sweep.priority = priority;
    std::vector<NewTrial> trials;
    for (int i = 0; i < n; ++i) {
      trials.push_back(NewTrial{name + "-t" + std::to_string(i), i,
                                "{\"i\":" + std::to_string(i) + "}",
                                "hash" + std::to_string(i), "FAFO", 1.0, 0.1,
                                static_cast<uint64_t>(i)});
    }
    auto out = store_->SubmitSweep(sweep, trials, 1000);
    EXPECT_TRUE(out.ok()) << out.status();
    return *out;
  }

  LeaseRecord Lease(int64_t now = 2000) {
    LeaseRecord l;
    auto a = store_->LeaseNext("w1", now, 1000, &l);
    EXPECT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(*a, LeaseAvailability::kLeased);
    return l;
  }

  int64_t Count(const std::string& sql) {
    auto db = Database::Open(path_, {});
    auto st = (*db)->Prepare(sql);
    EXPECT_TRUE(st.ok()) << st.status();
    auto row = (*st)->Step();
    return (*st)->ColumnInt64(0);
  }

  std::string dir_, path_;
  std::unique_ptr<ResultsStore> store_;
};

TEST_F(ResultsStoreTest, MigratesFromEmptyToLatest) {
  auto db = Database::Open(path_, {});
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*SchemaVersion(db->get()), LatestSchemaVersion());
  for (const char* table : {"sweeps", "trials", "attempts", "metrics",
                            "results", "artifacts", "workers"}) {
    EXPECT_EQ(
        Count(std::string("SELECT COUNT(*) FROM sqlite_schema WHERE name = '") +
              table + "'"),
        1)
        << table;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM pragma_journal_mode WHERE journal_mode "
                  "= 'wal'"),
            1);
  // Re-opening is a no-op migration.
  store_.reset();
  ASSERT_TRUE(ResultsStore::Open(path_).ok());
}

TEST_F(ResultsStoreTest, RefusesDatabaseNewerThanBinary) {
  store_.reset();
  {
    auto db = Database::Open(path_, {});
    ASSERT_TRUE((*db)->Execute("PRAGMA user_version = 999").ok());
  }
  auto s = ResultsStore::Open(path_);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("999"), std::string::npos);
}

TEST_F(ResultsStoreTest, NotADatabaseIsDataLossNotCrash) {
  const std::string bad = dir_ + "/garbage.db";
  std::ofstream(bad) << std::string(4096, 'x');
  auto s = ResultsStore::Open(bad);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
}

TEST_F(ResultsStoreTest, SubmitThenExtendAddsOnlyNewPoints) {
  SubmitOutcome a = Submit("s", 4);
  EXPECT_EQ(a.added, 4);
  EXPECT_EQ(a.sweep.total_trials, 4);
  SubmitOutcome b = Submit("s", 6);
  EXPECT_EQ(b.added, 2);
  EXPECT_EQ(b.existing, 4);
  EXPECT_EQ(b.sweep.total_trials, 6);
  EXPECT_EQ(b.sweep.counts["queued"], 6);
}

TEST_F(ResultsStoreTest, FullRoundTrip) {
  Submit("s", 2);
  LeaseRecord l = Lease();
  EXPECT_EQ(l.trial_id, "s-t0");
  EXPECT_EQ(l.attempt, 1);
  EXPECT_EQ(l.sweep_name, "s");
  ASSERT_TRUE(store_
                  ->AddMetrics(l.trial_id, 1,
                               {{10, "train_loss", 0.5}, {10, "lr_qk", 0.2}},
                               2100)
                  .ok());
  // Re-sending the same batch (lost ack) does not duplicate rows.
  ASSERT_TRUE(
      store_->AddMetrics(l.trial_id, 1, {{10, "train_loss", 0.5}}, 2100).ok());
  ASSERT_TRUE(store_
                  ->CompleteTrial(l.trial_id, 1, false,
                                  {{"accuracy", 1.0}, {"loss", 0.01}},
                                  {{"dtap", "heatmap", "{\"name\":\"dtap\"}"}},
                                  {{20, "train_loss", 0.1}},
                                  "{\"code_version\":\"x\"}", 20, 2200)
                  .ok());
  auto t = store_->GetTrial(l.trial_id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->state, "done");
  EXPECT_EQ(t->results.at("accuracy"), 1.0);
  EXPECT_EQ(t->results.at("loss"), 0.01);
  ASSERT_EQ(t->attempt_history.size(), 1u);
  EXPECT_EQ(t->attempt_history[0].state, "done");
  EXPECT_EQ(t->attempt_history[0].provenance_json, "{\"code_version\":\"x\"}");
  ASSERT_EQ(t->artifacts.size(), 1u);
  auto m = store_->Metrics(l.trial_id);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 3u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 3);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, SupersededOrExpiredAttemptWritesNothing) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);  // expires at 3000
  EXPECT_EQ(*store_->ExpireLeases(3001), 1);
  LeaseRecord l2 = Lease(3002);
  EXPECT_EQ(l2.trial_id, l.trial_id);
  EXPECT_EQ(l2.attempt, 2);
  auto s = store_->AddMetrics(l.trial_id, 1, {{5, "train_loss", 1}}, 3003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("superseded"), std::string::npos);
  s = store_->CompleteTrial(l.trial_id, 1, false, {{"accuracy", 1}}, {},
                            {{5, "x", 1}}, "{}", 5, 3003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  // The live attempt past its expiry is refused too.
  s = store_->AddMetrics(l.trial_id, 2, {{5, "train_loss", 1}}, 4003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("expired"), std::string::npos);
}

TEST_F(ResultsStoreTest, HeartbeatRenewsLease) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  int64_t expires = 0;
  EXPECT_TRUE(*store_->Heartbeat(l.trial_id, 1, 50, 2900, 1000, &expires));
  EXPECT_EQ(expires, 3900);
  EXPECT_EQ(*store_->ExpireLeases(3500), 0);
  EXPECT_TRUE(store_->AddMetrics(l.trial_id, 1, {{60, "a", 1}}, 3800).ok());
  EXPECT_FALSE(*store_->Heartbeat(l.trial_id, 7, 50, 3800, 1000, &expires));
}

TEST_F(ResultsStoreTest, FailuresSpendBudgetPreemptionDoesNot) {
  Submit("s", 2, /*max_attempts=*/2);
  LeaseRecord l = Lease();
  EXPECT_EQ(*store_->FailTrial(l.trial_id, 1, "oom", false, "", 0, 2100),
            "queued");
  l = Lease(2200);
  EXPECT_EQ(l.attempt, 2);
  EXPECT_EQ(*store_->FailTrial(l.trial_id, 2, "worker stopped", true,
                               "ckpt-bytes", 30, 2300),
            "queued");
  // Preempted trial goes first and carries its checkpoint.
  l = Lease(2400);
  EXPECT_EQ(l.trial_id, "s-t0");
  EXPECT_EQ(l.checkpoint, "ckpt-bytes");
  EXPECT_EQ(l.checkpoint_step, 30);
  EXPECT_EQ(*store_->FailTrial(l.trial_id, 3, "oom again", false, "", 0, 2500),
            "failed");
  auto t = store_->GetTrial("s-t0");
  EXPECT_EQ(t->state, "failed");
  EXPECT_EQ(t->failures, 2);
  EXPECT_EQ(t->attempt_history[0].error, "oom");
  EXPECT_EQ(t->attempt_history[1].state, "preempted");
}

TEST_F(ResultsStoreTest, CurveSpansResumedAttemptsButNotRestarts) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  ASSERT_TRUE(store_
                  ->AddMetrics(l.trial_id, 1,
                               {{10, "loss", 1.0}, {20, "loss", 0.9}}, 2001)
                  .ok());
  // Attempt 1 hands back at step 25 (points up to 20 were sent).
  ASSERT_TRUE(
      store_->FailTrial(l.trial_id, 1, "sigterm", true, "ckpt", 25, 2002).ok());
  l = Lease(2003);
  EXPECT_EQ(l.checkpoint_step, 25);
  ASSERT_TRUE(
      store_->AddMetrics(l.trial_id, 2, {{30, "loss", 0.8}}, 2004).ok());
  auto m = *store_->Metrics(l.trial_id);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].step, 10);
  EXPECT_EQ(m[2].step, 30);
  // Attempt 2 fails without a checkpoint; attempt 3 restarts from step 0.
  ASSERT_TRUE(
      store_->FailTrial(l.trial_id, 2, "crash", false, "", 0, 2005).ok());
  l = Lease(2006);
  EXPECT_EQ(l.checkpoint_step, 0);
  ASSERT_TRUE(
      store_->AddMetrics(l.trial_id, 3, {{10, "loss", 1.1}}, 2007).ok());
  m = *store_->Metrics(l.trial_id);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].value, 1.1);
}

TEST_F(ResultsStoreTest, CancelStopsQueuedAndRunning) {
  Submit("s", 3);
  LeaseRecord l = Lease();
  EXPECT_EQ(*store_->CancelSweep("s", 2100), 3);
  int64_t expires;
  EXPECT_FALSE(*store_->Heartbeat(l.trial_id, 1, 1, 2200, 1000, &expires));
  LeaseRecord none;
  EXPECT_EQ(*store_->LeaseNext("w1", 2300, 1000, &none),
            LeaseAvailability::kNoWork);
  EXPECT_EQ(store_->CancelSweep("nope", 1).status().code(),
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
  ASSERT_TRUE(store_->SetPaused("a", true, 1500).ok());
  LeaseRecord l;
  EXPECT_EQ(*store_->LeaseNext("w", 2000, 1000, &l),
            LeaseAvailability::kNoWork);
  ASSERT_TRUE(store_->SetPaused("a", false, 2100).ok());
  EXPECT_EQ(*store_->LeaseNext("w", 2200, 1000, &l),
            LeaseAvailability::kLeased);
  EXPECT_EQ(store_->SetPaused("nope", true, 1).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ResultsStoreTest, RetryRequeuesFailedAndResubmitRequeuesCancelled) {
  Submit("a", 2, /*max_attempts=*/1);
  LeaseRecord l = Lease(2000);
  EXPECT_EQ(*store_->FailTrial(l.trial_id, 1, "boom", false, "", 0, 2100),
            "failed");
  EXPECT_EQ(*store_->RetryFailed("a", 2200), 1);
  EXPECT_EQ(store_->GetTrial(l.trial_id)->state, "queued");
  EXPECT_EQ(store_->GetTrial(l.trial_id)->failures, 0);
  EXPECT_EQ(*store_->CancelSweep("a", 2300), 2);
  SubmitOutcome again = Submit("a", 2, 1);
  EXPECT_EQ(again.added, 0);
  EXPECT_EQ(again.requeued, 2);
  EXPECT_FALSE(again.sweep.cancelled);
  EXPECT_EQ(again.sweep.counts["queued"], 2);
}

TEST_F(ResultsStoreTest, NoWorkNowWhileOthersRun) {
  Submit("s", 1);
  Lease();
  LeaseRecord l;
  EXPECT_EQ(*store_->LeaseNext("w2", 2100, 1000, &l),
            LeaseAvailability::kNoWorkNow);
  EXPECT_FALSE(*store_->AllIdle());
}

}  // namespace
}  // namespace qkov::storage
