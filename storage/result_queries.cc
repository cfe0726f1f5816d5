// ResultQueries (storage/result_queries.h): what a running trial reports
// (metric points, the completion with its results, artifacts and
// provenance); and StoreCore's step EndedByLocked.
#include "storage/result_queries.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::storage {
namespace {

// Results and metric points go in up to kRowsPerInsert rows per statement:
// one statement per report instead of one per value (fewer statement runs on
// the writer). Every row starts with ?1 (the trial) and ?2 (the attempt),
// followed by `per_row` parameters of its own.
constexpr int kRowsPerInsert = 32;
std::vector<std::string> MultiRowSqls(const char* head, int per_row,
                                      const char* tail) {
  std::vector<std::string> sqls(kRowsPerInsert + 1);
  for (int rows = 1; rows <= kRowsPerInsert; ++rows) {
    std::string& sql = sqls[rows];
    sql = head;
    for (int i = 0; i < rows; ++i) {
      absl::StrAppend(&sql, i ? ", " : "", "(?1, ?2");
      for (int j = 0; j < per_row; ++j)
        absl::StrAppend(&sql, ", ?", 3 + i * per_row + j);
      sql += ")";
    }
    sql += tail;
  }
  return sqls;
}
// Rows: (name, value).
const std::string& UpsertResultsSql(int rows) {
  static const auto* sqls = new std::vector<std::string>(MultiRowSqls(
      "INSERT INTO results (trial_id, attempt, name, value) VALUES ", 2,
      " ON CONFLICT (trial_id, name) DO UPDATE SET value = excluded.value, "
      "attempt = excluded.attempt"));
  return (*sqls)[rows];
}
// Rows: (name, step, value). A point repeated (also within one statement)
// keeps its last value.
const std::string& UpsertMetricsSql(int rows) {
  static const auto* sqls = new std::vector<std::string>(MultiRowSqls(
      "INSERT INTO metrics (trial_id, attempt, name, step, value) VALUES ", 3,
      " ON CONFLICT (trial_id, attempt, name, step) DO UPDATE SET value = "
      "excluded.value"));
  return (*sqls)[rows];
}
// Rows: (name, step, value, min_value, max_value), one per curve of a
// report: its point at the highest step and the extremes of its values
// (metrics_latest, docs/schema.md). Every SET expression reads the row as
// it was before this statement.
const std::string& UpsertLatestSql(int rows) {
  static const auto* sqls = new std::vector<std::string>(MultiRowSqls(
      "INSERT INTO metrics_latest (trial_id, attempt, name, step, value, "
      "min_value, max_value) VALUES ",
      5,
      " ON CONFLICT (trial_id, attempt, name) DO UPDATE SET "
      "value = CASE WHEN excluded.step >= step THEN excluded.value ELSE value "
      "END, step = MAX(step, excluded.step), "
      "min_value = COALESCE(MIN(min_value, excluded.min_value), min_value, "
      "excluded.min_value), "
      "max_value = COALESCE(MAX(max_value, excluded.max_value), max_value, "
      "excluded.max_value)"));
  return (*sqls)[rows];
}

// A report's points of one curve, summed up for metrics_latest.
struct CurveSummary {
  int64_t step = std::numeric_limits<int64_t>::min();
  double value = 0;  // at `step`; the last one given for it
  double min = std::nan("");
  double max = std::nan("");
};

std::map<std::string, CurveSummary> Summarize(
    const std::vector<MetricRecord>& points) {
  std::map<std::string, CurveSummary> out;
  for (const MetricRecord& p : points) {
    CurveSummary& c = out[p.name];
    if (p.step >= c.step) {
      c.step = p.step;
      c.value = p.value;
    }
    if (std::isnan(p.value)) continue;
    if (std::isnan(c.min) || p.value < c.min) c.min = p.value;
    if (std::isnan(c.max) || p.value > c.max) c.max = p.value;
  }
  return out;
}

void BindOrNull(Statement* s, int i, double v) {
  if (std::isnan(v)) {
    s->BindNull(i);
  } else {
    s->BindDouble(i, v);
  }
}

constexpr char kUpsertArtifactSql[] =
    "INSERT INTO artifacts (trial_id, name, kind, content, attempt) VALUES (?, "
    "?, ?, ?, ?) "
    "ON CONFLICT (trial_id, name) DO UPDATE SET kind = excluded.kind, content "
    "= excluded.content, "
    "attempt = excluded.attempt";
constexpr char kEndTrialSql[] =
    "UPDATE trials SET state = ?, lease_worker = NULL, lease_expires_ms = "
    "NULL, checkpoint = NULL, "
    "last_step = MAX(last_step, ?), updated_ms = ? WHERE trial_id = ?";
constexpr char kEndAttemptSql[] =
    "UPDATE attempts SET state = ?, ended_ms = ?, error = ?, provenance_json = "
    "? "
    "WHERE trial_id = ? AND attempt = ?";

}  // namespace

absl::Status ResultQueries::InsertMetrics(
    const std::string& trial_id, int attempt,
    const std::vector<MetricRecord>& points) {
  for (size_t begin = 0; begin < points.size(); begin += kRowsPerInsert) {
    const int rows = static_cast<int>(
        std::min<size_t>(kRowsPerInsert, points.size() - begin));
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(UpsertMetricsSql(rows)));
    s->BindText(1, trial_id);
    s->BindInt64(2, attempt);
    for (int i = 0; i < rows; ++i) {
      const MetricRecord& p = points[begin + i];
      s->BindText(3 * i + 3, p.name);
      s->BindInt64(3 * i + 4, p.step);
      s->BindDouble(3 * i + 5, p.value);
    }
    RETURN_IF_ERROR(s->Run());
  }
  const std::map<std::string, CurveSummary> curves = Summarize(points);
  auto curve = curves.begin();
  while (curve != curves.end()) {
    const int rows = static_cast<int>(
        std::min<size_t>(kRowsPerInsert, std::distance(curve, curves.end())));
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(UpsertLatestSql(rows)));
    s->BindText(1, trial_id);
    s->BindInt64(2, attempt);
    for (int i = 0; i < rows; ++i, ++curve) {
      const CurveSummary& c = curve->second;
      s->BindText(5 * i + 3, curve->first);
      s->BindInt64(5 * i + 4, c.step);
      s->BindDouble(5 * i + 5, c.value);
      BindOrNull(s, 5 * i + 6, c.min);
      BindOrNull(s, 5 * i + 7, c.max);
    }
    RETURN_IF_ERROR(s->Run());
  }
  return absl::OkStatus();
}

absl::Status ResultQueries::AddMetrics(const std::string& worker_id,
                                       const std::string& trial_id, int attempt,
                                       const std::vector<MetricRecord>& points,
                                       int64_t now_ms) {
  return core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    return AddMetricsLocked(worker_id, trial_id, attempt, points, now_ms);
  });
}

absl::Status ResultQueries::AddMetricsLocked(
    const std::string& worker_id, const std::string& trial_id, int attempt,
    const std::vector<MetricRecord>& points, int64_t now_ms) {
  RETURN_IF_ERROR(core_->CheckLease(worker_id, trial_id, attempt, now_ms));
  RETURN_IF_ERROR(InsertMetrics(trial_id, attempt, points));
  int64_t max_step = 0;
  for (const MetricRecord& p : points) max_step = std::max(max_step, p.step);
  constexpr char kStepSql[] =
      "UPDATE trials SET last_step = MAX(last_step, ?), updated_ms = ? WHERE "
      "trial_id = ?";
  ASSIGN_OR_RETURN(Statement * u, core_->db->Cached(kStepSql));
  u->BindInt64(1, max_step);
  u->BindInt64(2, now_ms);
  u->BindText(3, trial_id);
  return u->Run();
}

absl::Status ResultQueries::CompleteTrial(const Completion& c, int64_t now_ms) {
  return core_->WriteWithEvents([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(const bool wrote, CompleteTrialLocked(c, now_ms));
    if (!wrote) return absl::OkStatus();
    return core_->AfterTrialsEndedLocked({c.trial_id}, now_ms);
  });
}

absl::StatusOr<LeaseAvailability> ResultQueries::CompleteAndLease(
    absl::Span<const Completion> completions, const std::string& worker_id,
    int64_t now_ms, int64_t lease_ms, int max_trials,
    std::vector<LeaseRecord>* leases, const LeaseSizer& sizer,
    bool resend_held) {
  LeaseAvailability a = LeaseAvailability::kNoWork;
  leases->clear();
  RETURN_IF_ERROR(core_->WriteWithEvents([&]() -> absl::Status {
    core_->mu.AssertHeld();
    std::vector<std::string> ended;
    for (const Completion& c : completions) {
      ASSIGN_OR_RETURN(const bool wrote, CompleteTrialLocked(c, now_ms));
      if (wrote) ended.push_back(c.trial_id);
    }
    // Adaptive sweeps grow once per sweep, from all of the batch's results,
    // before the next lease (which may take a new probe).
    RETURN_IF_ERROR(core_->AfterTrialsEndedLocked(ended, now_ms));
    if (max_trials <= 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(
        a, leases_->LeaseBatchLocked(worker_id, now_ms, lease_ms, max_trials,
                                     leases, sizer, resend_held));
    return absl::OkStatus();
  }));
  return a;
}

absl::StatusOr<bool> ResultQueries::CompleteTrialLocked(const Completion& c,
                                                        int64_t now_ms) {
  const char* state = c.diverged ? kDiverged : kDone;
  if (absl::Status lease =
          core_->CheckLease(c.worker_id, c.trial_id, c.attempt, now_ms);
      !lease.ok()) {
    if (!absl::IsFailedPrecondition(lease)) return lease;
    ASSIGN_OR_RETURN(
        const bool repeated,
        core_->EndedByLocked(c.worker_id, c.trial_id, c.attempt, state));
    if (!repeated) return lease;
    return false;
  }
  RETURN_IF_ERROR(InsertMetrics(c.trial_id, c.attempt, c.final_points));
  for (auto it = c.results.begin(); it != c.results.end();) {
    const int rows = static_cast<int>(
        std::min<size_t>(kRowsPerInsert, std::distance(it, c.results.end())));
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(UpsertResultsSql(rows)));
    s->BindText(1, c.trial_id);
    s->BindInt64(2, c.attempt);
    for (int i = 0; i < rows; ++i, ++it) {
      s->BindText(2 * i + 3, it->first);
      s->BindDouble(2 * i + 4, it->second);
    }
    RETURN_IF_ERROR(s->Run());
  }
  {
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kUpsertArtifactSql));
    for (const ArtifactRecord& a : c.artifacts) {
      s->Reset();
      s->BindText(1, c.trial_id);
      s->BindText(2, a.name);
      s->BindText(3, a.kind);
      s->BindText(4, a.content);
      s->BindInt64(5, c.attempt);
      RETURN_IF_ERROR(s->Run());
    }
  }
  ASSIGN_OR_RETURN(Statement * t, core_->db->Cached(kEndTrialSql));
  t->BindText(1, state);
  t->BindInt64(2, c.steps);
  t->BindInt64(3, now_ms);
  t->BindText(4, c.trial_id);
  RETURN_IF_ERROR(t->Run());
  ASSIGN_OR_RETURN(Statement * a, core_->db->Cached(kEndAttemptSql));
  a->BindText(1, state);
  a->BindInt64(2, now_ms);
  a->BindText(3, "");
  a->BindText(4, c.provenance_json);
  a->BindText(5, c.trial_id);
  a->BindInt64(6, c.attempt);
  RETURN_IF_ERROR(a->Run());
  RETURN_IF_ERROR(core_->RecordEndLocked(TrialEvent::Kind::kCompleted,
                                         c.trial_id, c.attempt, c.worker_id,
                                         state, "", now_ms));
  return true;
}

absl::StatusOr<bool> StoreCore::EndedByLocked(const std::string& worker_id,
                                              const std::string& trial_id,
                                              int attempt, const char* state) {
  constexpr char kAttemptSql[] =
      "SELECT state = ? AND worker_id = ? FROM attempts "
      "WHERE trial_id = ? AND attempt = ?";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kAttemptSql));
  s->BindText(1, state);
  s->BindText(2, worker_id);
  s->BindText(3, trial_id);
  s->BindInt64(4, attempt);
  ASSIGN_OR_RETURN(bool row, s->Step());
  const bool ended = row && s->ColumnInt64(0) != 0;
  s->Reset();
  return ended;
}

}  // namespace qkov::storage
