// ResultsStore on a real SQLite file: schema and migrations, submitting
// and extending sweeps, whole-trial round trips, the WAL and its
// checkpoints, multi-row inserts and the statement profile.
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
#include "tests/unit/storage/results_store_fixture.h"

namespace qkov::storage {
namespace {

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
  auto added = store_->trials().GetTrial(TrialIdOf(1, 4));
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
  EXPECT_EQ(store_->trials().GetTrial("1-00012000")->config_json,
            "{\"i\":12000}");
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, FullRoundTrip) {
  Submit("s", 2);
  LeaseRecord l = Lease();
  EXPECT_EQ(l.trial_id, "1-00000000");
  EXPECT_EQ(l.attempt, 1);
  EXPECT_EQ(l.sweep_name, "s");
  ASSERT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 1,
                              {{10, "train_loss", 0.5}, {10, "lr_qk", 0.2}},
                              2100)
                  .ok());
  // Re-sending the same batch (lost ack) does not duplicate rows.
  ASSERT_TRUE(
      store_->results()
          .AddMetrics("w1", l.trial_id, 1, {{10, "train_loss", 0.5}}, 2100)
          .ok());
  Completion c = Done(l, {{"accuracy", 1.0}, {"loss", 0.01}});
  c.artifacts = {{"dtap", "heatmap", "{\"name\":\"dtap\"}"}};
  c.final_points = {{20, "train_loss", 0.1}};
  c.provenance_json = "{\"code_version\":\"x\"}";
  c.steps = 20;
  ASSERT_TRUE(store_->results().CompleteTrial(c, 2200).ok());
  auto t = store_->trials().GetTrial(l.trial_id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->state, "done");
  EXPECT_EQ(t->results.at("accuracy"), 1.0);
  EXPECT_EQ(t->results.at("loss"), 0.01);
  ASSERT_EQ(t->attempt_history.size(), 1u);
  EXPECT_EQ(t->attempt_history[0].state, "done");
  EXPECT_EQ(t->attempt_history[0].provenance_json, "{\"code_version\":\"x\"}");
  ASSERT_EQ(t->artifacts.size(), 1u);
  auto m = store_->trials().Metrics(l.trial_id);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 3u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 3);
  EXPECT_TRUE(*store_->IntegrityOk());
}

// The WAL is checkpointed into the database file as the store writes (on the
// store's checkpoint thread). A store whose writer kept a half-read statement
// open, or that never checkpointed, would grow its WAL without bound under
// a steady writer.
//
// Each wait runs with no read under way: a PASSIVE checkpoint copies no
// further than the mark of a read that is starting beside it (SQLite's read
// marks), and leaves the rest to the checkpoint after the next commit.
TEST_F(ResultsStoreTest, WalIsCheckpointedIntoTheDatabaseFile) {
  auto db_file_size = [this] {
    struct stat st;
    return stat(path_.c_str(), &st) == 0 ? st.st_size : 0;
  };
  // A sweep of ~6 MB: past the 1000-page checkpoint.
  auto submit = [this](const std::string& name) {
    SweepRecord sweep;
    sweep.name = name;
    sweep.spec_json = "{}";
    std::vector<NewTrial> trials;
    for (int i = 0; i < 3000; ++i) {
      trials.push_back(NewTrial{std::string(2000, 'c') + std::to_string(i),
                                absl::StrCat(name, i), "FAFO", 1.0, 0.1,
                                static_cast<uint64_t>(i), "", ""});
    }
    return store_->sweeps().SubmitSweep(sweep, trials, 1000).ok();
  };
  // The checkpoint runs on the store's own thread: wait for it (up to a
  // generous deadline), then look for its effect, the pages in the file.
  auto wait_for_checkpoints = [this](int64_t n) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (store_->GetWriteStats().checkpoints < n &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return store_->GetWriteStats().checkpoints;
  };
  ASSERT_TRUE(submit("big"));
  ASSERT_GE(wait_for_checkpoints(1), 1);
  EXPECT_GT(db_file_size(), 3000 * 2000) << "the WAL was never checkpointed";
  // Reads leave statements behind too; the next writes must still be
  // checkpointed, past them.
  ASSERT_TRUE(store_->sweeps().GetSweep("big").ok());
  LeaseRecord l = Lease();
  ASSERT_TRUE(
      store_->results().CompleteTrial(Done(l, {{"accuracy", 1}}), 2100).ok());
  ASSERT_TRUE(submit("bigger"));
  ASSERT_GE(wait_for_checkpoints(2), 2);
  EXPECT_GT(db_file_size(), 2 * 3000 * 2000)
      << "the writes after a read were never checkpointed";
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
                                "FAFO", 1.0, 0.1, static_cast<uint64_t>(i), "",
                                ""});
    }
    ASSERT_TRUE(store_->sweeps().SubmitSweep(sweep, trials, 1000).ok());
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
  ASSERT_TRUE(store_->results().CompleteTrial(Done(l, results), 2100).ok());
  auto t = store_->trials().GetTrial(l.trial_id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->results, results);  // every value to the last bit
  // A second completion of the same attempt (a retry whose reply was lost)
  // is answered OK and changes nothing.
  results["m0"] = 5;
  EXPECT_TRUE(store_->results().CompleteTrial(Done(l, results), 2200).ok());
  EXPECT_EQ(store_->trials().GetTrial(l.trial_id)->results.at("m0"), 1.0 / 3);
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
  ASSERT_TRUE(
      store_->results().AddMetrics("w1", l.trial_id, 1, points, 2100).ok());
  auto curve = store_->trials().Metrics(l.trial_id);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_EQ(curve->size(), 69u);
  for (int i = 0; i < 69; ++i) {
    EXPECT_EQ((*curve)[i].step, i);
    EXPECT_EQ((*curve)[i].value, i == 5 ? 42 : 1.0 / (i + 3));
  }
  // The same points again, as a retried report: no duplicate rows.
  ASSERT_TRUE(
      store_->results().AddMetrics("w1", l.trial_id, 1, points, 2200).ok());
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
    ASSERT_TRUE(
        store_->results().CompleteTrial(Done(l, {{"accuracy", 1}}), 2100).ok());
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
  ASSERT_TRUE(store_->CoreForTesting()
                  .WriteForTesting([](Database* db) {
                    return db->Execute(
                        "UPDATE trials SET state = 'stopped_early';"
                        "UPDATE attempts SET state = 'stopped_early'");
                  })
                  .ok());
  EXPECT_FALSE(store_->CoreForTesting()
                   .WriteForTesting([](Database* db) {
                     return db->Execute("UPDATE trials SET state = 'bogus'");
                   })
                   .ok());
  EXPECT_EQ(store_->sweeps().GetSweep("old")->counts,
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
  EXPECT_EQ(store_->sweeps().GetSweep("old")->counts,
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
      store_->sweeps()
          .SubmitSweep(
              old, {NewTrial{"{\"seed\":8}", "h8", "FAFO", 1, 0.1, 8, "", ""}},
              3000)
          .ok());
  EXPECT_EQ(Lease(3000).trial_id, "1-00000001");
}

}  // namespace
}  // namespace qkov::storage
