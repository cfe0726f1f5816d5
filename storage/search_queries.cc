// SearchQueries (storage/search_queries.h): adaptive sweeps (their stored
// searches; early stops and the peers' values they are judged against);
// and StoreCore's steps that run the follow-up adding their trials, in the
// transactions that submit them and end their trials: FollowUpLocked,
// AfterTrialsEndedLocked.
#include "storage/search_queries.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::storage {
namespace {

constexpr char kTrialSweepSql[] =
    "SELECT s.sweep_id, s.adaptive, s.cancelled FROM trials t JOIN sweeps s "
    "USING (sweep_id) WHERE t.trial_id = ?";
constexpr char kSweepByIdSql[] =
    "SELECT name, spec_json, cancelled FROM sweeps WHERE sweep_id = ?";
// The trials of a sweep as a follow-up reads them: config_json only where
// there are no binary axes.
constexpr char kSweepTrialsSql[] =
    "SELECT trial_id, config_hash, state, axes_pb, CASE WHEN axes_pb IS NULL "
    "THEN config_json ELSE '' END FROM trials WHERE sweep_id = ? ORDER BY "
    "ordinal";
constexpr char kSweepResultsSql[] =
    "SELECT r.trial_id, r.name, r.value FROM results r JOIN trials t USING "
    "(trial_id) WHERE t.sweep_id = ?";
constexpr char kUpsertSearchSql[] =
    "INSERT INTO searches (sweep_id, grp, state, outcome_json, updated_ms) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (sweep_id, grp) DO UPDATE SET state = "
    "excluded.state, outcome_json = excluded.outcome_json, updated_ms = "
    "excluded.updated_ms WHERE outcome_json <> excluded.outcome_json";

}  // namespace

void SearchQueries::SetFollowUp(FollowUpFn follow_up) {
  absl::MutexLock lock(&core_->mu);
  core_->follow_up = std::move(follow_up);
}

absl::Status StoreCore::AfterTrialsEndedLocked(
    absl::Span<const std::string> trial_ids, int64_t now_ms) {
  std::vector<int64_t> sweeps;  // adaptive, not cancelled, each once
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kTrialSweepSql));
  for (const std::string& trial_id : trial_ids) {
    s->Reset();
    s->BindText(1, trial_id);
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row)
      return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
    const int64_t sweep_id = s->ColumnInt64(0);
    if (s->ColumnInt64(1) != 0 && s->ColumnInt64(2) == 0 &&
        std::find(sweeps.begin(), sweeps.end(), sweep_id) == sweeps.end())
      sweeps.push_back(sweep_id);
  }
  s->Reset();
  for (int64_t sweep_id : sweeps)
    RETURN_IF_ERROR(FollowUpLocked(sweep_id, now_ms).status());
  return absl::OkStatus();
}

absl::StatusOr<int64_t> StoreCore::FollowUpLocked(int64_t sweep_id,
                                                  int64_t now_ms) {
  if (!follow_up) {
    return absl::FailedPreconditionError(
        "an adaptive sweep needs a follow-up (SearchQueries::SetFollowUp), and "
        "this store has none");
  }
  SweepRecord sweep;
  sweep.sweep_id = sweep_id;
  sweep.adaptive = true;
  {
    ASSIGN_OR_RETURN(Statement * s, db->Cached(kSweepByIdSql));
    s->BindInt64(1, sweep_id);
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) return absl::NotFoundError(absl::StrCat("no sweep ", sweep_id));
    sweep.name = s->ColumnText(0);
    sweep.spec_json = s->ColumnText(1);
    sweep.cancelled = s->ColumnInt64(2) != 0;
    s->Reset();
  }
  std::vector<TrialRecord> trials;
  absl::flat_hash_map<std::string, size_t> index;
  {
    ASSIGN_OR_RETURN(Statement * s, db->Cached(kSweepTrialsSql));
    s->BindInt64(1, sweep_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      TrialRecord t;
      t.trial_id = s->ColumnText(0);
      t.sweep_name = sweep.name;
      t.config_hash = s->ColumnText(1);
      t.state = s->ColumnText(2);
      t.axes_pb = s->ColumnBlob(3);
      t.config_json = s->ColumnText(4);
      index[t.trial_id] = trials.size();
      trials.push_back(std::move(t));
    }
  }
  {
    ASSIGN_OR_RETURN(Statement * s, db->Cached(kSweepResultsSql));
    s->BindInt64(1, sweep_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      auto it = index.find(s->ColumnText(0));
      if (it != index.end())
        trials[it->second].results[s->ColumnText(1)] = s->ColumnDouble(2);
    }
  }
  ASSIGN_OR_RETURN(FollowUp grown, follow_up(sweep, trials));
  int64_t added = 0;
  if (!grown.trials.empty()) {
    ASSIGN_OR_RETURN(const int64_t training_id,
                     TrainingIdLocked(grown.training_pb));
    int64_t existing = 0;
    ASSIGN_OR_RETURN(
        added, InsertTrialsLocked(sweep_id, training_id, grown.trials, now_ms,
                                  &existing));
  }
  ASSIGN_OR_RETURN(Statement * u, db->Cached(kUpsertSearchSql));
  for (const SearchRecord& r : grown.searches) {
    u->Reset();
    u->BindInt64(1, sweep_id);
    u->BindText(2, r.group);
    u->BindText(3, r.state);
    u->BindText(4, r.outcome_json);
    u->BindInt64(5, now_ms);
    RETURN_IF_ERROR(u->Run());
  }
  return added;
}

absl::StatusOr<std::vector<SearchRecord>> SearchQueries::Searches(
    const std::string& sweep_name) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  ASSIGN_OR_RETURN(const int64_t sweep_id, core_->SweepId(db, sweep_name));
  constexpr char kSearchesSql[] =
      "SELECT grp, state, outcome_json FROM searches WHERE sweep_id = ? ORDER "
      "BY grp";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kSearchesSql));
  s->BindInt64(1, sweep_id);
  std::vector<SearchRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back({s->ColumnText(0), s->ColumnText(1), s->ColumnText(2)});
  }
  return out;
}

absl::Status SearchQueries::StopEarly(const std::string& worker_id,
                                      const std::string& trial_id, int attempt,
                                      const std::string& reason,
                                      int64_t now_ms) {
  return core_->WriteWithEvents([&]() -> absl::Status {
    core_->mu.AssertHeld();
    RETURN_IF_ERROR(core_->CheckLease(worker_id, trial_id, attempt, now_ms));
    constexpr char kStopTrialSql[] =
        "UPDATE trials SET state = 'stopped_early', lease_worker = NULL, "
        "lease_expires_ms = NULL, checkpoint = NULL, checkpoint_step = 0, "
        "updated_ms = ? WHERE trial_id = ?";
    ASSIGN_OR_RETURN(Statement * t, core_->db->Cached(kStopTrialSql));
    t->BindInt64(1, now_ms);
    t->BindText(2, trial_id);
    RETURN_IF_ERROR(t->Run());
    constexpr char kStopAttemptSql[] =
        "UPDATE attempts SET state = 'stopped_early', ended_ms = ?, error = ? "
        "WHERE trial_id = ? AND attempt = ?";
    ASSIGN_OR_RETURN(Statement * a, core_->db->Cached(kStopAttemptSql));
    a->BindInt64(1, now_ms);
    a->BindText(2, reason);
    a->BindText(3, trial_id);
    a->BindInt64(4, attempt);
    RETURN_IF_ERROR(a->Run());
    return core_->RecordEndLocked(TrialEvent::Kind::kStoppedEarly, trial_id,
                                  attempt, worker_id, kStoppedEarly, reason,
                                  now_ms);
  });
}

absl::StatusOr<std::vector<double>> SearchQueries::PeerValuesAt(
    const std::string& trial_id, const std::string& name, int64_t step) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->worker_readers->Acquire());
  // For each other trial of the sweep, the newest of its attempts (a few
  // rows of `attempts`) with a point (name, step): point lookups by the
  // whole primary key, whatever the length of the trials' histories.
  constexpr char kPeersSql[] =
      "SELECT m.value FROM trials t JOIN metrics m ON m.trial_id = t.trial_id "
      "AND m.name = ?2 AND m.step = ?3 AND m.attempt = (SELECT a.attempt FROM "
      "attempts a JOIN metrics p ON p.trial_id = a.trial_id AND p.attempt = "
      "a.attempt AND p.name = ?2 AND p.step = ?3 WHERE a.trial_id = "
      "t.trial_id ORDER BY a.attempt DESC LIMIT 1) "
      "WHERE t.sweep_id = (SELECT sweep_id FROM trials WHERE trial_id = ?1) "
      "AND t.trial_id <> ?1";
  ASSIGN_OR_RETURN(Statement * s, reader.db()->Cached(kPeersSql));
  s->BindText(1, trial_id);
  s->BindText(2, name);
  s->BindInt64(3, step);
  std::vector<double> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(s->ColumnDouble(0));
  }
  return out;
}

absl::StatusOr<double> SearchQueries::BestSoFar(const std::string& trial_id,
                                                const std::string& name,
                                                int64_t step, bool higher) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->worker_readers->Acquire());
  Database* db = reader.db();
  RETURN_IF_ERROR(db->Execute("BEGIN"));  // one snapshot
  absl::StatusOr<double> out = [&]() -> absl::StatusOr<double> {
    ASSIGN_OR_RETURN(const auto cutoff, core_->AttemptCutoffs(db, trial_id));
    struct Summary {
      int64_t attempt, step;
      double extreme;  // NaN: no value
    };
    std::vector<Summary> attempts;
    {
      constexpr char kSummarySql[] =
          "SELECT attempt, step, min_value, max_value FROM metrics_latest "
          "WHERE trial_id = ? AND name = ?";
      ASSIGN_OR_RETURN(Statement * l, db->Cached(kSummarySql));
      l->BindText(1, trial_id);
      l->BindText(2, name);
      while (true) {
        ASSIGN_OR_RETURN(bool row, l->Step());
        if (!row) break;
        attempts.push_back({l->ColumnInt64(0), l->ColumnInt64(1),
                            l->ColumnDouble(higher ? 3 : 2)});
      }
    }
    static const std::string kRangeSql[2] = {
        "SELECT MIN(value) FROM metrics WHERE trial_id = ? AND attempt = ? "
        "AND name = ? AND step <= ?",
        "SELECT MAX(value) FROM metrics WHERE trial_id = ? AND attempt = ? "
        "AND name = ? AND step <= ?"};
    double best = std::nan("");
    for (const Summary& a : attempts) {
      auto it = cutoff.find(a.attempt);
      if (it == cutoff.end()) continue;
      const int64_t bound = std::min(it->second, step);
      if (bound < 0) continue;
      double v = a.extreme;
      if (a.step > bound) {  // some of its points lie past the bound
        ASSIGN_OR_RETURN(Statement * r, db->Cached(kRangeSql[higher ? 1 : 0]));
        r->BindText(1, trial_id);
        r->BindInt64(2, a.attempt);
        r->BindText(3, name);
        r->BindInt64(4, bound);
        ASSIGN_OR_RETURN(bool row, r->Step());
        v = row ? r->ColumnDouble(0) : std::nan("");
        r->Reset();
      }
      if (std::isnan(v)) continue;
      if (std::isnan(best) || (higher ? v > best : v < best)) best = v;
    }
    return best;
  }();
  db->Execute("COMMIT").IgnoreError();
  return out;
}

absl::StatusOr<std::pair<int64_t, std::string>> SearchQueries::SweepSpecOfTrial(
    const std::string& trial_id) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->worker_readers->Acquire());
  constexpr char kSpecSql[] =
      "SELECT s.sweep_id, s.spec_json FROM trials t JOIN sweeps s USING "
      "(sweep_id) WHERE t.trial_id = ?";
  ASSIGN_OR_RETURN(Statement * s, reader.db()->Cached(kSpecSql));
  s->BindText(1, trial_id);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
  std::pair<int64_t, std::string> out{s->ColumnInt64(0), s->ColumnText(1)};
  s->Reset();
  return out;
}

}  // namespace qkov::storage
