// ResultsStore's reads: each trial's latest values and best so far kept in
// metrics_latest (and migration 8 filling it from older files), every
// statement that reads `metrics` checked by EXPLAIN QUERY PLAN to be a key
// lookup priced by what it returns, and reads that never hold the writer
// or a worker back (ReaderPool: separate pools, deadlines, Stop).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "storage/migrations.h"
#include "storage/reader_pool.h"
#include "tests/unit/storage/results_store_fixture.h"

namespace qkov::storage {
namespace {

// --- the query-plan rule -------------------------------------------------

// What is wrong with the way `sql` reads table `metrics` (empty: nothing).
// Every access must be a SEARCH by the primary key (trial_id, attempt,
// name, step) that starts at trial_id: never a SCAN, nor an automatic
// index. An access made again for each row of something else (inside a
// correlated subquery, or an inner loop of a join) must also fix the name
// and the step, or bound the step: a lookup of one curve's point or range,
// so that its cost does not grow with each trial's history.
std::string MetricsPlanProblem(Database* db, const std::string& sql) {
  // The names `metrics` goes by in this statement: itself and its aliases.
  std::set<std::string> names = {"metrics"};
  static const std::regex kAlias(
      R"(\bmetrics\s+(?:AS\s+)?([A-Za-z_][A-Za-z0-9_]*))", std::regex::icase);
  static const std::set<std::string> kKeywords = {
      "WHERE", "JOIN",  "ON",    "USING", "GROUP",  "ORDER",  "LIMIT", "LEFT",
      "INNER", "CROSS", "UNION", "SET",   "VALUES", "WINDOW", "AS",    "("};
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), kAlias);
       it != std::sregex_iterator(); ++it) {
    std::string alias = (*it)[1];
    std::string upper = alias;
    for (char& c : upper) c = static_cast<char>(std::toupper(c));
    if (!kKeywords.count(upper)) names.insert(alias);
  }
  auto plan = db->Prepare("EXPLAIN QUERY PLAN " + sql);
  if (!plan.ok()) return plan.status().ToString();
  struct Row {
    int id, parent;
    std::string detail;
  };
  std::vector<Row> rows;
  while (true) {
    auto r = (*plan)->Step();
    if (!r.ok()) return r.status().ToString();
    if (!*r) break;
    rows.push_back({static_cast<int>((*plan)->ColumnInt64(0)),
                    static_cast<int>((*plan)->ColumnInt64(1)),
                    (*plan)->ColumnText(3)});
  }
  std::map<int, const Row*> by_id;
  for (const Row& r : rows) by_id[r.id] = &r;
  auto correlated = [&](const Row& r) {
    for (int p = r.parent; by_id.count(p); p = by_id[p]->parent)
      if (by_id[p]->detail.rfind("CORRELATED", 0) == 0) return true;
    return false;
  };
  std::map<int, int> loops_at;  // parent -> SCAN/SEARCH rows seen so far
  std::string problems;
  for (const Row& r : rows) {
    const bool scan = r.detail.rfind("SCAN ", 0) == 0;
    const bool search = r.detail.rfind("SEARCH ", 0) == 0;
    if (!scan && !search) continue;
    const bool inner = loops_at[r.parent]++ > 0;
    const std::string table = r.detail.substr(
        r.detail.find(' ') + 1,
        r.detail.find(' ', r.detail.find(' ') + 1) - r.detail.find(' ') - 1);
    if (!names.count(table)) continue;
    std::string problem;
    if (scan) {
      problem = "a full scan";
    } else if (r.detail.find("AUTOMATIC") != std::string::npos) {
      problem = "an automatic index";
    } else if (r.detail.find("PRIMARY KEY (trial_id=?") == std::string::npos) {
      problem = "a search not by trial";
    } else if ((inner || correlated(r)) &&
               (r.detail.find("name=?") == std::string::npos ||
                r.detail.find("step") == std::string::npos)) {
      problem = absl::StrCat("a search repeated for each row ",
                             correlated(r) ? "(correlated) " : "(inner loop) ",
                             "over more than one curve's point or range");
    }
    if (!problem.empty())
      absl::StrAppend(&problems, problems.empty() ? "" : "; ", problem, ": ",
                      r.detail);
  }
  return problems;
}

// The statements the store runs that read `metrics` (not metrics_latest).
std::vector<std::string> MetricsReaders(
    const std::vector<Database::StatementTime>& profile) {
  static const std::regex kReadsMetrics(R"(\b(FROM|JOIN)\s+metrics\b(?!_))",
                                        std::regex::icase);
  std::vector<std::string> out;
  for (const Database::StatementTime& t : profile)
    if (std::regex_search(t.sql, kReadsMetrics)) out.push_back(t.sql);
  return out;
}

class ResultsStoreReadsTest : public ResultsStoreTest {
 protected:
  // Reopens the store recording every statement it runs.
  void Profile() {
    store_.reset();
    Database::Options o;
    o.profile_statements = true;
    auto s = ResultsStore::Open(path_, o);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  // Trial `l` reports `names` at steps from..to (every `every`), values
  // from f(name, step).
  void Report(const LeaseRecord& l, const std::vector<std::string>& names,
              int64_t from, int64_t to, int64_t every,
              double (*f)(const std::string&, int64_t), int64_t now) {
    std::vector<MetricRecord> points;
    for (int64_t step = from; step <= to; step += every)
      for (const std::string& n : names)
        points.push_back({step, n, f(n, step)});
    auto s =
        store_->results().AddMetrics("w1", l.trial_id, l.attempt, points, now);
    ASSERT_TRUE(s.ok()) << s;
  }

  // Early stopping's best so far computed the long way, from the curve.
  double BestFromCurve(const std::string& trial_id, const std::string& name,
                       int64_t step, bool higher) {
    auto curve = store_->trials().Metrics(trial_id);
    EXPECT_TRUE(curve.ok()) << curve.status();
    double best = std::nan("");
    for (const MetricRecord& m : *curve) {
      if (m.name != name || m.step > step || std::isnan(m.value)) continue;
      if (std::isnan(best) || (higher ? m.value > best : m.value < best))
        best = m.value;
    }
    return best;
  }
};

double Wavy(const std::string& name, int64_t step) {
  const double base = name == "train_loss" ? 2.0 : 0.5;
  return base + std::sin(static_cast<double>(step) / 7.0) / (1.0 + step / 50.0);
}

// --- metrics_latest --------------------------------------------------------

TEST_F(ResultsStoreReadsTest, LatestIsEachCurvesLastPointOfTheNewestAttempt) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  // Two curves at different cadences, reported out of order once.
  Report(l, {"train_loss"}, 10, 100, 10, &Wavy, 2001);
  Report(l, {"val_acc"}, 25, 75, 25, &Wavy, 2002);
  ASSERT_TRUE(
      store_->results()
          .AddMetrics("w1", l.trial_id, 1, {{50, "train_loss", 9.0}}, 2003)
          .ok());
  auto latest = store_->trials().LatestMetrics(l.trial_id);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, (std::map<std::string, double>{
                         {"train_loss", Wavy("train_loss", 100)},
                         {"val_acc", Wavy("val_acc", 75)}}));
  // Preempted with a checkpoint; the next attempt's points replace them.
  ASSERT_TRUE(
      store_->leases()
          .FailTrial("w1", l.trial_id, 1, "sigterm", true, "ck", 60, 2004)
          .ok());
  l = Lease(2005);
  ASSERT_EQ(l.attempt, 2);
  EXPECT_EQ(store_->trials().LatestMetrics(l.trial_id)->at("val_acc"),
            Wavy("val_acc", 75));
  ASSERT_TRUE(
      store_->results()
          .AddMetrics("w1", l.trial_id, 2, {{70, "train_loss", 0.25}}, 2006)
          .ok());
  EXPECT_EQ(*store_->trials().LatestMetrics(l.trial_id),
            (std::map<std::string, double>{{"train_loss", 0.25}}));
}

TEST_F(ResultsStoreReadsTest, BestSoFarEqualsTheCurvesBestAcrossAttempts) {
  Submit("s", 1);
  LeaseRecord l = Lease(2000);
  Report(l, {"train_loss", "val_acc"}, 1, 120, 1, &Wavy, 2001);
  // A NaN is no value.
  ASSERT_TRUE(store_->results()
                  .AddMetrics("w1", l.trial_id, 1,
                              {{121, "val_acc", std::nan("")}}, 2002)
                  .ok());
  // Attempt 1 hands back at step 80; attempt 2 resumes there, lower.
  ASSERT_TRUE(
      store_->leases()
          .FailTrial("w1", l.trial_id, 1, "sigterm", true, "ck", 80, 2003)
          .ok());
  l = Lease(2004);
  ASSERT_EQ(l.attempt, 2);
  for (int64_t step : {1, 30, 80, 81, 120, 121, 150}) {
    for (bool higher : {false, true}) {
      auto best =
          store_->searches().BestSoFar(l.trial_id, "val_acc", step, higher);
      ASSERT_TRUE(best.ok()) << best.status();
      EXPECT_EQ(*best, BestFromCurve(l.trial_id, "val_acc", step, higher))
          << "before attempt 2 reports, step " << step << " higher " << higher;
    }
  }
  auto lower = [](const std::string& n, int64_t s) { return Wavy(n, s) - 1; };
  Report(l, {"train_loss", "val_acc"}, 81, 140, 1, +lower, 2005);
  for (int64_t step : {1, 50, 80, 81, 100, 140, 200}) {
    for (bool higher : {false, true}) {
      auto best =
          store_->searches().BestSoFar(l.trial_id, "val_acc", step, higher);
      ASSERT_TRUE(best.ok()) << best.status();
      EXPECT_EQ(*best, BestFromCurve(l.trial_id, "val_acc", step, higher))
          << "step " << step << " higher " << higher;
    }
  }
  EXPECT_TRUE(std::isnan(
      *store_->searches().BestSoFar(l.trial_id, "nope", 100, false)));
}

TEST_F(ResultsStoreReadsTest, Migration8FillsLatestFromStoredMetrics) {
  store_.reset();
  std::system(("rm -f " + path_ + "*").c_str());
  {
    auto db = Database::Open(path_, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateTo(db->get(), 7).ok());
    ASSERT_TRUE(
        (*db)
            ->Execute("INSERT INTO sweeps (sweep_id, name, spec_json, "
                      "max_attempts, created_ms, updated_ms) VALUES (1, 's', "
                      "'{}', 3, 0, 0);"
                      "INSERT INTO trials (trial_id, sweep_id, ordinal, "
                      "config_json, config_hash, parameterization, lr_ratio, "
                      "eta_ov, seed, state, created_ms, updated_ms) VALUES "
                      "('1-00000000', 1, 0, '{}', 'h', 'FAFO', 1, 0.1, 0, "
                      "'running', 0, 0);"
                      "INSERT INTO metrics VALUES "
                      "('1-00000000', 1, 'loss', 10, 3.0), "
                      "('1-00000000', 1, 'loss', 20, 1.0), "
                      "('1-00000000', 1, 'loss', 30, 2.0), "
                      "('1-00000000', 1, 'acc', 30, NULL), "
                      "('1-00000000', 2, 'loss', 5, 4.0);")
            .ok());
  }
  auto s = ResultsStore::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status();
  store_ = std::move(*s);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics_latest"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics_latest WHERE attempt = 1 AND "
                  "name = 'loss' AND step = 30 AND value = 2.0 AND min_value "
                  "= 1.0 AND max_value = 3.0"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics_latest WHERE attempt = 1 AND "
                  "name = 'acc' AND step = 30 AND value IS NULL AND min_value "
                  "IS NULL"),
            1);
  EXPECT_EQ(*store_->trials().LatestMetrics("1-00000000"),
            (std::map<std::string, double>{{"loss", 4.0}}));
}

// --- query plans -------------------------------------------------------------

// The rule itself: a statement whose cost grows with the history fails it.
TEST_F(ResultsStoreReadsTest, PlanRuleRefusesHistoryScans) {
  auto db = Database::Open(path_, {});
  ASSERT_TRUE(db.ok());
  // The latest values as they were once read: a correlated MAX(step) over
  // the attempt's every row, evaluated again for each of them.
  EXPECT_NE(MetricsPlanProblem(
                db->get(),
                "SELECT m.name, m.value FROM metrics m WHERE m.trial_id = ? "
                "AND m.attempt = (SELECT MAX(attempt) FROM metrics WHERE "
                "trial_id = ?) AND m.step = (SELECT MAX(step) FROM metrics "
                "WHERE trial_id = ? AND attempt = m.attempt)"),
            "");
  // The peers' values as they were once read: each peer's newest attempt
  // searched through its whole history.
  EXPECT_NE(MetricsPlanProblem(
                db->get(),
                "SELECT m.value FROM trials t JOIN metrics m USING (trial_id) "
                "WHERE t.sweep_id = (SELECT sweep_id FROM trials WHERE "
                "trial_id = ?1) AND t.trial_id <> ?1 AND m.name = ?2 AND "
                "m.step = ?3 AND m.attempt = (SELECT MAX(attempt) FROM "
                "metrics WHERE trial_id = t.trial_id AND name = ?2 AND step = "
                "?3)"),
            "");
  EXPECT_NE(MetricsPlanProblem(db->get(),
                               "SELECT COUNT(*) FROM metrics WHERE step = 3"),
            "");
  EXPECT_EQ(MetricsPlanProblem(
                db->get(),
                "SELECT value FROM metrics WHERE trial_id = ? AND attempt = ? "
                "AND name = ? AND step = ?"),
            "");
}

// Every statement the store runs that reads `metrics`, found by running
// every read (and write) the store offers with statement profiling on.
TEST_F(ResultsStoreReadsTest, EveryMetricsReadIsAKeyLookup) {
  Profile();
  Submit("s", 3);
  std::vector<LeaseRecord> leases = LeaseN(3);
  for (const LeaseRecord& l : leases)
    Report(l, {"train_loss", "val_acc"}, 10, 200, 10, &Wavy, 2001);
  ASSERT_TRUE(store_->leases()
                  .FailTrial("w1", leases[0].trial_id, 1, "sigterm", true, "ck",
                             100, 2002)
                  .ok());
  LeaseRecord again = Lease(2003);
  Report(again, {"train_loss", "val_acc"}, 110, 150, 10, &Wavy, 2004);
  Completion c = Done(leases[1], {{"final_loss", 0.1}});
  c.final_points = {{200, "train_loss", 0.09}};
  c.artifacts = {{"dtap", "heatmap", "[[1]]"}};
  ASSERT_TRUE(store_->results().CompleteTrial(c, 2005).ok());
  const std::string id = again.trial_id;
  ASSERT_TRUE(store_->trials().LatestMetrics(id).ok());
  for (bool higher : {false, true}) {
    ASSERT_TRUE(store_->searches().BestSoFar(id, "val_acc", 150, higher).ok());
    ASSERT_TRUE(store_->searches().BestSoFar(id, "val_acc", 120, higher).ok());
  }
  ASSERT_TRUE(store_->searches().PeerValuesAt(id, "val_acc", 100).ok());
  ASSERT_TRUE(store_->trials().Metrics(id).ok());
  ASSERT_TRUE(store_->trials().Metrics(id, "val_acc").ok());
  ASSERT_TRUE(store_->trials().GetTrial(id).ok());
  ASSERT_TRUE(store_->trials().TrialsWithResults("s").ok());
  ASSERT_TRUE(store_->trials().TrialsWithResults("s", 2003).ok());
  ASSERT_TRUE(store_->trials().ListTrials("s", "", -1, 10).ok());
  ASSERT_TRUE(store_->trials().TrialsUpdatedSince("s", 0).ok());
  ASSERT_TRUE(store_->trials().RecentChanges("s", 0, 10).ok());
  ASSERT_TRUE(store_->sweeps().GetSweep("s").ok());
  ASSERT_TRUE(store_->sweeps().ListSweeps().ok());
  ASSERT_TRUE(store_->searches().Searches("s").ok());
  ASSERT_TRUE(
      store_->trials().ArtifactsNamed({leases[1].trial_id}, "dtap").ok());
  ASSERT_TRUE(store_->searches().SweepSpecOfTrial(id).ok());
  ASSERT_TRUE(store_->leases().AllIdle().ok());

  std::vector<Database::StatementTime> profile =
      store_->ReaderStatementProfile();
  for (Database::StatementTime& t : store_->WriterStatementProfile())
    profile.push_back(std::move(t));
  const std::vector<std::string> readers = MetricsReaders(profile);
  // LatestMetrics reads metrics_latest only; Metrics (two forms), the peers'
  // values and the best so far's range read `metrics`.
  EXPECT_GE(readers.size(), 4u) << absl::StrJoin(readers, "\n");
  auto db = Database::Open(path_, {});
  ASSERT_TRUE(db.ok());
  for (const std::string& sql : readers)
    EXPECT_EQ(MetricsPlanProblem(db->get(), sql), "") << sql;
}

// --- reads beside the writer ------------------------------------------------

// With every connection of the researchers' pool lent out (as a crowd of
// watchers and exports would hold them), and one of them holding a read
// snapshot open, workers still register, lease, report (with early
// stopping's reads), heartbeat and complete, and submits go through.
TEST_F(ResultsStoreReadsTest, WritesAndWorkerReadsNeedNoClientReader) {
  Submit("s", 4);
  ReaderPool* pool = store_->ClientReadersForTesting();
  std::vector<ReaderPool::Lease> held;
  for (int i = 0; i < pool->size(); ++i) {
    auto lease = pool->Acquire();
    ASSERT_TRUE(lease.ok()) << lease.status();
    held.push_back(std::move(*lease));
  }
  ASSERT_TRUE(held[0].db()->Execute("BEGIN").ok());
  auto snapshot = held[0].db()->Prepare("SELECT COUNT(*) FROM metrics");
  ASSERT_TRUE(snapshot.ok() && (*snapshot)->Step().ok());
  // And one more researcher's read now waits, up to its deadline.
  EXPECT_EQ(pool->Acquire(absl::Now() + absl::Milliseconds(50)).status().code(),
            absl::StatusCode::kDeadlineExceeded);

  auto work = std::async(std::launch::async, [this]() -> absl::Status {
    ResultsStore* s = store_.get();
    if (absl::Status r =
            s->leases().RegisterWorker("w1", "n", 1, "{}", {"k", "p"}, 2000);
        !r.ok())
      return r;
    if (auto w = s->leases().GetWorkerIdentity("w1"); !w.ok())
      return w.status();
    std::vector<LeaseRecord> leases;
    auto a = s->leases().LeaseBatch("w1", 2000, 60000, 2, &leases);
    if (!a.ok()) return a.status();
    for (const LeaseRecord& l : leases) {
      if (absl::Status r = s->results().AddMetrics(
              "w1", l.trial_id, l.attempt,
              {{10, "train_loss", 1.0}, {10, "val_acc", 0.5}}, 2001);
          !r.ok())
        return r;
      int64_t expires = 0;
      if (auto h = s->leases().Heartbeat("w1", l.trial_id, l.attempt, 10, 2002,
                                         60000, &expires);
          !h.ok())
        return h.status();
      if (auto b = s->searches().BestSoFar(l.trial_id, "val_acc", 10, true);
          !b.ok())
        return b.status();
      if (auto p = s->searches().PeerValuesAt(l.trial_id, "val_acc", 10);
          !p.ok())
        return p.status();
      if (auto sp = s->searches().SweepSpecOfTrial(l.trial_id); !sp.ok())
        return sp.status();
      if (absl::Status r =
              s->results().CompleteTrial(Done(l, {{"loss", 1}}), 2003);
          !r.ok())
        return r;
    }
    SweepRecord other;
    other.name = "other";
    other.spec_json = "{}";
    other.max_attempts = 3;
    return s->sweeps()
        .SubmitSweep(other, {NewTrial{"{}", "h", "FAFO", 1, 0.1, 0, "", ""}},
                     2004)
        .status();
  });
  // A bounded wait: writes that needed a client reader would wait for the
  // held leases forever.
  const bool finished =
      work.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  (*snapshot).reset();
  held[0].db()->Execute("COMMIT").IgnoreError();
  held.clear();
  ASSERT_TRUE(finished) << "a write or a worker's read waited for the "
                           "researchers' read connections";
  EXPECT_TRUE(work.get().ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'done'"), 2);
}

TEST_F(ResultsStoreReadsTest, AReadPastItsDeadlineIsInterrupted) {
  auto pool = ReaderPool::Open(path_, {}, 1, "test reads");
  ASSERT_TRUE(pool.ok()) << pool.status();
  auto lease = (*pool)->Acquire(absl::Now() + absl::Milliseconds(100));
  ASSERT_TRUE(lease.ok());
  // Endless: only the deadline ends it.
  auto s = lease->db()->Prepare(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
      "SELECT MAX(x) FROM c");
  ASSERT_TRUE(s.ok());
  auto row = (*s)->Step();
  EXPECT_EQ(row.status().code(), absl::StatusCode::kDeadlineExceeded)
      << row.status();
}

TEST_F(ResultsStoreReadsTest, StopInterruptsRunningReadsAndRefusesNewOnes) {
  auto pool = ReaderPool::Open(path_, {}, 2, "test reads");
  ASSERT_TRUE(pool.ok()) << pool.status();
  std::promise<void> started;
  auto endless = std::async(std::launch::async, [&]() -> absl::Status {
    auto lease = (*pool)->Acquire(absl::Now() + absl::Hours(1));
    if (!lease.ok()) return lease.status();
    auto s = lease->db()->Prepare(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT MAX(x) FROM c");
    if (!s.ok()) return s.status();
    started.set_value();
    return (*s)->Step().status();
  });
  started.get_future().wait();
  (*pool)->Stop();
  ASSERT_EQ(endless.wait_for(std::chrono::seconds(60)),
            std::future_status::ready);
  EXPECT_FALSE(endless.get().ok());
  EXPECT_EQ((*pool)->Acquire().status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace qkov::storage
