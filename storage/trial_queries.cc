// TrialQueries (storage/trial_queries.h): reading trials back (lists, one
// trial with its attempts, results and heatmaps, curves across attempts);
// and StoreCore's step AttemptCutoffs.
#include "storage/trial_queries.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::storage {
namespace {

constexpr char kTrialColumns[] =
    "SELECT t.trial_id, s.name, t.ordinal, t.config_json, t.config_hash, "
    "t.state, t.attempts, "
    "t.failures, t.last_step, t.updated_ms FROM trials t JOIN sweeps s USING "
    "(sweep_id) ";
constexpr char kAttemptsOfTrialSql[] =
    "SELECT attempt, worker_id, state, started_ms, COALESCE(ended_ms, 0), "
    "error, provenance_json "
    "FROM attempts WHERE trial_id = ? ORDER BY attempt";
constexpr char kResultsOfTrialSql[] =
    "SELECT name, value FROM results WHERE trial_id = ? ORDER BY name";
constexpr char kArtifactsOfTrialSql[] =
    "SELECT name, kind, content FROM artifacts WHERE trial_id = ? ORDER BY "
    "name";

TrialRecord ReadTrial(const Statement& s) {
  TrialRecord t;
  t.trial_id = s.ColumnText(0);
  t.sweep_name = s.ColumnText(1);
  t.ordinal = s.ColumnInt64(2);
  t.config_json = s.ColumnText(3);
  t.config_hash = s.ColumnText(4);
  t.state = s.ColumnText(5);
  t.attempts = static_cast<int>(s.ColumnInt64(6));
  t.failures = static_cast<int>(s.ColumnInt64(7));
  t.last_step = s.ColumnInt64(8);
  t.updated_ms = s.ColumnInt64(9);
  return t;
}

// Every row `s` (bound, over kTrialColumns) yields.
absl::StatusOr<std::vector<TrialRecord>> ReadTrials(Statement* s) {
  std::vector<TrialRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(ReadTrial(*s));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, double>> TrialQueries::LatestMetrics(
    const std::string& trial_id) {
  ASSIGN_OR_RETURN(auto all, LatestMetricsOf({trial_id}));
  auto it = all.find(trial_id);
  if (it == all.end()) return std::map<std::string, double>();
  return std::move(it->second);
}

absl::StatusOr<std::map<std::string, std::map<std::string, double>>>
TrialQueries::LatestMetricsOf(const std::vector<std::string>& trial_ids) {
  std::map<std::string, std::map<std::string, double>> out;
  if (trial_ids.empty()) return out;
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  constexpr char kLatestSql[] =
      "SELECT name, value FROM metrics_latest WHERE trial_id = ?1 AND "
      "attempt = (SELECT MAX(attempt) FROM metrics_latest WHERE trial_id = "
      "?1)";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kLatestSql));
  RETURN_IF_ERROR(db->Execute("BEGIN"));  // one snapshot
  absl::Status status = [&]() -> absl::Status {
    for (const std::string& id : trial_ids) {
      s->Reset();
      s->BindText(1, id);
      while (true) {
        ASSIGN_OR_RETURN(bool row, s->Step());
        if (!row) break;
        out[id][s->ColumnText(0)] = s->ColumnDouble(1);
      }
    }
    return absl::OkStatus();
  }();
  s->Reset();
  db->Execute("COMMIT").IgnoreError();
  RETURN_IF_ERROR(status);
  return out;
}

absl::StatusOr<QueueState> TrialQueries::ReadQueueState() {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  constexpr char kByStateSql[] =
      "SELECT state, SUM(n) FROM sweep_counts GROUP BY state";
  constexpr char kQueueSql[] =
      "SELECT COALESCE(SUM(c.n), 0) FROM sweep_counts c JOIN sweeps s USING "
      "(sweep_id) WHERE c.state = 'queued' AND s.paused = 0 AND "
      "s.cancelled = 0";
  // Each leasable sweep's next trial in line: one seek of trials_by_queue
  // (sweep_id, state, queue_rank, ordinal) per sweep, whatever the queue's
  // length.
  constexpr char kOldestSql[] =
      "SELECT MIN((SELECT t.updated_ms FROM trials t WHERE t.sweep_id = "
      "s.sweep_id AND t.state = 'queued' ORDER BY t.queue_rank, t.ordinal "
      "LIMIT 1)) FROM sweeps s WHERE s.paused = 0 AND s.cancelled = 0";
  // trials_by_lease (state, lease_expires_ms).
  constexpr char kHoldersSql[] =
      "SELECT DISTINCT lease_worker FROM trials WHERE state = 'running' AND "
      "lease_worker IS NOT NULL";
  QueueState out;
  RETURN_IF_ERROR(db->Execute("BEGIN"));  // one snapshot
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(Statement * a, db->Cached(kByStateSql));
    while (true) {
      ASSIGN_OR_RETURN(bool row, a->Step());
      if (!row) break;
      out.trials_by_state[a->ColumnText(0)] = a->ColumnInt64(1);
    }
    ASSIGN_OR_RETURN(Statement * q, db->Cached(kQueueSql));
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (row) out.queue_depth = q->ColumnInt64(0);
    q->Reset();
    ASSIGN_OR_RETURN(Statement * o, db->Cached(kOldestSql));
    ASSIGN_OR_RETURN(row, o->Step());
    if (row) out.oldest_queued_ms = o->ColumnInt64(0);  // NULL reads 0
    o->Reset();
    ASSIGN_OR_RETURN(Statement * h, db->Cached(kHoldersSql));
    while (true) {
      ASSIGN_OR_RETURN(bool r, h->Step());
      if (!r) break;
      out.lease_holders.push_back(h->ColumnText(0));
    }
    return absl::OkStatus();
  }();
  db->Execute("COMMIT").IgnoreError();
  RETURN_IF_ERROR(status);
  return out;
}

absl::StatusOr<std::vector<TrialRecord>> TrialQueries::ListTrials(
    const std::string& sweep_name, const std::string& state,
    int64_t after_ordinal, int limit) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  ASSIGN_OR_RETURN(const int64_t sweep_id, core_->SweepId(db, sweep_name));
  static const std::string sql = absl::StrCat(
      kTrialColumns,
      "WHERE t.sweep_id = ? AND (? = '' OR t.state = ?) AND t.ordinal > ? ",
      "ORDER BY t.ordinal LIMIT ?");
  ASSIGN_OR_RETURN(Statement * s, db->Cached(sql.c_str()));
  s->BindInt64(1, sweep_id);
  s->BindText(2, state);
  s->BindText(3, state);
  s->BindInt64(4, after_ordinal);
  s->BindInt64(5, limit);
  return ReadTrials(s);
}

absl::StatusOr<std::vector<TrialRecord>> TrialQueries::TrialsUpdatedSince(
    const std::string& sweep_name, int64_t since_ms) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  ASSIGN_OR_RETURN(const int64_t sweep_id, core_->SweepId(db, sweep_name));
  static const std::string sql = absl::StrCat(
      kTrialColumns,
      "WHERE t.sweep_id = ? AND t.updated_ms >= ? ORDER BY t.ordinal");
  ASSIGN_OR_RETURN(Statement * s, db->Cached(sql.c_str()));
  s->BindInt64(1, sweep_id);
  s->BindInt64(2, since_ms);
  return ReadTrials(s);
}

absl::StatusOr<std::vector<TrialChange>> TrialQueries::RecentChanges(
    const std::string& sweep_name, int64_t since_ms, int limit) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  ASSIGN_OR_RETURN(const int64_t sweep_id, core_->SweepId(db, sweep_name));
  constexpr char kSql[] =
      "SELECT trial_id, state, last_step FROM trials WHERE sweep_id = ? AND "
      "updated_ms >= ? ORDER BY updated_ms DESC LIMIT ?";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kSql));
  s->BindInt64(1, sweep_id);
  s->BindInt64(2, since_ms);
  s->BindInt64(3, limit);
  std::vector<TrialChange> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back({s->ColumnText(0), s->ColumnText(1), s->ColumnInt64(2)});
  }
  return out;
}

absl::StatusOr<TrialRecord> TrialQueries::GetTrial(
    const std::string& trial_id) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  // One snapshot for the four statements.
  RETURN_IF_ERROR(db->Execute("BEGIN"));
  absl::StatusOr<TrialRecord> out = [&]() -> absl::StatusOr<TrialRecord> {
    static const std::string sql =
        absl::StrCat(kTrialColumns, "WHERE t.trial_id = ?");
    ASSIGN_OR_RETURN(Statement * s, db->Cached(sql.c_str()));
    s->BindText(1, trial_id);
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row)
      return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
    TrialRecord t = ReadTrial(*s);
    s->Reset();
    {
      ASSIGN_OR_RETURN(Statement * a, db->Cached(kAttemptsOfTrialSql));
      a->BindText(1, trial_id);
      while (true) {
        ASSIGN_OR_RETURN(bool r, a->Step());
        if (!r) break;
        t.attempt_history.push_back(AttemptRecord{
            static_cast<int>(a->ColumnInt64(0)), a->ColumnText(1),
            a->ColumnText(2), a->ColumnInt64(3), a->ColumnInt64(4),
            a->ColumnText(5), a->ColumnText(6)});
      }
    }
    {
      ASSIGN_OR_RETURN(Statement * r, db->Cached(kResultsOfTrialSql));
      r->BindText(1, trial_id);
      while (true) {
        ASSIGN_OR_RETURN(bool row2, r->Step());
        if (!row2) break;
        t.results[r->ColumnText(0)] = r->ColumnDouble(1);
      }
    }
    {
      ASSIGN_OR_RETURN(Statement * r, db->Cached(kArtifactsOfTrialSql));
      r->BindText(1, trial_id);
      while (true) {
        ASSIGN_OR_RETURN(bool row2, r->Step());
        if (!row2) break;
        t.artifacts.push_back(ArtifactRecord{r->ColumnText(0), r->ColumnText(1),
                                             r->ColumnText(2)});
      }
    }
    return t;
  }();
  db->Execute("COMMIT").IgnoreError();
  return out;
}

absl::StatusOr<std::vector<TrialRecord>> TrialQueries::TrialsWithResults(
    const std::string& sweep_name, int64_t since_ms) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  // One snapshot for the three statements.
  RETURN_IF_ERROR(db->Execute("BEGIN"));
  absl::StatusOr<std::vector<TrialRecord>> out =
      [&]() -> absl::StatusOr<std::vector<TrialRecord>> {
    ASSIGN_OR_RETURN(Statement * id,
                     db->Cached("SELECT sweep_id FROM sweeps WHERE "
                                "name = ?"));
    id->BindText(1, sweep_name);
    ASSIGN_OR_RETURN(bool found, id->Step());
    if (!found)
      return absl::NotFoundError(
          absl::StrCat("no sweep named '", sweep_name, "'"));
    const int64_t sweep_id = id->ColumnInt64(0);
    id->Reset();
    // kTrialColumns' order, config_json only where no binary config exists.
    constexpr char kTrialsSql[] =
        "SELECT t.trial_id, s.name, t.ordinal, CASE WHEN t.axes_pb IS NULL OR "
        "g.training_pb IS NULL THEN t.config_json ELSE '' END, t.config_hash, "
        "t.state, t.attempts, t.failures, t.last_step, t.updated_ms, "
        "t.axes_pb, g.training_pb, "
        "(SELECT MIN(a.started_ms) FROM attempts a WHERE a.trial_id = "
        "t.trial_id), (SELECT a.ended_ms FROM attempts a WHERE a.trial_id = "
        "t.trial_id ORDER BY a.attempt DESC LIMIT 1) "
        "FROM trials t JOIN sweeps s USING (sweep_id) LEFT JOIN "
        "trainings g ON g.training_id = t.training_id WHERE t.sweep_id = ? "
        "AND t.updated_ms >= ? ORDER BY t.ordinal";
    ASSIGN_OR_RETURN(Statement * s, db->Cached(kTrialsSql));
    s->BindInt64(1, sweep_id);
    s->BindInt64(2, since_ms);
    std::vector<TrialRecord> out;
    absl::flat_hash_map<std::string, size_t> index;
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      index[s->ColumnText(0)] = out.size();
      out.push_back(ReadTrial(*s));
      if (out.back().config_json.empty()) {
        out.back().axes_pb = s->ColumnBlob(10);
        out.back().training_pb = s->ColumnBlob(11);
      }
      out.back().started_ms = s->ColumnInt64(12);  // NULL reads as 0
      out.back().last_ended_ms = s->ColumnInt64(13);
    }
    constexpr char kSweepResultsSql[] =
        "SELECT r.trial_id, r.name, r.value FROM results r JOIN trials t USING "
        "(trial_id) "
        "WHERE t.sweep_id = ? AND t.updated_ms >= ?";
    ASSIGN_OR_RETURN(Statement * r, db->Cached(kSweepResultsSql));
    r->BindInt64(1, sweep_id);
    r->BindInt64(2, since_ms);
    while (true) {
      ASSIGN_OR_RETURN(bool row, r->Step());
      if (!row) break;
      const std::string name = r->ColumnText(1);
      // One snapshot: every result is of a trial read above.
      auto it = index.find(r->ColumnText(0));
      if (it != index.end()) out[it->second].results[name] = r->ColumnDouble(2);
    }
    return out;
  }();
  db->Execute("COMMIT").IgnoreError();
  return out;
}

absl::StatusOr<std::map<int64_t, int64_t>> StoreCore::AttemptCutoffs(
    Database* db, const std::string& trial_id) {
  constexpr char kStartStepsSql[] =
      "SELECT attempt, start_step FROM attempts WHERE trial_id = ? ORDER BY "
      "attempt DESC";
  std::map<int64_t, int64_t> cutoff;
  ASSIGN_OR_RETURN(Statement * a, db->Cached(kStartStepsSql));
  a->BindText(1, trial_id);
  int64_t limit = std::numeric_limits<int64_t>::max();
  while (true) {
    ASSIGN_OR_RETURN(bool row, a->Step());
    if (!row) break;
    cutoff[a->ColumnInt64(0)] = limit;
    const int64_t start = a->ColumnInt64(1);
    limit = start > 0 ? std::min(limit, start) : -1;
  }
  return cutoff;
}

absl::StatusOr<std::vector<MetricRecord>> TrialQueries::Metrics(
    const std::string& trial_id, const std::string& name) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  ASSIGN_OR_RETURN(const auto cutoff, core_->AttemptCutoffs(db, trial_id));
  constexpr char kAllMetricsSql[] =
      "SELECT attempt, step, name, value FROM metrics WHERE trial_id = ? ORDER "
      "BY name, step, attempt";
  constexpr char kCurveSql[] =
      "SELECT attempt, step, name, value FROM metrics WHERE trial_id = ?1 AND "
      "attempt IN (SELECT attempt FROM attempts WHERE trial_id = ?1) AND name "
      "= ?2 ORDER BY step, attempt";
  ASSIGN_OR_RETURN(Statement * s,
                   db->Cached(name.empty() ? kAllMetricsSql : kCurveSql));
  s->BindText(1, trial_id);
  if (!name.empty()) s->BindText(2, name);
  std::vector<MetricRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    auto it = cutoff.find(s->ColumnInt64(0));
    const int64_t step = s->ColumnInt64(1);
    if (it == cutoff.end() || step > it->second) continue;
    MetricRecord m{step, s->ColumnText(2), s->ColumnDouble(3)};
    if (!out.empty() && out.back().name == m.name &&
        out.back().step == m.step) {
      out.back() = m;  // a later attempt's value for the same step wins
    } else {
      out.push_back(m);
    }
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> TrialQueries::ArtifactsNamed(
    const std::vector<std::string>& trial_ids, const std::string& name) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  constexpr char kArtifactSql[] =
      "SELECT content FROM artifacts WHERE trial_id = ? AND name = ?";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kArtifactSql));
  std::map<std::string, std::string> out;
  for (const std::string& id : trial_ids) {
    s->BindText(1, id);
    s->BindText(2, name);
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (row) out[id] = s->ColumnText(0);
    s->Reset();
  }
  return out;
}

}  // namespace qkov::storage
