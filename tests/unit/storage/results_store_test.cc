// ResultsStore on a real SQLite file in a temporary directory.
#include "storage/results_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
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
      trials.push_back(NewTrial{"{\"i\":" + std::to_string(i) + "}",
                                "hash" + std::to_string(i), "FAFO", 1.0, 0.1,
                                static_cast<uint64_t>(i), ""});
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

  // Leases n trials at once (w1, at 2000 ms, expiring at 3000 ms).
  std::vector<LeaseRecord> LeaseN(int n) {
    std::vector<LeaseRecord> leases;
    auto a = store_->LeaseBatch("w1", 2000, 1000, n, &leases);
    EXPECT_TRUE(a.ok() && *a == LeaseAvailability::kLeased) << a.status();
    EXPECT_EQ(leases.size(), static_cast<size_t>(n));
    return leases;
  }

  static Completion Done(const LeaseRecord& l,
                         std::map<std::string, double> results) {
    Completion c;
    c.worker_id = "w1";
    c.trial_id = l.trial_id;
    c.attempt = l.attempt;
    c.results = std::move(results);
    c.provenance_json = "{}";
    return c;
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
  // Added points are numbered after the sweep's existing ones.
  auto added = store_->GetTrial(TrialIdOf(1, 4));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->ordinal, 4);
  EXPECT_EQ(added->config_json, "{\"i\":4}");
}

// Ids are "<sweep_id>-<ordinal, 8 digits>": unique across sweeps, and in
// grid order within a sweep when sorted as text (what keeps each trial's
// rows beside its neighbours' in the trial_id-keyed tables).
TEST_F(ResultsStoreTest, TrialIdsSortInGridOrderWithinEachSweep) {
  Submit("a", 12);
  Submit("b", 3);
  EXPECT_EQ(TrialIdOf(1, 0), "1-00000000");
  EXPECT_EQ(TrialIdOf(2, 11), "2-00000011");
  EXPECT_EQ(TrialIdOf(3, 123456789), "3-123456789");  // past 8 digits: unique
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE trial_id = "
                  "printf('%d-%08d', sweep_id, ordinal)"),
            15);
  // Pairs of one sweep whose text order is not their grid order: none.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials a JOIN trials b USING "
                  "(sweep_id) WHERE a.trial_id < b.trial_id AND "
                  "a.ordinal > b.ordinal"),
            0);
}

TEST_F(ResultsStoreTest, LargeGridSubmitsAndExtends) {
  // Past 10,000 trials the submit runs with a larger page cache.
  EXPECT_EQ(Submit("big", 12000).added, 12000);
  SubmitOutcome again = Submit("big", 12001);
  EXPECT_EQ(again.added, 1);
  EXPECT_EQ(again.existing, 12000);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials"), 12001);
  EXPECT_EQ(Lease().trial_id, "1-00000000");
  EXPECT_EQ(store_->GetTrial("1-00012000")->config_json, "{\"i\":12000}");
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, FullRoundTrip) {
  Submit("s", 2);
  LeaseRecord l = Lease();
  EXPECT_EQ(l.trial_id, "1-00000000");
  EXPECT_EQ(l.attempt, 1);
  EXPECT_EQ(l.sweep_name, "s");
  ASSERT_TRUE(store_
                  ->AddMetrics("w1", l.trial_id, 1,
                               {{10, "train_loss", 0.5}, {10, "lr_qk", 0.2}},
                               2100)
                  .ok());
  // Re-sending the same batch (lost ack) does not duplicate rows.
  ASSERT_TRUE(
      store_->AddMetrics("w1", l.trial_id, 1, {{10, "train_loss", 0.5}}, 2100)
          .ok());
  Completion c = Done(l, {{"accuracy", 1.0}, {"loss", 0.01}});
  c.artifacts = {{"dtap", "heatmap", "{\"name\":\"dtap\"}"}};
  c.final_points = {{20, "train_loss", 0.1}};
  c.provenance_json = "{\"code_version\":\"x\"}";
  c.steps = 20;
  ASSERT_TRUE(store_->CompleteTrial(c, 2200).ok());
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

// The WAL is checkpointed into the database file as the store writes (on the
// store's checkpoint thread). A store whose writer kept a half-read statement
// open, or that never checkpointed, would grow its WAL without bound (found at
// 2 GB after 20 s of benchmark).
TEST_F(ResultsStoreTest, WalIsCheckpointedIntoTheDatabaseFile) {
  SweepRecord sweep;
  sweep.name = "big";
  sweep.spec_json = "{}";
  std::vector<NewTrial> trials;
  for (int i = 0; i < 3000; ++i) {  // ~6 MB: past the 1000-page checkpoint
    trials.push_back(NewTrial{std::string(2000, 'c') + std::to_string(i),
                              absl::StrCat("h", i), "FAFO", 1.0, 0.1,
                              static_cast<uint64_t>(i), ""});
  }
  ASSERT_TRUE(store_->SubmitSweep(sweep, trials, 1000).ok());
  // Reads leave statements behind too; the next write must still checkpoint.
  ASSERT_TRUE(store_->GetSweep("big").ok());
  LeaseRecord l = Lease();
  ASSERT_TRUE(store_->CompleteTrial(Done(l, {{"accuracy", 1}}), 2100).ok());
  // The checkpoint runs on the store's own thread: wait for it (up to a
  // generous deadline), then look for its effect, the pages in the file.
  auto db_file_size = [this] {
    struct stat st;
    return stat(path_.c_str(), &st) == 0 ? st.st_size : 0;
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (store_->GetWriteStats().checkpoints == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(store_->GetWriteStats().checkpoints, 1);
  EXPECT_GT(db_file_size(), 3000 * 2000) << "the WAL was never checkpointed";
}

// The checkpointer runs per checkpoint_pages frames waiting to be copied,
// not at every commit once the WAL is that long.
TEST(CheckpointDueTest, CountsFramesNotYetCopied) {
  EXPECT_FALSE(CheckpointDue(999, 0, 1000));
  EXPECT_TRUE(CheckpointDue(1000, 0, 1000));
  // A long WAL whose frames were copied up to 1,400: 100 new ones wait.
  EXPECT_FALSE(CheckpointDue(1500, 1400, 1000));
  EXPECT_TRUE(CheckpointDue(2400, 1400, 1000));
  // SQLite restarted the WAL after the copy: every frame is new.
  EXPECT_FALSE(CheckpointDue(300, 1400, 1000));
  EXPECT_TRUE(CheckpointDue(1000, 1400, 1000));
}

// A writer that never pauses still gets its WAL rewound: without it the WAL
// holds every page ever written (here 32 MB).
TEST_F(ResultsStoreTest, BusyWriterStillRewindsTheWal) {
  store_.reset();
  Database::Options o;
  o.checkpoint_pages = 100;
  o.rewind_pages = 400;  // 1.6 MB
  o.wal_size_limit_bytes = 1 << 20;
  auto opened = ResultsStore::Open(path_, o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  store_ = std::move(*opened);
  for (int k = 0; k < 20; ++k) {  // 20 x 800 trials x 2 KB = 32 MB
    SweepRecord sweep;
    sweep.name = absl::StrCat("s", k);
    sweep.spec_json = "{}";
    std::vector<NewTrial> trials;
    for (int i = 0; i < 800; ++i) {
      trials.push_back(NewTrial{std::string(2000, 'c'), absl::StrCat("h", i),
                                "FAFO", 1.0, 0.1, static_cast<uint64_t>(i),
                                ""});
    }
    ASSERT_TRUE(store_->SubmitSweep(sweep, trials, 1000).ok());
  }
  struct stat wal;
  ASSERT_EQ(stat((path_ + "-wal").c_str(), &wal), 0);
  EXPECT_LT(wal.st_size, 12 << 20);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials"), 20 * 800);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, ManyResultsSpanSeveralInsertStatements) {
  Submit("s", 1);
  LeaseRecord l = Lease();
  std::map<std::string, double> results;
  for (int i = 0; i < 70; ++i) {  // 32 + 32 + 6 rows per statement
    results[absl::StrCat("m", i)] = 1.0 / (i + 3);
  }
  ASSERT_TRUE(store_->CompleteTrial(Done(l, results), 2100).ok());
  auto t = store_->GetTrial(l.trial_id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->results, results);  // every value to the last bit
  // A second completion of the same attempt (a retry whose reply was lost)
  // is answered OK and changes nothing.
  results["m0"] = 5;
  EXPECT_TRUE(store_->CompleteTrial(Done(l, results), 2200).ok());
  EXPECT_EQ(store_->GetTrial(l.trial_id)->results.at("m0"), 1.0 / 3);
}

// Points go in statements of up to 32 rows; a point sent twice in one report
// keeps its last value, as when it is sent in two reports.
TEST_F(ResultsStoreTest, ManyMetricPointsSpanSeveralInsertStatements) {
  Submit("s", 1);
  LeaseRecord l = Lease();
  std::vector<MetricRecord> points;
  for (int i = 0; i < 69; ++i)
    points.push_back({i, "train_loss", 1.0 / (i + 3)});
  points.push_back({5, "train_loss", 42});  // 70 rows: 32 + 32 + 6
  ASSERT_TRUE(store_->AddMetrics("w1", l.trial_id, 1, points, 2100).ok());
  auto curve = store_->Metrics(l.trial_id);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_EQ(curve->size(), 69u);
  for (int i = 0; i < 69; ++i) {
    EXPECT_EQ((*curve)[i].step, i);
    EXPECT_EQ((*curve)[i].value, i == 5 ? 42 : 1.0 / (i + 3));
  }
  // The same points again, as a retried report: no duplicate rows.
  ASSERT_TRUE(store_->AddMetrics("w1", l.trial_id, 1, points, 2200).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 69);
}

// With profiling on, the writer counts each statement's runs and time; off
// (the default), it records nothing. SQLite's clock for these times ticks in
// milliseconds, so a fast statement reads 0 and only sums over many runs
// mean something; a statement of ~100 ms must read as such.
TEST_F(ResultsStoreTest, StatementProfileCountsRunsPerStatement) {
  Submit("s", 3);
  EXPECT_TRUE(store_->WriterStatementProfile().empty());
  store_.reset();
  Database::Options o;
  o.profile_statements = true;
  auto opened = ResultsStore::Open(path_, o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  store_ = std::move(*opened);
  for (int i = 0; i < 2; ++i) {
    LeaseRecord l = Lease();
    ASSERT_TRUE(store_->CompleteTrial(Done(l, {{"accuracy", 1}}), 2100).ok());
  }
  std::map<std::string, int64_t> runs;
  for (const Database::StatementTime& t : store_->WriterStatementProfile())
    runs[t.sql.substr(0, 30)] += t.runs;
  EXPECT_EQ(runs["INSERT INTO results (trial_id,"], 2);
  EXPECT_EQ(runs["INSERT INTO attempts (trial_id"], 2);
  EXPECT_EQ(runs["COMMIT"], 4);  // two leases, two completions

  auto db = Database::Open(path_, o);
  ASSERT_TRUE(db.ok()) << db.status();
  const std::string slow =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE "
      "x < 500000) SELECT count(*) FROM c";
  ASSERT_TRUE((*db)->Execute(slow).ok());
  const auto profile = (*db)->StatementProfile();
  ASSERT_FALSE(profile.empty());
  EXPECT_EQ(profile[0].sql, slow);  // most time first
  EXPECT_EQ(profile[0].runs, 1);
  EXPECT_GE(profile[0].nanos, 10'000'000);
}

TEST_F(ResultsStoreTest, SupersededOrExpiredAttemptWritesNothing) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);  // expires at 3000
  EXPECT_EQ(*store_->ExpireLeases(3001), 1);
  LeaseRecord l2 = Lease(3002);
  EXPECT_EQ(l2.trial_id, l.trial_id);
  EXPECT_EQ(l2.attempt, 2);
  auto s =
      store_->AddMetrics("w1", l.trial_id, 1, {{5, "train_loss", 1}}, 3003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("superseded"), std::string::npos);
  Completion c = Done(l, {{"accuracy", 1}});
  c.final_points = {{5, "x", 1}};
  s = store_->CompleteTrial(c, 3003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  // The live attempt past its expiry is refused too.
  s = store_->AddMetrics("w1", l.trial_id, 2, {{5, "train_loss", 1}}, 4003);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("expired"), std::string::npos);
}

TEST_F(ResultsStoreTest, HeartbeatRenewsLease) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  int64_t expires = 0;
  EXPECT_TRUE(
      *store_->Heartbeat("w1", l.trial_id, 1, 50, 2900, 1000, &expires));
  EXPECT_EQ(expires, 3900);
  EXPECT_EQ(*store_->ExpireLeases(3500), 0);
  EXPECT_TRUE(
      store_->AddMetrics("w1", l.trial_id, 1, {{60, "a", 1}}, 3800).ok());
  EXPECT_FALSE(
      *store_->Heartbeat("w1", l.trial_id, 7, 50, 3800, 1000, &expires));
}

TEST_F(ResultsStoreTest, FailuresSpendBudgetPreemptionDoesNot) {
  Submit("s", 2, /*max_attempts=*/2);
  LeaseRecord l = Lease();
  EXPECT_EQ(*store_->FailTrial("w1", l.trial_id, 1, "oom", false, "", 0, 2100),
            "queued");
  l = Lease(2200);
  EXPECT_EQ(l.attempt, 2);
  EXPECT_EQ(*store_->FailTrial("w1", l.trial_id, 2, "worker stopped", true,
                               "ckpt-bytes", 30, 2300),
            "queued");
  // Preempted trial goes first and carries its checkpoint.
  l = Lease(2400);
  EXPECT_EQ(l.trial_id, "1-00000000");
  EXPECT_EQ(l.checkpoint, "ckpt-bytes");
  EXPECT_EQ(l.checkpoint_step, 30);
  EXPECT_EQ(
      *store_->FailTrial("w1", l.trial_id, 3, "oom again", false, "", 0, 2500),
      "failed");
  auto t = store_->GetTrial("1-00000000");
  EXPECT_EQ(t->state, "failed");
  EXPECT_EQ(t->failures, 2);
  EXPECT_EQ(t->attempt_history[0].error, "oom");
  EXPECT_EQ(t->attempt_history[1].state, "preempted");
}

TEST_F(ResultsStoreTest, CurveSpansResumedAttemptsButNotRestarts) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  ASSERT_TRUE(store_
                  ->AddMetrics("w1", l.trial_id, 1,
                               {{10, "loss", 1.0}, {20, "loss", 0.9}}, 2001)
                  .ok());
  // Attempt 1 hands back at step 25 (points up to 20 were sent).
  ASSERT_TRUE(
      store_->FailTrial("w1", l.trial_id, 1, "sigterm", true, "ckpt", 25, 2002)
          .ok());
  l = Lease(2003);
  EXPECT_EQ(l.checkpoint_step, 25);
  ASSERT_TRUE(
      store_->AddMetrics("w1", l.trial_id, 2, {{30, "loss", 0.8}}, 2004).ok());
  auto m = *store_->Metrics(l.trial_id);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].step, 10);
  EXPECT_EQ(m[2].step, 30);
  // Attempt 2 fails without a checkpoint; attempt 3 restarts from step 0.
  ASSERT_TRUE(
      store_->FailTrial("w1", l.trial_id, 2, "crash", false, "", 0, 2005).ok());
  l = Lease(2006);
  EXPECT_EQ(l.checkpoint_step, 0);
  ASSERT_TRUE(
      store_->AddMetrics("w1", l.trial_id, 3, {{10, "loss", 1.1}}, 2007).ok());
  m = *store_->Metrics(l.trial_id);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].value, 1.1);
}

TEST_F(ResultsStoreTest, CancelStopsQueuedAndRunning) {
  Submit("s", 3);
  LeaseRecord l = Lease();
  EXPECT_EQ(*store_->CancelSweep("s", 2100), 3);
  int64_t expires;
  EXPECT_FALSE(
      *store_->Heartbeat("w1", l.trial_id, 1, 1, 2200, 1000, &expires));
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
  EXPECT_EQ(*store_->FailTrial("w1", l.trial_id, 1, "boom", false, "", 0, 2100),
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
      absl::StatusOr<SweepRecord> r = store_->GetSweep(sweep);
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
  ASSERT_TRUE(
      store_->CompleteTrial(Done(l[0], {{"accuracy", 1}}), t + 10).ok());
  Completion diverged = Done(l[1], {});
  diverged.diverged = true;
  ASSERT_TRUE(store_->CompleteTrial(diverged, t + 11).ok());
  check("completed", 2);
  EXPECT_EQ(
      *store_->FailTrial("w1", l[2].trial_id, 1, "oom", false, "", 0, t + 12),
      "queued");
  EXPECT_EQ(
      *store_->FailTrial("w1", l[3].trial_id, 1, "stop", true, "c", 5, t + 13),
      "queued");
  EXPECT_EQ(*store_->FailTrial("w1", l[4].trial_id, 1, "bad", false, "", 0,
                               t + 14, /*permanent=*/true),
            "failed");
  check("failed and handed back", 3);
  // An expired lease ends its trial when that spends its retry budget.
  const LeaseRecord expiring = Lease(t + 20);
  EXPECT_EQ(*store_->ExpireLeases(t + 20 + 1001), 1);
  const int64_t ended =
      3 + (store_->GetTrial(expiring.trial_id)->state == "failed" ? 1 : 0);
  check("expired", ended);
  EXPECT_EQ(*store_->RetryFailed("s", t + 1100) +
                *store_->RetryFailed("other", t + 1100),
            ended - 2);
  check("retried", ended);
  EXPECT_GT(*store_->CancelSweep("s", t + 1200), 0);
  check("cancelled", ended);
  EXPECT_GT(Submit("s", 7, 2).requeued, 0);
  check("resubmitted", ended);
  // An end older than the window is not counted.
  LeaseRecord old = Lease(t - 700 * 1000);
  ASSERT_TRUE(store_->CompleteTrial(Done(old, {}), t - 700 * 1000 + 1).ok());
  check("ended 11 minutes ago", ended);
}

TEST_F(ResultsStoreTest, NoWorkNowWhileOthersRun) {
  Submit("s", 1);
  Lease();
  LeaseRecord l;
  EXPECT_EQ(*store_->LeaseNext("w2", 2100, 1000, &l),
            LeaseAvailability::kNoWorkNow);
  EXPECT_FALSE(*store_->AllIdle());
}

// Migration 7 widens the CHECK lists of trial and attempt states in place:
// a database of schema 6 with a trial opens, takes stopped_early, still
// refuses a state outside the list, and passes the integrity check.
TEST_F(ResultsStoreTest, MigratesSchema6DatabaseToStoppedEarly) {
  store_.reset();
  std::system(("rm -f " + path_ + "*").c_str());
  {
    auto db = Database::Open(path_, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(db->get(), 6).ok());
    ASSERT_TRUE((*db)
                    ->Execute("INSERT INTO sweeps (name, spec_json, "
                              "max_attempts, created_ms, updated_ms) VALUES "
                              "('old', '{}', 3, 1, 1);"
                              "INSERT INTO trials (trial_id, sweep_id, "
                              "ordinal, config_json, config_hash, "
                              "parameterization, lr_ratio, eta_ov, seed, "
                              "state, created_ms, updated_ms) VALUES ('t0', 1, "
                              "0, '{}', 'h', 'FAFO', 1, 0.1, 7, 'running', 1, "
                              "1);"
                              "INSERT INTO attempts (trial_id, attempt, "
                              "worker_id, state, started_ms) VALUES ('t0', 1, "
                              "'w', 'running', 1)")
                    .ok());
    EXPECT_FALSE((*db)
                     ->Execute("UPDATE trials SET state = 'stopped_early'")
                     .ok());  // schema 6 does not know the state
  }
  auto s = ResultsStore::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status();
  store_ = std::move(*s);
  EXPECT_EQ(Count("PRAGMA user_version"), LatestSchemaVersion());
  ASSERT_TRUE(store_
                  ->WriteForTesting([](Database* db) {
                    return db->Execute(
                        "UPDATE trials SET state = 'stopped_early';"
                        "UPDATE attempts SET state = 'stopped_early'");
                  })
                  .ok());
  EXPECT_FALSE(store_
                   ->WriteForTesting([](Database* db) {
                     return db->Execute("UPDATE trials SET state = 'bogus'");
                   })
                   .ok());
  EXPECT_EQ(store_->GetSweep("old")->counts,
            (std::map<std::string, int64_t>{{"stopped_early", 1}}));
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, MigratesSchema1DatabaseWithItsTrials) {
  store_.reset();
  std::system(("rm -f " + path_ + "*").c_str());
  {
    auto db = Database::Open(path_, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(db->get(), 1).ok());
    ASSERT_TRUE((*db)
                    ->Execute("INSERT INTO sweeps (name, spec_json, "
                              "max_attempts, created_ms, updated_ms) VALUES "
                              "('old', '{}', 3, 1, 1);"
                              "INSERT INTO trials (trial_id, sweep_id, "
                              "ordinal, config_json, config_hash, "
                              "parameterization, lr_ratio, eta_ov, seed, "
                              "state, created_ms, updated_ms) VALUES ('t0', 1, "
                              "0, '{\"seed\":7}', 'h', 'FAFO', 1, 0.1, 7, "
                              "'queued', 1, 1)")
                    .ok());
  }
  auto s = ResultsStore::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status();
  store_ = std::move(*s);
  EXPECT_EQ(Count("PRAGMA user_version"), LatestSchemaVersion());
  // Counts kept by triggers start from the trials already there.
  EXPECT_EQ(store_->GetSweep("old")->counts,
            (std::map<std::string, int64_t>{{"queued", 1}}));
  // The old trial has no binary config: its lease carries the JSON only.
  LeaseRecord l = Lease();
  EXPECT_EQ(l.trial_id, "t0");
  EXPECT_EQ(l.config_json, "{\"seed\":7}");
  EXPECT_TRUE(l.config_pb.empty());
  // Extending the old sweep: new points get ids of today's form beside the
  // old hash-style one.
  SweepRecord old;
  old.name = "old";
  old.spec_json = "{}";
  ASSERT_TRUE(
      store_
          ->SubmitSweep(old,
                        {NewTrial{"{\"seed\":8}", "h8", "FAFO", 1, 0.1, 8, ""}},
                        3000)
          .ok());
  EXPECT_EQ(Lease(3000).trial_id, "1-00000001");
}

TEST_F(ResultsStoreTest, LeaseCarriesTheBinaryConfigSubmitted) {
  SweepRecord sweep;
  sweep.name = "pb";
  sweep.spec_json = "{}";
  sweep.training_pb = std::string("\x2a\x02\x00\xff", 4);
  NewTrial t{"{}", "h0", "FAFO", 1.0, 0.1, 0, ""};
  t.axes_pb = std::string("\x08\x01", 2);
  NewTrial u{"{}", "h1", "FAFO", 1.0, 0.1, 1, ""};
  u.axes_pb = std::string("\x08\x02", 2);
  ASSERT_TRUE(store_->SubmitSweep(sweep, {t, u}, 1000).ok());
  // Bytes kept exactly; the training part stored once for both.
  EXPECT_EQ(Lease().config_pb, t.axes_pb + sweep.training_pb);
  EXPECT_EQ(Lease().config_pb, u.axes_pb + sweep.training_pb);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trainings"), 1);
}

TEST_F(ResultsStoreTest, CompleteAndLeaseCommitsBothOrNeither) {
  Submit("s", 3);
  LeaseRecord first = Lease(2000);
  std::vector<LeaseRecord> next;
  auto a = store_->CompleteAndLease({Done(first, {{"accuracy", 1}})}, "w1",
                                    2100, 1000, 1, &next);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, LeaseAvailability::kLeased);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(next[0].trial_id, first.trial_id);
  EXPECT_EQ(store_->GetTrial(first.trial_id)->state, "done");
  // A refused completion (lease expired at 3100) leases nothing either.
  a = store_->CompleteAndLease({Done(next[0], {{"accuracy", 1}})}, "w1", 3200,
                               1000, 1, &next);
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
  auto a = store_->CompleteAndLease(
      {Done(batch[0], {{"accuracy", 1}}), Done(batch[1], {{"accuracy", 1}}),
       Done(stale, {{"accuracy", 1}})},
      "w1", 2100, 1000, 3, &next);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(a.status().message().find(batch[2].trial_id), std::string::npos);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running'"), 3);
  // The whole batch, then the next batch of 3, in one write.
  a = store_->CompleteAndLease(
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
  a = store_->CompleteAndLease(last, "w1", 2200, 1000, 0, &next);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(next.empty());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'done'"), 6);
}

// Holds the writer thread before its next group until `n` writes are
// queued, so that they commit as one group.
void GroupNextWrites(ResultsStore* store, size_t n) {
  auto armed = std::make_shared<std::atomic<bool>>(true);
  store->SetBeforeGroupHookForTesting([store, n, armed] {
    if (!armed->exchange(false)) return;
    while (store->QueuedWritesForTesting() < n) std::this_thread::yield();
  });
}

// Starts a thread per lease in `leases`, each reporting train_loss 0.5 + i
// at step 1 for lease i; its outcome goes to (*status)[i].
void ReportOnThreads(ResultsStore* store,
                     const std::vector<LeaseRecord>& leases,
                     std::vector<absl::Status>* status,
                     std::vector<std::thread>* threads) {
  for (size_t i = 0; i < leases.size(); ++i) {
    threads->emplace_back([store, &leases, status, i] {
      (*status)[i] =
          store->AddMetrics("w1", leases[i].trial_id, leases[i].attempt,
                            {{1, "train_loss", 0.5 + i}}, 2100);
    });
  }
}

// A write that inserts a row (worker 'ghost') and then fails.
absl::Status FailAfterWriting(ResultsStore* store) {
  return store->WriteForTesting([](Database* db) {
    absl::Status s = db->Execute(
        "INSERT INTO workers VALUES ('ghost', 'g', 1, '{}', 1, 1, '', '')");
    return s.ok() ? absl::InternalError("fails after writing") : s;
  });
}

TEST_F(ResultsStoreTest, GroupCommitIsolatesAFailingWrite) {
  Submit("s", 4);
  std::vector<LeaseRecord> leases = LeaseN(4);
  ASSERT_EQ(leases.size(), 4u);
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  GroupNextWrites(store_.get(), 6);
  std::vector<absl::Status> status(6);
  std::vector<std::thread> threads;
  ReportOnThreads(store_.get(), leases, &status, &threads);
  // A superseded attempt: refused before it writes.
  threads.emplace_back([&] {
    status[4] = store_->AddMetrics("w1", leases[0].trial_id, 7,
                                   {{1, "train_loss", 9}}, 2100);
  });
  // A write that fails after writing: undone alone.
  threads.emplace_back([&] { status[5] = FailAfterWriting(store_.get()); });
  for (auto& t : threads) t.join();
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  EXPECT_EQ(after.writes - before.writes, 6);
  EXPECT_EQ(after.commits - before.commits, 1);  // one transaction for all
  // The write that failed after writing made the group run again, a
  // savepoint per write.
  EXPECT_EQ(after.replays - before.replays, 1);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(status[i].ok()) << status[i];
  EXPECT_EQ(status[4].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status[5].message(), "fails after writing");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 4);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics WHERE value = 9"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 0);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, LoneWriteThatFailsAfterWritingStoresNothing) {
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  EXPECT_EQ(FailAfterWriting(store_.get()).message(), "fails after writing");
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  EXPECT_EQ(after.commits - before.commits, 0);
  EXPECT_EQ(after.replays - before.replays, 0);  // nothing else to keep
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 0);
  // The store goes on: the same row can be written by a write that succeeds.
  EXPECT_TRUE(store_->RegisterWorker("ghost", "g", 1, "{}", {"", ""}, 1).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 1);
}

TEST_F(ResultsStoreTest, GroupCommitRefusalBeforeWritingNeedsNoReplay) {
  Submit("s", 2);
  std::vector<LeaseRecord> leases = LeaseN(2);
  ASSERT_EQ(leases.size(), 2u);
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  GroupNextWrites(store_.get(), 3);
  std::vector<absl::Status> status(3);
  std::vector<std::thread> threads;
  ReportOnThreads(store_.get(), leases, &status, &threads);
  threads.emplace_back([&] {  // a superseded attempt
    status[2] = store_->AddMetrics("w1", leases[1].trial_id, 9,
                                   {{2, "train_loss", 9}}, 2100);
  });
  for (auto& t : threads) t.join();
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  EXPECT_TRUE(status[0].ok()) << status[0];
  EXPECT_TRUE(status[1].ok()) << status[1];
  EXPECT_EQ(status[2].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(after.commits - before.commits, 1);
  EXPECT_EQ(after.replays - before.replays, 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics WHERE value = 9"), 0);
}

// The replay runs the group's other writes again on the rolled-back
// database: each must be stored once, with the outputs its caller saw.
TEST_F(ResultsStoreTest, GroupCommitReplayStoresEveryOtherWriteOnce) {
  Submit("s", 4);
  std::vector<LeaseRecord> leases = LeaseN(2);
  ASSERT_EQ(leases.size(), 2u);
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  GroupNextWrites(store_.get(), 3);
  std::vector<absl::Status> status(3);
  absl::StatusOr<LeaseAvailability> next_availability;
  std::vector<LeaseRecord> next;
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    next_availability = store_->CompleteAndLease(
        {Done(leases[0], {{"accuracy", 0.75}})}, "w1", 2100, 1000, 1, &next);
    status[0] = next_availability.status();
  });
  threads.emplace_back([&] {
    status[1] = store_->AddMetrics("w1", leases[1].trial_id, leases[1].attempt,
                                   {{1, "train_loss", 0.25}}, 2100);
  });
  threads.emplace_back([&] { status[2] = FailAfterWriting(store_.get()); });
  for (auto& t : threads) t.join();
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  ASSERT_TRUE(status[0].ok()) << status[0];
  ASSERT_TRUE(status[1].ok()) << status[1];
  EXPECT_EQ(status[2].message(), "fails after writing");
  EXPECT_EQ(after.replays - before.replays, 1);
  EXPECT_EQ(after.commits - before.commits, 1);
  ASSERT_EQ(*next_availability, LeaseAvailability::kLeased);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].attempt, 1);
  // The lease the caller got is the one stored, once.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running'"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running' AND "
                  "attempts = 1 AND trial_id = '" +
                  next[0].trial_id + "'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts WHERE trial_id = '" +
                  next[0].trial_id + "'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE value = 0.75"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics WHERE value = 0.25"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 0);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, GroupCommitLostTransactionFailsEveryWriteOfIt) {
  Submit("s", 2);
  std::vector<LeaseRecord> leases = LeaseN(2);
  ASSERT_EQ(leases.size(), 2u);
  GroupNextWrites(store_.get(), 3);
  std::vector<absl::Status> status(3);
  std::vector<std::thread> threads;
  ReportOnThreads(store_.get(), leases, &status, &threads);
  // Ends the group's transaction, as SQLite does on a full disk.
  threads.emplace_back([&] {
    status[2] = store_->WriteForTesting(
        [](Database* db) { return db->Execute("ROLLBACK"); });
  });
  for (auto& t : threads) t.join();
  for (const absl::Status& s : status) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("nothing stored"), std::string::npos) << s;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  // The store goes on working after the lost group.
  EXPECT_TRUE(store_
                  ->AddMetrics("w1", leases[0].trial_id, leases[0].attempt,
                               {{2, "train_loss", 0.5}}, 2200)
                  .ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 1);
}

}  // namespace
}  // namespace qkov::storage

namespace qkov::storage {
namespace {

TEST_F(ResultsStoreTest, ALeaseBelongsToTheWorkerItWasGrantedTo) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);  // granted to w1
  int64_t expires = 0;
  auto hb =
      store_->Heartbeat("w2", l.trial_id, l.attempt, 5, 2100, 1000, &expires);
  EXPECT_EQ(hb.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(
      store_->AddMetrics("w2", l.trial_id, l.attempt, {{5, "loss", 1}}, 2100)
          .code(),
      absl::StatusCode::kPermissionDenied);
  Completion forged = Done(l, {{"accuracy", 0}});
  forged.worker_id = "w2";
  absl::Status s = store_->CompleteTrial(forged, 2100);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("leased to another worker"), std::string::npos)
      << s;
  EXPECT_EQ(
      store_->FailTrial("w2", l.trial_id, l.attempt, "x", false, "", 0, 2100)
          .status()
          .code(),
      absl::StatusCode::kPermissionDenied);
  // Nothing of theirs was stored; the holder's reports go through.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 0);
  EXPECT_EQ(store_->GetTrial(l.trial_id)->state, "running");
  ASSERT_TRUE(store_->CompleteTrial(Done(l, {{"accuracy", 1}}), 2200).ok());
  EXPECT_EQ(store_->GetTrial(l.trial_id)->results["accuracy"], 1);
}

TEST_F(ResultsStoreTest, OnlyTheOwnerOrAnAdminChangesASweep) {
  SweepRecord sweep;
  sweep.name = "mine";
  sweep.spec_json = "{}";
  sweep.max_attempts = 1;
  std::vector<NewTrial> trials = {
      NewTrial{"{}", "h0", "FAFO", 1, 0.1, 0, ""},
      NewTrial{"{\"x\":1}", "h1", "FAFO", 1, 0.1, 1, ""}};
  const Actor alice{"alice", false}, bob{"bob", false}, root{"root", true};
  auto out = store_->SubmitSweep(sweep, {trials[0]}, 1000, alice);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->sweep.owner, "alice");
  LeaseRecord l = Lease(2000);
  ASSERT_TRUE(
      store_->FailTrial("w1", l.trial_id, 1, "boom", false, "", 0, 2100).ok());

  auto cancel = store_->CancelSweep("mine", 2200, bob);
  EXPECT_EQ(cancel.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(cancel.status().message().find("belongs to alice"),
            std::string::npos)
      << cancel.status();
  EXPECT_EQ(store_->SetPaused("mine", true, 2200, bob).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->RetryFailed("mine", 2200, bob).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->SubmitSweep(sweep, trials, 2200, bob).status().code(),
            absl::StatusCode::kPermissionDenied);
  // Nothing changed.
  SweepRecord now = *store_->GetSweep("mine");
  EXPECT_FALSE(now.cancelled);
  EXPECT_FALSE(now.paused);
  EXPECT_EQ(now.total_trials, 1);
  EXPECT_EQ(store_->GetTrial(l.trial_id)->state, "failed");

  EXPECT_TRUE(store_->SetPaused("mine", true, 2300, alice).ok());
  EXPECT_TRUE(store_->SetPaused("mine", false, 2300, root).ok());
  EXPECT_EQ(*store_->RetryFailed("mine", 2300, root), 1);
  auto extended = store_->SubmitSweep(sweep, trials, 2400, alice);
  ASSERT_TRUE(extended.ok()) << extended.status();
  EXPECT_EQ(extended->added, 1);
  EXPECT_EQ(extended->sweep.owner, "alice");  // an extension keeps the owner
  EXPECT_EQ(*store_->CancelSweep("mine", 2500, root), 2);
  // A sweep without an owner (no tokens, or stored before owners) is
  // anyone's.
  sweep.name = "shared";
  ASSERT_TRUE(store_->SubmitSweep(sweep, {trials[0]}, 2600, Actor{}).ok());
  EXPECT_TRUE(store_->SetPaused("shared", true, 2700, bob).ok());
}

}  // namespace
}  // namespace qkov::storage

namespace qkov::storage {
namespace {

TEST_F(ResultsStoreTest, APermanentFailureEndsTheTrialWithBudgetLeft) {
  Submit("s", 1, /*max_attempts=*/3);
  LeaseRecord l = Lease(2000);
  EXPECT_EQ(*store_->FailTrial("w1", l.trial_id, l.attempt,
                               "out of memory: libtorch: can't allocate", false,
                               "", 0, 2100, /*permanent=*/true),
            "failed");
  TrialRecord t = *store_->GetTrial(l.trial_id);
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
  ASSERT_TRUE(store_->CompleteTrial(Done(l, {{"accuracy", 0.5}}), 2100).ok());
  EXPECT_TRUE(store_->CompleteTrial(Done(l, {{"accuracy", 0.9}}), 2200).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE value = 0.5"), 1);
  EXPECT_EQ(Count("SELECT n FROM sweep_counts WHERE state = 'done'"), 1);
  Completion other = Done(l, {{"accuracy", 0.9}});
  other.worker_id = "w2";
  EXPECT_EQ(store_->CompleteTrial(other, 2300).code(),
            absl::StatusCode::kFailedPrecondition);
  Completion diverged = Done(l, {{"accuracy", 0.9}});
  diverged.diverged = true;  // not how the attempt ended
  EXPECT_EQ(store_->CompleteTrial(diverged, 2300).code(),
            absl::StatusCode::kFailedPrecondition);

  LeaseRecord f = Lease(2400);
  EXPECT_EQ(*store_->FailTrial("w1", f.trial_id, f.attempt, "oom", false, "", 0,
                               2500),
            "queued");
  EXPECT_EQ(*store_->FailTrial("w1", f.trial_id, f.attempt, "oom", false, "", 0,
                               2600),
            "queued");
  EXPECT_EQ(store_->GetTrial(f.trial_id)->failures, 1);
  EXPECT_EQ(
      store_->FailTrial("w2", f.trial_id, f.attempt, "oom", false, "", 0, 2600)
          .status()
          .code(),
      absl::StatusCode::kFailedPrecondition);
  // A hand-back repeated is not a failure.
  EXPECT_EQ(
      store_->FailTrial("w1", f.trial_id, f.attempt, "stop", true, "c", 5, 2600)
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
  ASSERT_EQ(*store_->LeaseBatch("w1", 2500, 1000, 1, &again, nullptr,
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
  ASSERT_EQ(*store_->CompleteAndLease({Done(first, {{"a", 1}})}, "w1", 2600,
                                      1000, 1, &next, nullptr, true),
            LeaseAvailability::kLeased);
  std::vector<LeaseRecord> next_again;
  ASSERT_EQ(*store_->CompleteAndLease({Done(first, {{"a", 1}})}, "w1", 2700,
                                      1000, 1, &next_again, nullptr, true),
            LeaseAvailability::kLeased);
  ASSERT_EQ(next_again.size(), 1u);
  EXPECT_EQ(next_again[0].trial_id, next[0].trial_id);
  EXPECT_EQ(next_again[0].attempt, 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 2);
  // Another worker's lease is never resent; without resend_held a worker
  // gets new work.
  std::vector<LeaseRecord> w2;
  ASSERT_EQ(*store_->LeaseBatch("w2", 2800, 1000, 1, &w2, nullptr, true),
            LeaseAvailability::kLeased);
  EXPECT_NE(w2[0].trial_id, next[0].trial_id);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 3);
  // An expired lease is not resent (the reaper requeues it).
  std::vector<LeaseRecord> late;
  EXPECT_EQ(*store_->LeaseBatch("w2", 9000, 1000, 1, &late, nullptr, true),
            LeaseAvailability::kLeased);
  EXPECT_EQ(late[0].attempt, 2);
}

// After a restart every running lease gets a lease period from the restart;
// none is shortened.
TEST_F(ResultsStoreTest, ExtendRunningLeasesAfterARestart) {
  Submit("s", 2);
  LeaseRecord l = Lease(2000);   // expires at 3000
  LeaseRecord m = Lease(20000);  // expires at 21000
  EXPECT_EQ(*store_->ExtendRunningLeases(10000), 1);
  EXPECT_EQ(*store_->ExpireLeases(9999), 0);
  EXPECT_TRUE(
      store_->AddMetrics("w1", l.trial_id, 1, {{5, "train_loss", 1}}, 9999)
          .ok());
  EXPECT_EQ(*store_->ExpireLeases(10001), 1);
  EXPECT_EQ(*store_->ExpireLeases(20999), 0);
  EXPECT_EQ(m.expires_ms, 21000);
}

}  // namespace
}  // namespace qkov::storage
