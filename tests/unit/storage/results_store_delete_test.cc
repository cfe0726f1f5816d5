// SweepQueries::DeleteSweep on a real SQLite file: every row of the sweep
// goes and nothing of another sweep does, live trials refuse it, the owner
// rule holds, the work is split into bounded writes, an interrupted
// deletion refuses other changes and is finished by a second call, and a
// deleted sweep's id (and so its trial ids) never comes back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/unit/storage/results_store_fixture.h"

namespace qkov::storage {
namespace {

class DeleteSweepTest : public ResultsStoreTest {
 protected:
  // Leases every trial of the store's queue and ends each done with
  // `points` curve points, a result and a heatmap.
  void RunAll(int n, int points) {
    for (int i = 0; i < n; ++i) {
      LeaseRecord l = Lease(2000 + i);
      std::vector<MetricRecord> curve;
      for (int s = 0; s < points; ++s)
        curve.push_back({s, "train_loss", 1.0 / (s + 1)});
      ASSERT_TRUE(store_->results()
                      .AddMetrics("w1", l.trial_id, l.attempt, curve, 2000 + i)
                      .ok());
      Completion c = Done(l, {{"accuracy", 0.5}});
      c.artifacts.push_back({"dtap", "heatmap", "{}"});
      ASSERT_TRUE(store_->results().CompleteTrial(c, 2000 + i).ok());
    }
  }

  // Rows of `sweep_id` in every table that holds a sweep's data.
  int64_t RowsOf(int64_t sweep_id) {
    const std::string trials = absl::StrCat(
        "(SELECT trial_id FROM trials WHERE sweep_id = ", sweep_id, ")");
    const std::string prefix = absl::StrCat("'", sweep_id, "-%'");
    int64_t n = Count(absl::StrCat(
        "SELECT COUNT(*) FROM trials WHERE sweep_id = ", sweep_id));
    for (const char* t :
         {"metrics", "metrics_latest", "results", "artifacts", "attempts"}) {
      n += Count(absl::StrCat("SELECT COUNT(*) FROM ", t,
                              " WHERE trial_id LIKE ", prefix));
    }
    for (const char* t :
         {"sweeps", "sweep_counts", "sweep_ended", "searches"}) {
      n += Count(absl::StrCat("SELECT COUNT(*) FROM ", t,
                              " WHERE sweep_id = ", sweep_id));
    }
    return n;
  }
};

TEST_F(DeleteSweepTest, RemovesEveryRowOfTheSweepAndNothingElse) {
  Submit("old", 3);
  RunAll(3, 40);
  Submit("kept", 2);
  RunAll(2, 10);
  const int64_t kept_rows = RowsOf(2);
  ASSERT_GT(RowsOf(1), 3 * 40);

  auto d = store_->sweeps().DeleteSweep("old", 9000);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->trials, 3);
  EXPECT_EQ(d->metric_points, 3 * 40);
  EXPECT_GE(d->bytes_freed, 0);
  EXPECT_EQ(RowsOf(1), 0);
  EXPECT_EQ(RowsOf(2), kept_rows);
  EXPECT_EQ(store_->sweeps().GetSweep("old").status().code(),
            absl::StatusCode::kNotFound);
  auto kept = store_->sweeps().GetSweep("kept");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->counts["done"], 2);
  // The record of the deletion.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM deleted_sweeps WHERE sweep_id = 1 "
                  "AND name = 'old' AND trials = 3 AND metric_points = 120 "
                  "AND ended_ms = 9000"),
            1);
  // The integrity of the file, foreign keys included.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
}

TEST_F(DeleteSweepTest, TheNameComesBackWithANewIdAndNewTrialIds) {
  Submit("a", 2);  // sweep 1: the highest id when it is deleted
  ASSERT_TRUE(store_->sweeps().CancelSweep("a", 3000).ok());
  ASSERT_TRUE(store_->sweeps().DeleteSweep("a", 4000).ok());
  SubmitOutcome again = Submit("a", 2);
  EXPECT_EQ(again.sweep.sweep_id, 2);
  EXPECT_EQ(again.added, 2);
  EXPECT_EQ(again.sweep.counts["queued"], 2);
  EXPECT_TRUE(store_->trials().GetTrial(TrialIdOf(2, 0)).ok());
  EXPECT_EQ(store_->trials().GetTrial(TrialIdOf(1, 0)).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(DeleteSweepTest, LiveTrialsRefuseItUntilTheSweepIsCancelled) {
  Submit("s", 3);
  Lease();  // one running, two queued
  auto d = store_->sweeps().DeleteSweep("s", 5000);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("3 trial(s)"), std::string::npos)
      << d.status();
  EXPECT_NE(d.status().message().find("qkov cancel s"), std::string::npos);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials"), 3);  // nothing touched
  EXPECT_EQ(Count("SELECT COUNT(*) FROM deleted_sweeps"), 0);
  ASSERT_TRUE(store_->sweeps().CancelSweep("s", 6000).ok());
  EXPECT_TRUE(store_->sweeps().DeleteSweep("s", 7000).ok());
}

TEST_F(DeleteSweepTest, OnlyTheOwnerOrAnAdminDeletes) {
  SweepRecord sweep;
  sweep.name = "alices";
  sweep.spec_json = "{}";
  sweep.max_attempts = 1;
  ASSERT_TRUE(store_->sweeps()
                  .SubmitSweep(sweep,
                               {NewTrial{"{}", "h", "FAFO", 1, 0.1, 1, "", ""}},
                               1000, Actor{"alice", false})
                  .ok());
  ASSERT_TRUE(
      store_->sweeps().CancelSweep("alices", 2000, Actor{"alice", false}).ok());
  auto bob = store_->sweeps().DeleteSweep("alices", 3000, Actor{"bob", false});
  EXPECT_EQ(bob.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(bob.status().message().find("may delete it"), std::string::npos);
  EXPECT_TRUE(store_->sweeps().GetSweep("alices").ok());
  EXPECT_TRUE(
      store_->sweeps().DeleteSweep("alices", 4000, Actor{"root", true}).ok());
}

TEST_F(DeleteSweepTest, ALargeSweepGoesInBoundedWrites) {
  // 6 trials of 30,000 points: 180,000 points, at least 4 writes of about
  // kDeletePointsPerWrite (whole trials each), plus the mark and the end.
  Submit("big", 6);
  RunAll(6, 30000);
  const auto before = store_->GetWriteStats();
  auto d = store_->sweeps().DeleteSweep("big", 9000);
  ASSERT_TRUE(d.ok()) << d.status();
  const auto after = store_->GetWriteStats();
  EXPECT_EQ(d->metric_points, 180000);
  EXPECT_GE(after.writes - before.writes,
            180000 / SweepQueries::kDeletePointsPerWrite + 2);
  EXPECT_GT(d->bytes_freed, 180000 * 10) << "pages freed inside the file";
  EXPECT_EQ(RowsOf(1), 0);
}

TEST_F(DeleteSweepTest, AnInterruptedDeletionRefusesChangesAndIsFinished) {
  Submit("s", 4);
  RunAll(2, 20);
  ASSERT_TRUE(store_->sweeps().CancelSweep("s", 5000).ok());
  // What a server stopped after the first writes leaves: the sweep marked,
  // two of its trials gone.
  store_.reset();
  {
    auto db = Database::Open(path_, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        (*db)
            ->Execute("INSERT INTO deleted_sweeps (sweep_id, name, "
                      "owner, actor, trials, metric_points, "
                      "started_ms) VALUES (1, 's', '', '', 4, 20, 6000)")
            .ok());
    for (const char* t : {"metrics", "metrics_latest", "results", "artifacts",
                          "attempts", "trials"}) {
      ASSERT_TRUE(
          (*db)
              ->Execute(absl::StrCat("DELETE FROM ", t, " WHERE trial_id = '",
                                     TrialIdOf(1, 0), "'"))
              .ok());
    }
  }
  auto reopened = ResultsStore::Open(path_);
  ASSERT_TRUE(reopened.ok());
  store_ = std::move(*reopened);
  // Every other change is refused, naming the way out.
  SweepRecord extend;
  extend.name = "s";
  extend.spec_json = "{}";
  const std::vector<NewTrial> more = {
      NewTrial{"{}", "new", "FAFO", 1, 0.1, 9, "", ""}};
  for (const absl::Status& s :
       {store_->sweeps().RetryFailed("s", 7000).status(),
        store_->sweeps().SetPaused("s", true, 7000),
        store_->sweeps().CancelSweep("s", 7000).status(),
        store_->sweeps().SubmitSweep(extend, more, 7000).status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("qkov delete s"), std::string::npos) << s;
  }
  auto d = store_->sweeps().DeleteSweep("s", 8000);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->trials, 4);
  EXPECT_EQ(d->metric_points, 40);  // 20 before the stop, 20 now
  EXPECT_EQ(RowsOf(1), 0);
  EXPECT_TRUE(Submit("s", 1).added == 1);  // the name is free
}

}  // namespace
}  // namespace qkov::storage
