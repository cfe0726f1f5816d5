// SweepQueries (storage/sweep_queries.h), and StoreCore's steps about
// sweeps and their trials: SweepId, TrainingIdLocked, InsertTrialsLocked.
#include "storage/sweep_queries.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"

namespace qkov::storage {
namespace {

constexpr char kSelectSweepSql[] =
    "SELECT sweep_id, name, description, spec_json, priority, max_attempts, "
    "cancelled, created_ms, paused, owner FROM sweeps WHERE name = ?";
constexpr char kListSweepsSql[] =
    "SELECT sweep_id, name, description, spec_json, priority, max_attempts, "
    "cancelled, created_ms, paused, owner FROM sweeps ORDER BY sweep_id";
constexpr char kSweepOwnerSql[] =
    "SELECT sweep_id, owner FROM sweeps WHERE name = ?";
constexpr char kCountsSql[] =
    "SELECT state, n FROM sweep_counts WHERE sweep_id = ? AND n > 0";
// Numbered above every sweep, deleted ones included: a trial id (which
// carries its sweep's id) never names two trials.
constexpr char kInsertSweepSql[] =
    "INSERT INTO sweeps (sweep_id, name, description, spec_json, priority, "
    "max_attempts, created_ms, updated_ms, owner) VALUES ("
    "1 + MAX((SELECT COALESCE(MAX(sweep_id), 0) FROM sweeps), "
    "(SELECT COALESCE(MAX(sweep_id), 0) FROM deleted_sweeps)), "
    "?, ?, ?, ?, ?, ?, ?, ?)";
constexpr char kDeletingSql[] =
    "SELECT 1 FROM deleted_sweeps WHERE sweep_id = ?";
constexpr char kUpdateSweepSpecSql[] =
    "UPDATE sweeps SET description = ?, spec_json = ?, priority = ?, "
    "max_attempts = ?, "
    "cancelled = 0, updated_ms = ? WHERE sweep_id = ?";
constexpr char kInsertTrialSql[] =
    "INSERT INTO trials (trial_id, sweep_id, ordinal, config_json, "
    "config_hash, "
    "parameterization, lr_ratio, eta_ov, seed, state, created_ms, updated_ms, "
    "axes_pb, training_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?) "
    "ON CONFLICT (sweep_id, config_hash) DO NOTHING";
constexpr char kMaxOrdinalSql[] =
    "SELECT COALESCE(MAX(ordinal), -1) FROM trials WHERE sweep_id = ?";
constexpr char kCancelSweepSql[] =
    "UPDATE sweeps SET cancelled = 1, updated_ms = ? WHERE sweep_id = ?";
constexpr char kCancelTrialsSql[] =
    "UPDATE trials SET state = 'cancelled', lease_worker = NULL, "
    "lease_expires_ms = NULL, "
    "updated_ms = ? WHERE sweep_id = ? AND state IN ('queued', 'preempted', "
    "'running')";
constexpr char kCancelAttemptsSql[] =
    "UPDATE attempts SET state = 'cancelled', ended_ms = ? WHERE state = "
    "'running' AND trial_id IN "
    "(SELECT trial_id FROM trials WHERE sweep_id = ?)";

SweepRecord ReadSweep(const Statement& s) {
  SweepRecord r;
  r.sweep_id = s.ColumnInt64(0);
  r.name = s.ColumnText(1);
  r.description = s.ColumnText(2);
  r.spec_json = s.ColumnText(3);
  r.priority = static_cast<int>(s.ColumnInt64(4));
  r.max_attempts = static_cast<int>(s.ColumnInt64(5));
  r.cancelled = s.ColumnInt64(6) != 0;
  r.created_ms = s.ColumnInt64(7);
  r.paused = s.ColumnInt64(8) != 0;
  r.owner = s.ColumnText(9);
  return r;
}

}  // namespace

absl::Status SweepQueries::FillCounts(Database* db, SweepRecord* sweep) {
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kCountsSql));
  s->BindInt64(1, sweep->sweep_id);
  sweep->counts.clear();
  sweep->total_trials = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    sweep->counts[s->ColumnText(0)] = s->ColumnInt64(1);
    sweep->total_trials += s->ColumnInt64(1);
  }
  // Display only (status throughput), so the real clock is fine here.
  constexpr char kEndedSql[] =
      "SELECT COALESCE(SUM(n), 0) FROM sweep_ended WHERE sweep_id = ? AND "
      "bucket >= ?";
  ASSIGN_OR_RETURN(Statement * th, db->Cached(kEndedSql));
  th->BindInt64(1, sweep->sweep_id);
  th->BindInt64(2, (absl::ToUnixMillis(absl::Now()) - 10 * 60 * 1000) / 10000);
  ASSIGN_OR_RETURN(bool row, th->Step());
  sweep->ended_last_10min = row ? th->ColumnInt64(0) : 0;
  th->Reset();
  // The first start never changes once there is one: read it until then.
  {
    absl::MutexLock lock(&core_->first_started_mu);
    auto known = core_->first_started_ms.find(sweep->sweep_id);
    if (known != core_->first_started_ms.end()) {
      sweep->first_started_ms = known->second;
      return absl::OkStatus();
    }
  }
  constexpr char kFirstStartSql[] =
      "SELECT COALESCE(MIN(a.started_ms), 0) FROM attempts a JOIN trials t "
      "USING (trial_id) WHERE t.sweep_id = ?";
  ASSIGN_OR_RETURN(th, db->Cached(kFirstStartSql));
  th->BindInt64(1, sweep->sweep_id);
  ASSIGN_OR_RETURN(row, th->Step());
  sweep->first_started_ms = row ? th->ColumnInt64(0) : 0;
  if (sweep->first_started_ms > 0) {
    absl::MutexLock lock(&core_->first_started_mu);
    core_->first_started_ms[sweep->sweep_id] = sweep->first_started_ms;
  }
  th->Reset();
  return absl::OkStatus();
}

absl::StatusOr<SweepRecord> SweepQueries::SweepOn(Database* db,
                                                  const std::string& name) {
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kSelectSweepSql));
  s->BindText(1, name);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no sweep named '", name, "'"));
  SweepRecord r = ReadSweep(*s);
  s->Reset();
  RETURN_IF_ERROR(FillCounts(db, &r));
  return r;
}

absl::StatusOr<SweepRecord> SweepQueries::GetSweepLocked(
    const std::string& name) {
  return SweepOn(core_->db.get(), name);
}

absl::StatusOr<int64_t> StoreCore::SweepId(Database* db,
                                           const std::string& name) {
  constexpr char kSweepIdSql[] = "SELECT sweep_id FROM sweeps WHERE name = ?";
  ASSIGN_OR_RETURN(Statement * s, db->Cached(kSweepIdSql));
  s->BindText(1, name);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no sweep named '", name, "'"));
  const int64_t id = s->ColumnInt64(0);
  s->Reset();
  return id;
}

absl::StatusOr<SubmitOutcome> SweepQueries::SubmitSweep(
    const SweepRecord& sweep, const std::vector<NewTrial>& trials,
    int64_t now_ms, const Actor& actor) {
  SubmitOutcome out;
  RETURN_IF_ERROR(core_->Write(
      [&]() -> absl::Status {
        core_->mu.AssertHeld();
        out = SubmitOutcome();
        // A large grid's rows and index entries (two of them keyed by
        // hashes, so inserted at random places) outgrow SQLite's 2 MiB page
        // cache: pages would spill to the WAL and be read back before the
        // commit. The cache grows for this transaction only.
        // 4 KiB a trial, at most 256 MiB; back to SQLite's default after.
        const bool big = trials.size() > 10000;
        if (big) {
          const size_t kib = std::min<size_t>(4 * trials.size(), 256 << 10);
          RETURN_IF_ERROR(
              core_->db->Execute(absl::StrCat("PRAGMA cache_size = -", kib)));
        }
        absl::Status s = SubmitSweepLocked(sweep, trials, now_ms, actor, &out);
        if (big) core_->db->Execute("PRAGMA cache_size = -2000").IgnoreError();
        return s;
      },
      /*alone=*/true));
  return out;
}

absl::StatusOr<int64_t> SweepQueries::OwnedSweepIdLocked(
    const std::string& name, const Actor& actor, const char* verb) {
  ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kSweepOwnerSql));
  s->BindText(1, name);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no sweep named '", name, "'"));
  const int64_t id = s->ColumnInt64(0);
  const std::string owner = s->ColumnText(1);
  s->Reset();
  if (!owner.empty() && owner != actor.name && !actor.admin) {
    return absl::PermissionDeniedError(
        absl::StrCat("sweep '", name, "' belongs to ", owner,
                     "; only its owner or an admin "
                     "may ",
                     verb, " it"));
  }
  if (absl::string_view(verb) != "delete") {
    ASSIGN_OR_RETURN(Statement * d, core_->db->Cached(kDeletingSql));
    d->BindInt64(1, id);
    ASSIGN_OR_RETURN(bool deleting, d->Step());
    d->Reset();
    if (deleting) {
      return absl::FailedPreconditionError(absl::StrCat(
          "sweep '", name, "' is being deleted; `qkov delete ", name,
          "` finishes it, and the name is free again after"));
    }
  }
  return id;
}

absl::Status SweepQueries::SubmitSweepLocked(
    const SweepRecord& sweep, const std::vector<NewTrial>& trials,
    int64_t now_ms, const Actor& actor, SubmitOutcome* result) {
  SubmitOutcome& out = *result;
  int64_t sweep_id;
  absl::StatusOr<int64_t> owned =
      OwnedSweepIdLocked(sweep.name, actor, "extend");
  if (!owned.ok() && !absl::IsNotFound(owned.status())) return owned.status();
  absl::StatusOr<SweepRecord> existing = GetSweepLocked(sweep.name);
  if (existing.ok()) {
    sweep_id = existing->sweep_id;
  } else if (absl::IsNotFound(existing.status())) {
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kInsertSweepSql));
    s->BindText(1, sweep.name);
    s->BindText(2, sweep.description);
    s->BindText(3, sweep.spec_json);
    s->BindInt64(4, sweep.priority);
    s->BindInt64(5, sweep.max_attempts);
    s->BindInt64(6, now_ms);
    s->BindInt64(7, now_ms);
    s->BindText(8, actor.name);
    RETURN_IF_ERROR(s->Run());
    sweep_id = sqlite3_last_insert_rowid(core_->db->raw());
  } else {
    return existing.status();
  }
  // The submission's training part, stored once (0: none given).
  ASSIGN_OR_RETURN(const int64_t training_id,
                   core_->TrainingIdLocked(sweep.training_pb));
  ASSIGN_OR_RETURN(out.added,
                   core_->InsertTrialsLocked(sweep_id, training_id, trials,
                                             now_ms, &out.existing));
  if (existing.ok()) {
    constexpr char kRequeueCancelledSql[] =
        "UPDATE trials SET state = 'queued', queue_rank = 0, updated_ms = ? "
        "WHERE sweep_id = ? AND state = 'cancelled'";
    ASSIGN_OR_RETURN(Statement * r, core_->db->Cached(kRequeueCancelledSql));
    r->BindInt64(1, now_ms);
    r->BindInt64(2, sweep_id);
    RETURN_IF_ERROR(r->Run());
    out.requeued = core_->db->Changes();
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kUpdateSweepSpecSql));
    s->BindText(1, sweep.description);
    s->BindText(2, sweep.spec_json);
    s->BindInt64(3, sweep.priority);
    s->BindInt64(4, sweep.max_attempts);
    s->BindInt64(5, now_ms);
    s->BindInt64(6, sweep_id);
    RETURN_IF_ERROR(s->Run());
  }
  if (sweep.adaptive) {
    constexpr char kAdaptiveSql[] =
        "UPDATE sweeps SET adaptive = 1 WHERE sweep_id = ?";
    ASSIGN_OR_RETURN(Statement * a, core_->db->Cached(kAdaptiveSql));
    a->BindInt64(1, sweep_id);
    RETURN_IF_ERROR(a->Run());
    ASSIGN_OR_RETURN(const int64_t grown,
                     core_->FollowUpLocked(sweep_id, now_ms));
    out.added += grown;
  }
  ASSIGN_OR_RETURN(out.sweep, GetSweepLocked(sweep.name));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> StoreCore::TrainingIdLocked(
    const std::string& training_pb) {
  if (training_pb.empty()) return 0;
  constexpr char kInsertTrainingSql[] =
      "INSERT INTO trainings (training_pb) VALUES (?) "
      "ON CONFLICT (training_pb) DO NOTHING";
  constexpr char kTrainingIdSql[] =
      "SELECT training_id FROM trainings WHERE training_pb = ?";
  ASSIGN_OR_RETURN(Statement * t, db->Cached(kInsertTrainingSql));
  t->BindBlob(1, training_pb);
  RETURN_IF_ERROR(t->Run());
  ASSIGN_OR_RETURN(Statement * id, db->Cached(kTrainingIdSql));
  id->BindBlob(1, training_pb);
  ASSIGN_OR_RETURN(bool row, id->Step());
  if (!row) return absl::InternalError("training row missing after insert");
  const int64_t training_id = id->ColumnInt64(0);
  id->Reset();
  return training_id;
}

absl::StatusOr<int64_t> StoreCore::InsertTrialsLocked(
    int64_t sweep_id, int64_t training_id, const std::vector<NewTrial>& trials,
    int64_t now_ms, int64_t* existing) {
  *existing = 0;
  int64_t added = 0;
  int64_t base_ordinal = 0;
  {
    ASSIGN_OR_RETURN(Statement * s, db->Cached(kMaxOrdinalSql));
    s->BindInt64(1, sweep_id);
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (row) base_ordinal = s->ColumnInt64(0) + 1;
    s->Reset();
  }
  // Arms' training parts, by content: a sweep has a few, its trials many.
  std::map<std::string, int64_t> arm_training_ids;
  for (const NewTrial& t : trials) {
    if (t.training_pb.empty() || arm_training_ids.count(t.training_pb))
      continue;
    ASSIGN_OR_RETURN(arm_training_ids[t.training_pb],
                     TrainingIdLocked(t.training_pb));
  }
  ASSIGN_OR_RETURN(Statement * ins, db->Cached(kInsertTrialSql));
  for (const NewTrial& t : trials) {
    const int64_t ordinal = base_ordinal + added;
    const int64_t trial_training_id =
        t.training_pb.empty() ? training_id : arm_training_ids[t.training_pb];
    ins->Reset();
    ins->BindText(1, TrialIdOf(sweep_id, ordinal));
    ins->BindInt64(2, sweep_id);
    ins->BindInt64(3, ordinal);
    ins->BindText(4, t.config_json);
    ins->BindText(5, t.config_hash);
    ins->BindText(6, t.parameterization);
    ins->BindDouble(7, t.lr_ratio);
    ins->BindDouble(8, t.eta_ov);
    ins->BindInt64(9, static_cast<int64_t>(t.seed));
    ins->BindInt64(10, now_ms);
    ins->BindInt64(11, now_ms);
    if (t.axes_pb.empty() || trial_training_id == 0) {
      ins->BindNull(12);
      ins->BindNull(13);
    } else {
      ins->BindBlob(12, t.axes_pb);
      ins->BindInt64(13, trial_training_id);
    }
    RETURN_IF_ERROR(ins->Run());
    if (db->Changes() > 0) {
      ++added;
    } else {
      ++*existing;
    }
  }
  if (added > 0) {
    // Inserted trials are counted here, not by a trigger per row
    // (storage/migrations.cc, migration 5).
    constexpr char kCountAddedSql[] =
        "UPDATE sweep_counts SET n = n + ? WHERE sweep_id = ? AND state = "
        "'queued'";
    ASSIGN_OR_RETURN(Statement * c, db->Cached(kCountAddedSql));
    c->BindInt64(1, added);
    c->BindInt64(2, sweep_id);
    RETURN_IF_ERROR(c->Run());
  }
  return added;
}

absl::StatusOr<SweepRecord> SweepQueries::GetSweep(const std::string& name) {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  return SweepOn(reader.db(), name);
}

absl::StatusOr<std::vector<SweepRecord>> SweepQueries::ListSweeps() {
  ASSIGN_OR_RETURN(ReaderPool::Lease reader, core_->readers->Acquire());
  Database* db = reader.db();
  std::vector<SweepRecord> out;
  {
    ASSIGN_OR_RETURN(Statement * s, db->Cached(kListSweepsSql));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      out.push_back(ReadSweep(*s));
    }
  }
  for (SweepRecord& r : out) RETURN_IF_ERROR(FillCounts(db, &r));
  return out;
}

absl::StatusOr<int64_t> SweepQueries::CancelSweep(const std::string& name,
                                                  int64_t now_ms,
                                                  const Actor& actor) {
  int64_t cancelled = 0;
  RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(int64_t id, OwnedSweepIdLocked(name, actor, "cancel"));
    return CancelSweepLocked(id, now_ms, &cancelled);
  }));
  return cancelled;
}

absl::Status SweepQueries::CancelSweepLocked(int64_t sweep_id, int64_t now_ms,
                                             int64_t* cancelled) {
  ASSIGN_OR_RETURN(Statement * a, core_->db->Cached(kCancelAttemptsSql));
  a->BindInt64(1, now_ms);
  a->BindInt64(2, sweep_id);
  RETURN_IF_ERROR(a->Run());
  ASSIGN_OR_RETURN(Statement * t, core_->db->Cached(kCancelTrialsSql));
  t->BindInt64(1, now_ms);
  t->BindInt64(2, sweep_id);
  RETURN_IF_ERROR(t->Run());
  *cancelled = core_->db->Changes();
  ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kCancelSweepSql));
  s->BindInt64(1, now_ms);
  s->BindInt64(2, sweep_id);
  return s->Run();
}

absl::StatusOr<DeletedSweep> SweepQueries::DeleteSweep(const std::string& name,
                                                       int64_t now_ms,
                                                       const Actor& actor) {
  int64_t sweep_id = 0;
  int64_t free_before = 0;
  RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(free_before, FreeBytesLocked());
    ASSIGN_OR_RETURN(sweep_id, MarkDeletedLocked(name, now_ms, actor));
    return absl::OkStatus();
  }));
  DeletedSweep out;
  // Ends: each write deletes at least one of the sweep's trials, and none is
  // added to a sweep being deleted.
  for (bool more = true; more;) {
    RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
      core_->mu.AssertHeld();
      DeletedSweep step;
      ASSIGN_OR_RETURN(more, DeleteTrialsLocked(sweep_id, &step));
      return absl::OkStatus();
    }));
  }
  RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    RETURN_IF_ERROR(DeleteSweepRowsLocked(sweep_id, now_ms));
    // The whole deletion's counts, an interrupted call's writes included.
    constexpr char kTotalsSql[] =
        "SELECT trials, metric_points FROM deleted_sweeps WHERE sweep_id = ?";
    ASSIGN_OR_RETURN(Statement * t, core_->db->Cached(kTotalsSql));
    t->BindInt64(1, sweep_id);
    ASSIGN_OR_RETURN(bool row, t->Step());
    if (row) {
      out.trials = t->ColumnInt64(0);
      out.metric_points = t->ColumnInt64(1);
    }
    t->Reset();
    ASSIGN_OR_RETURN(int64_t free_after, FreeBytesLocked());
    out.bytes_freed = std::max<int64_t>(0, free_after - free_before);
    return absl::OkStatus();
  }));
  {
    absl::MutexLock lock(&core_->first_started_mu);
    core_->first_started_ms.erase(sweep_id);
  }
  return out;
}

absl::StatusOr<int64_t> SweepQueries::MarkDeletedLocked(const std::string& name,
                                                        int64_t now_ms,
                                                        const Actor& actor) {
  ASSIGN_OR_RETURN(int64_t id, OwnedSweepIdLocked(name, actor, "delete"));
  constexpr char kLiveSql[] =
      "SELECT COALESCE(SUM(n), 0) FROM sweep_counts WHERE sweep_id = ? AND "
      "state IN ('queued', 'running', 'preempted')";
  ASSIGN_OR_RETURN(Statement * live, core_->db->Cached(kLiveSql));
  live->BindInt64(1, id);
  ASSIGN_OR_RETURN(bool row, live->Step());
  const int64_t n = row ? live->ColumnInt64(0) : 0;
  live->Reset();
  if (n > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sweep '", name, "' has ", n,
        " trial(s) queued, running or preempted; cancel it first (qkov "
        "cancel ",
        name, ")"));
  }
  constexpr char kMarkSql[] =
      "INSERT INTO deleted_sweeps (sweep_id, name, owner, actor, trials, "
      "started_ms) SELECT sweep_id, name, owner, ?2, "
      "(SELECT COUNT(*) FROM trials WHERE sweep_id = ?1), ?3 FROM sweeps "
      "WHERE sweep_id = ?1 ON CONFLICT (sweep_id) DO NOTHING";
  ASSIGN_OR_RETURN(Statement * mark, core_->db->Cached(kMarkSql));
  mark->BindInt64(1, id);
  mark->BindText(2, actor.name);
  mark->BindInt64(3, now_ms);
  RETURN_IF_ERROR(mark->Run());
  int64_t ignored = 0;
  RETURN_IF_ERROR(CancelSweepLocked(id, now_ms, &ignored));
  return id;
}

absl::StatusOr<bool> SweepQueries::DeleteTrialsLocked(int64_t sweep_id,
                                                      DeletedSweep* out) {
  constexpr char kNextSql[] =
      "SELECT trial_id FROM trials WHERE sweep_id = ? ORDER BY ordinal "
      "LIMIT 256";
  // Children first (foreign keys), each by its primary key's first column.
  static constexpr const char* kPerTrial[] = {
      "DELETE FROM metrics WHERE trial_id = ?",
      "DELETE FROM metrics_latest WHERE trial_id = ?",
      "DELETE FROM results WHERE trial_id = ?",
      "DELETE FROM artifacts WHERE trial_id = ?",
      "DELETE FROM attempts WHERE trial_id = ?",
      "DELETE FROM trials WHERE trial_id = ?"};
  std::vector<std::string> ids;
  {
    ASSIGN_OR_RETURN(Statement * next, core_->db->Cached(kNextSql));
    next->BindInt64(1, sweep_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, next->Step());
      if (!row) break;
      ids.push_back(next->ColumnText(0));
    }
    next->Reset();
  }
  for (const std::string& id : ids) {
    for (const char* sql : kPerTrial) {
      ASSIGN_OR_RETURN(Statement * d, core_->db->Cached(sql));
      d->BindText(1, id);
      RETURN_IF_ERROR(d->Run());
      if (sql == kPerTrial[0]) out->metric_points += core_->db->Changes();
    }
    ++out->trials;
    if (out->metric_points >= kDeletePointsPerWrite) break;
  }
  // Counted as they go, so that a deletion finished after a restart counts
  // the points of the writes before it too.
  constexpr char kCountSql[] =
      "UPDATE deleted_sweeps SET metric_points = metric_points + ? "
      "WHERE sweep_id = ?";
  ASSIGN_OR_RETURN(Statement * count, core_->db->Cached(kCountSql));
  count->BindInt64(1, out->metric_points);
  count->BindInt64(2, sweep_id);
  RETURN_IF_ERROR(count->Run());
  return !ids.empty();
}

absl::Status SweepQueries::DeleteSweepRowsLocked(int64_t sweep_id,
                                                 int64_t now_ms) {
  static constexpr const char* kPerSweep[] = {
      "DELETE FROM searches WHERE sweep_id = ?",
      "DELETE FROM sweep_ended WHERE sweep_id = ?",
      "DELETE FROM sweep_counts WHERE sweep_id = ?",
      "DELETE FROM sweeps WHERE sweep_id = ?"};
  for (const char* sql : kPerSweep) {
    ASSIGN_OR_RETURN(Statement * d, core_->db->Cached(sql));
    d->BindInt64(1, sweep_id);
    RETURN_IF_ERROR(d->Run());
  }
  constexpr char kEndedSql[] =
      "UPDATE deleted_sweeps SET ended_ms = ? WHERE sweep_id = ?";
  ASSIGN_OR_RETURN(Statement * e, core_->db->Cached(kEndedSql));
  e->BindInt64(1, now_ms);
  e->BindInt64(2, sweep_id);
  return e->Run();
}

absl::StatusOr<int64_t> SweepQueries::FreeBytesLocked() {
  int64_t v[2] = {0, 0};
  const char* pragmas[] = {"PRAGMA freelist_count", "PRAGMA page_size"};
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(auto s, core_->db->Prepare(pragmas[i]));
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (row) v[i] = s->ColumnInt64(0);
  }
  return v[0] * v[1];
}

absl::Status SweepQueries::SetPaused(const std::string& name, bool paused,
                                     int64_t now_ms, const Actor& actor) {
  return core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(int64_t id, OwnedSweepIdLocked(
                                     name, actor, paused ? "pause" : "resume"));
    constexpr char kPauseSql[] =
        "UPDATE sweeps SET paused = ?, updated_ms = ? WHERE sweep_id = ?";
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kPauseSql));
    s->BindInt64(1, paused ? 1 : 0);
    s->BindInt64(2, now_ms);
    s->BindInt64(3, id);
    return s->Run();
  });
}

absl::StatusOr<int64_t> SweepQueries::RetryFailed(const std::string& name,
                                                  int64_t now_ms,
                                                  const Actor& actor) {
  int64_t n = 0;
  RETURN_IF_ERROR(core_->Write([&]() -> absl::Status {
    core_->mu.AssertHeld();
    ASSIGN_OR_RETURN(int64_t sweep_id,
                     OwnedSweepIdLocked(name, actor, "retry"));
    constexpr char kRetrySql[] =
        "UPDATE trials SET state = 'queued', failures = 0, queue_rank = 0, "
        "updated_ms = ? "
        "WHERE sweep_id = ? AND state = 'failed'";
    ASSIGN_OR_RETURN(Statement * s, core_->db->Cached(kRetrySql));
    s->BindInt64(1, now_ms);
    s->BindInt64(2, sweep_id);
    RETURN_IF_ERROR(s->Run());
    n = core_->db->Changes();
    return absl::OkStatus();
  }));
  return n;
}

}  // namespace qkov::storage
