#include "storage/results_store.h"

#include <pthread.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "storage/migrations.h"

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
    "SELECT state, COUNT(*) FROM trials WHERE sweep_id = ? GROUP BY state";
constexpr char kInsertSweepSql[] =
    "INSERT INTO sweeps (name, description, spec_json, priority, max_attempts, "
    "created_ms, updated_ms, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
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
// A worker id is registered once: its key and principal never change.
constexpr char kInsertWorkerSql[] =
    "INSERT INTO workers (worker_id, name, slots, provenance_json, "
    "registered_ms, last_seen_ms, key_sha256, principal) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
constexpr char kWorkerIdentitySql[] =
    "SELECT key_sha256, principal FROM workers WHERE worker_id = ?";
// The sweep to serve next: highest priority first; among equal priorities the
// one with the fewest running trials (fair sharing), then the oldest.
constexpr char kNextSweepSql[] =
    "SELECT s.sweep_id, s.name FROM sweeps s WHERE s.cancelled = 0 AND "
    "s.paused = 0 AND EXISTS "
    "(SELECT 1 FROM trials t WHERE t.sweep_id = s.sweep_id AND t.state = "
    "'queued') "
    "ORDER BY s.priority DESC, "
    "(SELECT COUNT(*) FROM trials r WHERE r.sweep_id = s.sweep_id AND r.state "
    "= 'running'), s.sweep_id "
    "LIMIT 1";
// Its next trial: handed-back trials (queue_rank -1) first, then grid order.
constexpr char kNextQueuedSql[] =
    "SELECT t.trial_id, t.attempts, t.config_json, t.checkpoint, "
    "t.checkpoint_step, t.parameterization, t.axes_pb, g.training_pb "
    "FROM trials t LEFT JOIN trainings g ON g.training_id = t.training_id "
    "WHERE t.sweep_id = ? AND t.state = 'queued' "
    "ORDER BY t.queue_rank, t.ordinal LIMIT 1";
constexpr char kAnyRunningSql[] =
    "SELECT EXISTS (SELECT 1 FROM trials WHERE state = 'running')";
constexpr char kAnyActiveSql[] =
    "SELECT EXISTS (SELECT 1 FROM trials WHERE state IN ('queued', "
    "'preempted', 'running'))";
constexpr char kStartLeaseSql[] =
    "UPDATE trials SET state = 'running', attempts = attempts + 1, "
    "lease_worker = ?, "
    "lease_expires_ms = ?, updated_ms = ? WHERE trial_id = ?";
constexpr char kInsertAttemptSql[] =
    "INSERT INTO attempts (trial_id, attempt, worker_id, state, started_ms, "
    "start_step) "
    "VALUES (?, ?, ?, 'running', ?, ?)";
constexpr char kLeaseStateSql[] =
    "SELECT state, attempts, lease_expires_ms, lease_worker FROM trials WHERE "
    "trial_id = ?";
constexpr char kRenewSql[] =
    "UPDATE trials SET lease_expires_ms = ?, last_step = MAX(last_step, ?), "
    "updated_ms = ? "
    "WHERE trial_id = ?";
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
constexpr char kEndAttemptKeepProvenanceSql[] =
    "UPDATE attempts SET state = ?, ended_ms = ?, error = ? WHERE trial_id = ? "
    "AND attempt = ?";
constexpr char kFailuresSql[] =
    "SELECT t.failures, s.max_attempts FROM trials t JOIN sweeps s USING "
    "(sweep_id) "
    "WHERE t.trial_id = ?";
constexpr char kRequeueSql[] =
    "UPDATE trials SET state = ?, failures = failures + ?, queue_rank = ?, "
    "checkpoint = ?, "
    "checkpoint_step = ?, lease_worker = NULL, lease_expires_ms = NULL, "
    "updated_ms = ? WHERE trial_id = ?";
constexpr char kExpiredSql[] =
    "SELECT trial_id, attempts FROM trials WHERE state = 'running' AND "
    "lease_expires_ms < ?";
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

// The lease's binary config from columns (axes_pb, training_pb) at `col`:
// their concatenation, or "" when either is NULL (stored before schema 2).
std::string BinaryConfig(const Statement& s, int col) {
  if (s.ColumnIsNull(col) || s.ColumnIsNull(col + 1)) return "";
  return s.ColumnBlob(col) + s.ColumnBlob(col + 1);
}

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

bool CheckpointDue(int wal_frames, int copied_frames, int checkpoint_pages) {
  // Past the WAL's end: SQLite has restarted it from its start since.
  if (copied_frames > wal_frames) copied_frames = 0;
  return wal_frames - copied_frames >= checkpoint_pages;
}

std::string TrialIdOf(int64_t sweep_id, int64_t ordinal) {
  return absl::StrCat(sweep_id, "-", absl::Dec(ordinal, absl::kZeroPad8));
}

absl::StatusOr<std::unique_ptr<ResultsStore>> ResultsStore::Open(
    const std::string& path, const Database::Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, options));
  RETURN_IF_ERROR(Migrate(db.get()));
  std::unique_ptr<ResultsStore> store(
      new ResultsStore(std::move(db), path, options));
  if (!options.read_only) {
    // Replaces SQLite's automatic checkpoint, which would run inside the
    // writer's commit.
    sqlite3_wal_hook(store->db_->raw(), &ResultsStore::OnWalCommit,
                     store.get());
    store->checkpointer_ =
        std::thread([s = store.get(), options] { s->CheckpointLoop(options); });
  }
  store->writer_ = std::thread([s = store.get()] { s->WriterLoop(); });
  return store;
}

ResultsStore::~ResultsStore() {
  {
    absl::MutexLock lock(&queue_mu_);
    writer_stopping_ = true;
    writer_cv_.Signal();
  }
  if (writer_.joinable()) writer_.join();
  {
    absl::MutexLock lock(&checkpoint_mu_);
    stopping_ = true;
  }
  if (checkpointer_.joinable()) checkpointer_.join();
}

int ResultsStore::OnWalCommit(void* store, sqlite3*, const char*, int pages) {
  auto* self = static_cast<ResultsStore*>(store);
  self->wal_pages_.store(pages, std::memory_order_relaxed);
  if (CheckpointDue(pages, self->copied_pages_.load(std::memory_order_relaxed),
                    self->options_.checkpoint_pages)) {
    absl::MutexLock lock(&self->checkpoint_mu_);
    self->checkpoint_wanted_ = true;
  }
  return SQLITE_OK;
}

bool ResultsStore::PassiveCheckpoint(Database* db) {
  // A statement, not sqlite3_wal_checkpoint_v2, so that it shows in the
  // statement profile. Its row: (busy, frames in the WAL, frames copied).
  absl::StatusOr<Statement*> s = db->Cached("PRAGMA wal_checkpoint(PASSIVE)");
  if (!s.ok()) return false;
  absl::StatusOr<bool> row = (*s)->Step();
  const bool done = row.ok() && *row;
  if (done) {
    // -1 when the database is not in WAL mode.
    copied_pages_.store(
        static_cast<int>(std::max<int64_t>(0, (*s)->ColumnInt64(2))),
        std::memory_order_relaxed);
  }
  (*s)->Reset();
  return done;
}

void ResultsStore::CheckpointLoop(Database::Options options) {
  pthread_setname_np(pthread_self(), "qkov-checkpoint");
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path_, options);
  while (true) {
    {
      absl::MutexLock lock(&checkpoint_mu_);
      checkpoint_mu_.Await(absl::Condition(
          +[](ResultsStore* s)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->checkpoint_mu_) {
                 return s->checkpoint_wanted_ || s->stopping_;
               },
          this));
      if (stopping_) return;
      checkpoint_wanted_ = false;
    }
    // A failed checkpoint (the file busy, say) is retried at the next commit
    // past the threshold; the WAL only grows meanwhile, nothing is lost.
    bool done = false;
    if (db.ok()) {
      absl::MutexLock run(&checkpoint_run_mu_);
      done = PassiveCheckpoint(db->get());
    }
    if (done) {
      absl::MutexLock lock(&checkpoint_mu_);
      ++checkpoints_;
    }
  }
}

struct ResultsStore::PendingWrite {
  PendingWrite(absl::FunctionRef<absl::Status()> f, bool a) : op(f), alone(a) {}
  absl::FunctionRef<absl::Status()> op;
  const bool alone;
  absl::Status status;
  bool done = false;  // guarded by queue_mu_
  absl::CondVar cv;
};

absl::Status ResultsStore::Write(absl::FunctionRef<absl::Status()> op,
                                 bool alone) {
  PendingWrite w(op, alone);
  absl::MutexLock lock(&queue_mu_);
  writers_.push_back(&w);
  if (writer_idle_) writer_cv_.Signal();
  while (!w.done) w.cv.Wait(&queue_mu_);
  return w.status;
}

void ResultsStore::WriterLoop() {
  pthread_setname_np(pthread_self(), "qkov-writer");  // for top and perf
  // A group holds at most this many writes, so that a burst cannot keep one
  // transaction (and its waiting callers) open without bound.
  constexpr size_t kMaxGroup = 256;
  while (true) {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&queue_mu_);
      writer_idle_ = true;
      while (writers_.empty() && !writer_stopping_) writer_cv_.Wait(&queue_mu_);
      writer_idle_ = false;
      if (writers_.empty()) return;  // stopping, and nothing left to write
      hook = before_group_hook_;
    }
    if (hook) hook();
    // The writes queued so far form the group, up to the next one that must
    // run alone. Writes that arrive meanwhile queue behind it and form the
    // next one.
    std::vector<PendingWrite*> group;
    {
      absl::MutexLock lock(&queue_mu_);
      group.push_back(writers_.front());
      if (!group[0]->alone) {
        for (auto it = writers_.begin() + 1;
             it != writers_.end() && !(*it)->alone && group.size() < kMaxGroup;
             ++it) {
          group.push_back(*it);
        }
      }
    }
    {
      absl::MutexLock lock(&mu_);
      const absl::Time start = absl::Now();
      CommitGroup(group);
      stats_.busy_ns += absl::ToInt64Nanoseconds(absl::Now() - start);
    }
    absl::MutexLock lock(&queue_mu_);
    for (PendingWrite* p : group) {
      writers_.pop_front();
      p->done = true;
      p->cv.Signal();
    }
  }
}

void ResultsStore::CommitGroup(const std::vector<PendingWrite*>& group) {
  auto run = [this](const char* sql) -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(sql));
    return s->Run();
  };
  auto fail_all = [&](const absl::Status& s) {
    for (PendingWrite* p : group) p->status = s;
  };
  // First the writes run straight into the transaction. A savepoint around
  // each would make SQLite copy every page a write changes to a sub-journal,
  // and the writes of a group change the same few pages (~20% of the batched
  // cycle rate). A write that fails without having changed a row (a refused
  // lease, an unknown trial: checked before anything is written) leaves
  // nothing to undo. One that fails after changing rows ends this first
  // try: the transaction is rolled back and the group runs again, each write
  // inside a savepoint of its own, so that it leaves the others alone. The
  // writes before it run twice then; they are deterministic, given the same
  // database and the same arguments.
  for (const bool savepoints : {false, true}) {
    db_->ResetBusyStatements();  // left by reads between groups
    absl::Status begin = run("BEGIN IMMEDIATE");
    if (!begin.ok()) return fail_all(begin);
    bool undo = false;  // a write failed after changing rows
    for (PendingWrite* p : group) {
      absl::Status s = savepoints ? run("SAVEPOINT write") : absl::OkStatus();
      if (s.ok()) {
        const int64_t changes = sqlite3_total_changes64(db_->raw());
        p->status = p->op();
        if (!p->status.ok()) {
          if (savepoints) {
            s = run("ROLLBACK TO write");
          } else {
            undo = sqlite3_total_changes64(db_->raw()) != changes;
          }
        }
        if (savepoints && s.ok()) s = run("RELEASE write");
      }
      // SQLite ends the whole transaction on some errors (disk full, I/O):
      // then no write of this group is stored, and each caller hears so.
      if (!s.ok() || sqlite3_get_autocommit(db_->raw())) {
        absl::Status cause = !s.ok() ? s : p->status;
        if (cause.ok()) cause = absl::InternalError("transaction ended early");
        run("ROLLBACK").IgnoreError();
        return fail_all(absl::Status(
            cause.code(),
            absl::StrCat("nothing stored, transaction rolled back: ",
                         cause.message())));
      }
      if (undo) break;
    }
    if (!undo) break;
    run("ROLLBACK").IgnoreError();
    // A lone write has nothing to replay: its status says why nothing of it
    // was stored.
    if (group.size() == 1) return;
    ++stats_.replays;
  }
  // A half-read statement would hold a read transaction past the commit and
  // keep the WAL from being reused.
  db_->ResetBusyStatements();
  if (group.size() == 1 && !group[0]->status.ok()) {  // nothing to commit
    run("ROLLBACK").IgnoreError();
    return;
  }
  absl::Status commit = run("COMMIT");
  if (!commit.ok()) {
    run("ROLLBACK").IgnoreError();
    return fail_all(commit);
  }
  const int wal_pages = wal_pages_.load(std::memory_order_relaxed);
  if (wal_pages >= options_.rewind_pages) {
    // SQLite reuses the WAL from its start only when a write transaction
    // begins with every frame already copied back, which a background
    // checkpoint behind a busy writer never achieves: the writer finishes the
    // copy (the checkpointer has done most of it). Only one checkpoint runs
    // at a time (SQLite refuses a second at once), so the writer skips its
    // turn while the checkpointer copies, and past twice the threshold waits
    // for it: the WAL stays bounded under any load.
    if (wal_pages >= 2 * options_.rewind_pages) {
      absl::MutexLock run(&checkpoint_run_mu_);
      PassiveCheckpoint(db_.get());
    } else if (checkpoint_run_mu_.TryLock()) {
      PassiveCheckpoint(db_.get());
      checkpoint_run_mu_.Unlock();
    }
  }
  stats_.writes += static_cast<int64_t>(group.size());
  ++stats_.commits;
}

std::vector<Database::StatementTime> ResultsStore::WriterStatementProfile() {
  absl::MutexLock lock(&mu_);
  return db_->StatementProfile();
}

ResultsStore::WriteStats ResultsStore::GetWriteStats() {
  WriteStats out;
  {
    absl::MutexLock lock(&mu_);
    out = stats_;
  }
  absl::MutexLock lock(&checkpoint_mu_);
  out.checkpoints = checkpoints_;
  return out;
}

void ResultsStore::SetBeforeGroupHookForTesting(std::function<void()> hook) {
  absl::MutexLock lock(&queue_mu_);
  before_group_hook_ = std::move(hook);
}

size_t ResultsStore::QueuedWritesForTesting() {
  absl::MutexLock lock(&queue_mu_);
  return writers_.size();
}

absl::Status ResultsStore::WriteForTesting(
    std::function<absl::Status(Database*)> op) {
  return Write([&]() -> absl::Status {
    mu_.AssertHeld();
    return op(db_.get());
  });
}

absl::StatusOr<int64_t> ResultsStore::SweepIdLocked(const std::string& name) {
  constexpr char kSweepIdSql[] = "SELECT sweep_id FROM sweeps WHERE name = ?";
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kSweepIdSql));
  s->BindText(1, name);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no sweep named '", name, "'"));
  const int64_t id = s->ColumnInt64(0);
  s->Reset();
  return id;
}

absl::StatusOr<std::map<std::string, double>> ResultsStore::LatestMetrics(
    const std::string& trial_id) {
  absl::MutexLock lock(&mu_);
  constexpr char kLatestSql[] =
      "SELECT m.name, m.value FROM metrics m WHERE m.trial_id = ? AND "
      "m.attempt = "
      "(SELECT MAX(attempt) FROM metrics WHERE trial_id = ?) AND m.step = "
      "(SELECT MAX(step) FROM metrics WHERE trial_id = ? AND attempt = "
      "m.attempt)";
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kLatestSql));
  s->BindText(1, trial_id);
  s->BindText(2, trial_id);
  s->BindText(3, trial_id);
  std::map<std::string, double> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out[s->ColumnText(0)] = s->ColumnDouble(1);
  }
  return out;
}

absl::Status ResultsStore::FillCounts(SweepRecord* sweep) {
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kCountsSql));
  s->BindInt64(1, sweep->sweep_id);
  sweep->counts.clear();
  sweep->total_trials = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    sweep->counts[s->ColumnText(0)] = s->ColumnInt64(1);
    sweep->total_trials += s->ColumnInt64(1);
  }
  constexpr char kThroughputSql[] =
      "SELECT COALESCE(SUM(a.state IN ('done', 'diverged', 'failed') AND "
      "a.ended_ms >= ?), 0), "
      "COALESCE(MIN(a.started_ms), 0) FROM attempts a JOIN trials t USING "
      "(trial_id) "
      "WHERE t.sweep_id = ?";
  ASSIGN_OR_RETURN(Statement * th, db_->Cached(kThroughputSql));
  // Display only (status throughput), so the real clock is fine here.
  th->BindInt64(1, absl::ToUnixMillis(absl::Now()) - 10 * 60 * 1000);
  th->BindInt64(2, sweep->sweep_id);
  ASSIGN_OR_RETURN(bool row, th->Step());
  if (row) {
    sweep->ended_last_10min = th->ColumnInt64(0);
    sweep->first_started_ms = th->ColumnInt64(1);
  }
  th->Reset();
  return absl::OkStatus();
}

absl::StatusOr<SweepRecord> ResultsStore::GetSweepLocked(
    const std::string& name) {
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kSelectSweepSql));
  s->BindText(1, name);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no sweep named '", name, "'"));
  SweepRecord r = ReadSweep(*s);
  s->Reset();
  RETURN_IF_ERROR(FillCounts(&r));
  return r;
}

absl::StatusOr<SubmitOutcome> ResultsStore::SubmitSweep(
    const SweepRecord& sweep, const std::vector<NewTrial>& trials,
    int64_t now_ms, const Actor& actor) {
  SubmitOutcome out;
  RETURN_IF_ERROR(Write(
      [&]() -> absl::Status {
        mu_.AssertHeld();
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
              db_->Execute(absl::StrCat("PRAGMA cache_size = -", kib)));
        }
        absl::Status s = SubmitSweepLocked(sweep, trials, now_ms, actor, &out);
        if (big) db_->Execute("PRAGMA cache_size = -2000").IgnoreError();
        return s;
      },
      /*alone=*/true));
  return out;
}

absl::StatusOr<int64_t> ResultsStore::OwnedSweepIdLocked(
    const std::string& name, const Actor& actor, const char* verb) {
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kSweepOwnerSql));
  s->BindText(1, name);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no sweep named '", name, "'"));
  const int64_t id = s->ColumnInt64(0);
  const std::string owner = s->ColumnText(1);
  s->Reset();
  if (!owner.empty() && owner != actor.name && !actor.admin) {
    return absl::PermissionDeniedError(absl::StrCat(
        "sweep '", name, "' belongs to ", owner, "; only its owner or an admin "
        "may ", verb, " it"));
  }
  return id;
}

absl::Status ResultsStore::SubmitSweepLocked(
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
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kInsertSweepSql));
    s->BindText(1, sweep.name);
    s->BindText(2, sweep.description);
    s->BindText(3, sweep.spec_json);
    s->BindInt64(4, sweep.priority);
    s->BindInt64(5, sweep.max_attempts);
    s->BindInt64(6, now_ms);
    s->BindInt64(7, now_ms);
    s->BindText(8, actor.name);
    RETURN_IF_ERROR(s->Run());
    sweep_id = sqlite3_last_insert_rowid(db_->raw());
  } else {
    return existing.status();
  }
  int64_t base_ordinal = 0;
  {
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kMaxOrdinalSql));
    s->BindInt64(1, sweep_id);
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (row) base_ordinal = s->ColumnInt64(0) + 1;
    s->Reset();
  }
  // The submission's training part, stored once (0: none given).
  int64_t training_id = 0;
  if (!sweep.training_pb.empty()) {
    constexpr char kInsertTrainingSql[] =
        "INSERT INTO trainings (training_pb) VALUES (?) "
        "ON CONFLICT (training_pb) DO NOTHING";
    constexpr char kTrainingIdSql[] =
        "SELECT training_id FROM trainings WHERE training_pb = ?";
    ASSIGN_OR_RETURN(Statement * t, db_->Cached(kInsertTrainingSql));
    t->BindBlob(1, sweep.training_pb);
    RETURN_IF_ERROR(t->Run());
    ASSIGN_OR_RETURN(Statement * id, db_->Cached(kTrainingIdSql));
    id->BindBlob(1, sweep.training_pb);
    ASSIGN_OR_RETURN(bool row, id->Step());
    if (!row) return absl::InternalError("training row missing after insert");
    training_id = id->ColumnInt64(0);
    id->Reset();
  }
  ASSIGN_OR_RETURN(Statement * ins, db_->Cached(kInsertTrialSql));
  for (const NewTrial& t : trials) {
    const int64_t ordinal = base_ordinal + out.added;
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
    if (t.axes_pb.empty() || training_id == 0) {
      ins->BindNull(12);
      ins->BindNull(13);
    } else {
      ins->BindBlob(12, t.axes_pb);
      ins->BindInt64(13, training_id);
    }
    RETURN_IF_ERROR(ins->Run());
    if (db_->Changes() > 0) {
      ++out.added;
    } else {
      ++out.existing;
    }
  }
  if (existing.ok()) {
    constexpr char kRequeueCancelledSql[] =
        "UPDATE trials SET state = 'queued', queue_rank = 0, updated_ms = ? "
        "WHERE sweep_id = ? AND state = 'cancelled'";
    ASSIGN_OR_RETURN(Statement * r, db_->Cached(kRequeueCancelledSql));
    r->BindInt64(1, now_ms);
    r->BindInt64(2, sweep_id);
    RETURN_IF_ERROR(r->Run());
    out.requeued = db_->Changes();
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kUpdateSweepSpecSql));
    s->BindText(1, sweep.description);
    s->BindText(2, sweep.spec_json);
    s->BindInt64(3, sweep.priority);
    s->BindInt64(4, sweep.max_attempts);
    s->BindInt64(5, now_ms);
    s->BindInt64(6, sweep_id);
    RETURN_IF_ERROR(s->Run());
  }
  ASSIGN_OR_RETURN(out.sweep, GetSweepLocked(sweep.name));
  return absl::OkStatus();
}

absl::StatusOr<SweepRecord> ResultsStore::GetSweep(const std::string& name) {
  absl::MutexLock lock(&mu_);
  return GetSweepLocked(name);
}

absl::StatusOr<std::vector<SweepRecord>> ResultsStore::ListSweeps() {
  absl::MutexLock lock(&mu_);
  std::vector<SweepRecord> out;
  {
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kListSweepsSql));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      out.push_back(ReadSweep(*s));
    }
  }
  for (SweepRecord& r : out) RETURN_IF_ERROR(FillCounts(&r));
  return out;
}

absl::StatusOr<int64_t> ResultsStore::CancelSweep(const std::string& name,
                                                  int64_t now_ms,
                                                  const Actor& actor) {
  int64_t cancelled = 0;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(int64_t id, OwnedSweepIdLocked(name, actor, "cancel"));
    return CancelSweepLocked(id, now_ms, &cancelled);
  }));
  return cancelled;
}

absl::Status ResultsStore::CancelSweepLocked(int64_t sweep_id, int64_t now_ms,
                                             int64_t* cancelled) {
  ASSIGN_OR_RETURN(Statement * a, db_->Cached(kCancelAttemptsSql));
  a->BindInt64(1, now_ms);
  a->BindInt64(2, sweep_id);
  RETURN_IF_ERROR(a->Run());
  ASSIGN_OR_RETURN(Statement * t, db_->Cached(kCancelTrialsSql));
  t->BindInt64(1, now_ms);
  t->BindInt64(2, sweep_id);
  RETURN_IF_ERROR(t->Run());
  *cancelled = db_->Changes();
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kCancelSweepSql));
  s->BindInt64(1, now_ms);
  s->BindInt64(2, sweep_id);
  return s->Run();
}

absl::Status ResultsStore::SetPaused(const std::string& name, bool paused,
                                     int64_t now_ms, const Actor& actor) {
  return Write([&]() -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(int64_t id, OwnedSweepIdLocked(
                                     name, actor, paused ? "pause" : "resume"));
    constexpr char kPauseSql[] =
        "UPDATE sweeps SET paused = ?, updated_ms = ? WHERE sweep_id = ?";
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kPauseSql));
    s->BindInt64(1, paused ? 1 : 0);
    s->BindInt64(2, now_ms);
    s->BindInt64(3, id);
    return s->Run();
  });
}

absl::StatusOr<int64_t> ResultsStore::RetryFailed(const std::string& name,
                                                  int64_t now_ms,
                                                  const Actor& actor) {
  int64_t n = 0;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(int64_t sweep_id,
                     OwnedSweepIdLocked(name, actor, "retry"));
    constexpr char kRetrySql[] =
        "UPDATE trials SET state = 'queued', failures = 0, queue_rank = 0, "
        "updated_ms = ? "
        "WHERE sweep_id = ? AND state = 'failed'";
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kRetrySql));
    s->BindInt64(1, now_ms);
    s->BindInt64(2, sweep_id);
    RETURN_IF_ERROR(s->Run());
    n = db_->Changes();
    return absl::OkStatus();
  }));
  return n;
}

absl::Status ResultsStore::RegisterWorker(const std::string& worker_id,
                                          const std::string& name, int slots,
                                          const std::string& provenance_json,
                                          const WorkerIdentity& identity,
                                          int64_t now_ms) {
  return Write([&]() -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kInsertWorkerSql));
    s->BindText(1, worker_id);
    s->BindText(2, name);
    s->BindInt64(3, slots);
    s->BindText(4, provenance_json);
    s->BindInt64(5, now_ms);
    s->BindInt64(6, now_ms);
    s->BindText(7, identity.key_sha256);
    s->BindText(8, identity.principal);
    return s->Run();
  });
}

absl::StatusOr<ResultsStore::WorkerIdentity> ResultsStore::GetWorkerIdentity(
    const std::string& worker_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kWorkerIdentitySql));
  s->BindText(1, worker_id);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row) {
    return absl::NotFoundError(absl::StrCat(
        "worker_id: no worker '", worker_id, "' is registered"));
  }
  WorkerIdentity w{s->ColumnText(0), s->ColumnText(1)};
  s->Reset();
  return w;
}

absl::StatusOr<LeaseAvailability> ResultsStore::LeaseNext(
    const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
    LeaseRecord* lease) {
  std::vector<LeaseRecord> leases;
  ASSIGN_OR_RETURN(LeaseAvailability a,
                   LeaseBatch(worker_id, now_ms, lease_ms, 1, &leases));
  if (a == LeaseAvailability::kLeased) *lease = std::move(leases[0]);
  return a;
}

absl::StatusOr<LeaseAvailability> ResultsStore::LeaseBatch(
    const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
    int max_trials, std::vector<LeaseRecord>* leases) {
  LeaseAvailability a = LeaseAvailability::kNoWork;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(
        a, LeaseBatchLocked(worker_id, now_ms, lease_ms, max_trials, leases));
    return absl::OkStatus();
  }));
  return a;
}

absl::StatusOr<LeaseAvailability> ResultsStore::LeaseBatchLocked(
    const std::string& worker_id, int64_t now_ms, int64_t lease_ms,
    int max_trials, std::vector<LeaseRecord>* leases) {
  leases->clear();
  // Expired leases are requeued by the server's reaper; when nothing is
  // queued we also reap here, so a lost trial never waits for the reaper.
  int64_t sweep_id = 0;
  std::string sweep_name, parameterization;
  for (int pass = 0; pass < 2 && leases->empty(); ++pass) {
    if (pass == 1) {
      ASSIGN_OR_RETURN(int64_t reaped, ExpireLeasesLocked(now_ms));
      if (reaped == 0) break;
    }
    ASSIGN_OR_RETURN(Statement * pick, db_->Cached(kNextSweepSql));
    ASSIGN_OR_RETURN(bool have_sweep, pick->Step());
    if (!have_sweep) continue;
    sweep_id = pick->ColumnInt64(0);
    sweep_name = pick->ColumnText(1);
    pick->Reset();  // done with it: no read cursor left open
    ASSIGN_OR_RETURN(Statement * next, db_->Cached(kNextQueuedSql));
    next->BindInt64(1, sweep_id);
    ASSIGN_OR_RETURN(bool found, next->Step());
    if (!found) continue;
    LeaseRecord l;
    l.trial_id = next->ColumnText(0);
    l.attempt = static_cast<int>(next->ColumnInt64(1)) + 1;
    l.config_json = next->ColumnText(2);
    l.checkpoint = next->ColumnBlob(3);
    l.checkpoint_step = l.checkpoint.empty() ? 0 : next->ColumnInt64(4);
    parameterization = next->ColumnText(5);
    l.config_pb = BinaryConfig(*next, 6);
    next->Reset();
    leases->push_back(std::move(l));
  }
  if (leases->empty()) {
    ASSIGN_OR_RETURN(Statement * any, db_->Cached(kAnyRunningSql));
    ASSIGN_OR_RETURN(bool r, any->Step());
    const bool running = r && any->ColumnInt64(0) != 0;
    return running ? LeaseAvailability::kNoWorkNow : LeaseAvailability::kNoWork;
  }
  if (max_trials > 1) {
    constexpr char kCompanionsSql[] =
        "SELECT t.trial_id, t.attempts, t.config_json, t.checkpoint, "
        "t.checkpoint_step, t.axes_pb, g.training_pb "
        "FROM trials t LEFT JOIN trainings g ON g.training_id = t.training_id "
        "WHERE t.sweep_id = ? AND t.state = 'queued' AND "
        "t.parameterization = ? AND t.trial_id != ? "
        "ORDER BY t.queue_rank, t.ordinal LIMIT ?";
    ASSIGN_OR_RETURN(Statement * more, db_->Cached(kCompanionsSql));
    more->BindInt64(1, sweep_id);
    more->BindText(2, parameterization);
    more->BindText(3, (*leases)[0].trial_id);
    more->BindInt64(4, max_trials - 1);
    while (true) {
      ASSIGN_OR_RETURN(bool row, more->Step());
      if (!row) break;
      LeaseRecord l;
      l.trial_id = more->ColumnText(0);
      l.attempt = static_cast<int>(more->ColumnInt64(1)) + 1;
      l.config_json = more->ColumnText(2);
      l.checkpoint = more->ColumnBlob(3);
      l.checkpoint_step = l.checkpoint.empty() ? 0 : more->ColumnInt64(4);
      l.config_pb = BinaryConfig(*more, 5);
      leases->push_back(std::move(l));
    }
  }
  for (LeaseRecord& l : *leases) {
    l.sweep_name = sweep_name;
    l.expires_ms = now_ms + lease_ms;
    ASSIGN_OR_RETURN(Statement * start, db_->Cached(kStartLeaseSql));
    start->BindText(1, worker_id);
    start->BindInt64(2, l.expires_ms);
    start->BindInt64(3, now_ms);
    start->BindText(4, l.trial_id);
    RETURN_IF_ERROR(start->Run());
    ASSIGN_OR_RETURN(Statement * att, db_->Cached(kInsertAttemptSql));
    att->BindText(1, l.trial_id);
    att->BindInt64(2, l.attempt);
    att->BindText(3, worker_id);
    att->BindInt64(4, now_ms);
    att->BindInt64(5, l.checkpoint_step);
    RETURN_IF_ERROR(att->Run());
  }
  return LeaseAvailability::kLeased;
}

absl::Status ResultsStore::CheckLease(const std::string& worker_id,
                                      const std::string& trial_id, int attempt,
                                      int64_t now_ms) {
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kLeaseStateSql));
  s->BindText(1, trial_id);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
  const std::string state = s->ColumnText(0);
  const int current = static_cast<int>(s->ColumnInt64(1));
  const int64_t expires = s->ColumnIsNull(2) ? 0 : s->ColumnInt64(2);
  const std::string holder = s->ColumnText(3);
  s->Reset();
  if (state == kRunning && attempt == current && holder != worker_id) {
    return absl::PermissionDeniedError(
        absl::StrCat("trial ", trial_id, ": attempt ", attempt,
                     " is leased to another worker, not to ", worker_id));
  }
  if (attempt != current) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", trial_id, ": attempt ", attempt,
                     " is superseded by attempt ", current));
  }
  if (state != kRunning) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", trial_id, ": attempt ", attempt,
                     " holds no lease (trial is ", state, ")"));
  }
  if (expires < now_ms) {
    return absl::FailedPreconditionError(
        absl::StrCat("trial ", trial_id, ": lease of attempt ", attempt,
                     " expired ", now_ms - expires, " ms ago"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ResultsStore::Heartbeat(const std::string& worker_id,
                                             const std::string& trial_id,
                                             int attempt, int64_t step,
                                             int64_t now_ms, int64_t lease_ms,
                                             int64_t* expires_ms) {
  bool renewed = false;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    renewed = false;
    absl::Status lease = CheckLease(worker_id, trial_id, attempt, now_ms);
    if (absl::IsFailedPrecondition(lease) || absl::IsNotFound(lease))
      return absl::OkStatus();
    RETURN_IF_ERROR(lease);
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kRenewSql));
    *expires_ms = now_ms + lease_ms;
    s->BindInt64(1, *expires_ms);
    s->BindInt64(2, step);
    s->BindInt64(3, now_ms);
    s->BindText(4, trial_id);
    RETURN_IF_ERROR(s->Run());
    renewed = true;
    return absl::OkStatus();
  }));
  return renewed;
}

absl::Status ResultsStore::InsertMetrics(
    const std::string& trial_id, int attempt,
    const std::vector<MetricRecord>& points) {
  for (size_t begin = 0; begin < points.size(); begin += kRowsPerInsert) {
    const int rows = static_cast<int>(
        std::min<size_t>(kRowsPerInsert, points.size() - begin));
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(UpsertMetricsSql(rows)));
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
  return absl::OkStatus();
}

absl::Status ResultsStore::AddMetrics(const std::string& worker_id,
                                      const std::string& trial_id, int attempt,
                                      const std::vector<MetricRecord>& points,
                                      int64_t now_ms) {
  return Write([&]() -> absl::Status {
    mu_.AssertHeld();
    return AddMetricsLocked(worker_id, trial_id, attempt, points, now_ms);
  });
}

absl::Status ResultsStore::AddMetricsLocked(
    const std::string& worker_id, const std::string& trial_id, int attempt,
    const std::vector<MetricRecord>& points, int64_t now_ms) {
  RETURN_IF_ERROR(CheckLease(worker_id, trial_id, attempt, now_ms));
  RETURN_IF_ERROR(InsertMetrics(trial_id, attempt, points));
  int64_t max_step = 0;
  for (const MetricRecord& p : points) max_step = std::max(max_step, p.step);
  constexpr char kStepSql[] =
      "UPDATE trials SET last_step = MAX(last_step, ?), updated_ms = ? WHERE "
      "trial_id = ?";
  ASSIGN_OR_RETURN(Statement * u, db_->Cached(kStepSql));
  u->BindInt64(1, max_step);
  u->BindInt64(2, now_ms);
  u->BindText(3, trial_id);
  return u->Run();
}

absl::Status ResultsStore::CompleteTrial(const Completion& c, int64_t now_ms) {
  return Write([&]() -> absl::Status {
    mu_.AssertHeld();
    return CompleteTrialLocked(c, now_ms);
  });
}

absl::StatusOr<LeaseAvailability> ResultsStore::CompleteAndLease(
    absl::Span<const Completion> completions, const std::string& worker_id,
    int64_t now_ms, int64_t lease_ms, int max_trials,
    std::vector<LeaseRecord>* leases) {
  LeaseAvailability a = LeaseAvailability::kNoWork;
  leases->clear();
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    for (const Completion& c : completions)
      RETURN_IF_ERROR(CompleteTrialLocked(c, now_ms));
    if (max_trials <= 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(
        a, LeaseBatchLocked(worker_id, now_ms, lease_ms, max_trials, leases));
    return absl::OkStatus();
  }));
  return a;
}

absl::Status ResultsStore::CompleteTrialLocked(const Completion& c,
                                               int64_t now_ms) {
  RETURN_IF_ERROR(CheckLease(c.worker_id, c.trial_id, c.attempt, now_ms));
  RETURN_IF_ERROR(InsertMetrics(c.trial_id, c.attempt, c.final_points));
  for (auto it = c.results.begin(); it != c.results.end();) {
    const int rows = static_cast<int>(
        std::min<size_t>(kRowsPerInsert, std::distance(it, c.results.end())));
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(UpsertResultsSql(rows)));
    s->BindText(1, c.trial_id);
    s->BindInt64(2, c.attempt);
    for (int i = 0; i < rows; ++i, ++it) {
      s->BindText(2 * i + 3, it->first);
      s->BindDouble(2 * i + 4, it->second);
    }
    RETURN_IF_ERROR(s->Run());
  }
  {
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kUpsertArtifactSql));
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
  const char* state = c.diverged ? kDiverged : kDone;
  ASSIGN_OR_RETURN(Statement * t, db_->Cached(kEndTrialSql));
  t->BindText(1, state);
  t->BindInt64(2, c.steps);
  t->BindInt64(3, now_ms);
  t->BindText(4, c.trial_id);
  RETURN_IF_ERROR(t->Run());
  ASSIGN_OR_RETURN(Statement * a, db_->Cached(kEndAttemptSql));
  a->BindText(1, state);
  a->BindInt64(2, now_ms);
  a->BindText(3, "");
  a->BindText(4, c.provenance_json);
  a->BindText(5, c.trial_id);
  a->BindInt64(6, c.attempt);
  return a->Run();
}

namespace {

// Shared by FailTrial and ExpireLeases: ends `attempt` with attempt_state and
// puts the trial back in the queue or fails it.
absl::StatusOr<std::string> EndAttemptAndRequeue(
    Database* db, const std::string& trial_id, int attempt,
    const char* attempt_state, const std::string& reason, bool preempted,
    const std::string& checkpoint, int64_t checkpoint_step, int64_t now_ms,
    bool permanent = false) {
  ASSIGN_OR_RETURN(Statement * f, db->Cached(kFailuresSql));
  f->BindText(1, trial_id);
  ASSIGN_OR_RETURN(bool row, f->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
  const int failures = static_cast<int>(f->ColumnInt64(0));
  const int max_attempts = static_cast<int>(f->ColumnInt64(1));
  f->Reset();
  std::string new_state;
  int add_failure = 0;
  int rank = 0;
  if (preempted) {
    new_state = kQueued;
    rank = -1;  // front of the queue
  } else {
    add_failure = 1;
    new_state = permanent || failures + 1 >= max_attempts ? kFailed : kQueued;
  }
  ASSIGN_OR_RETURN(Statement * q, db->Cached(kRequeueSql));
  q->BindText(1, new_state);
  q->BindInt64(2, add_failure);
  q->BindInt64(3, rank);
  if (checkpoint.empty()) {
    q->BindNull(4);
  } else {
    q->BindBlob(4, checkpoint);
  }
  q->BindInt64(5, checkpoint.empty() ? 0 : checkpoint_step);
  q->BindInt64(6, now_ms);
  q->BindText(7, trial_id);
  RETURN_IF_ERROR(q->Run());
  ASSIGN_OR_RETURN(Statement * a, db->Cached(kEndAttemptKeepProvenanceSql));
  a->BindText(1, attempt_state);
  a->BindInt64(2, now_ms);
  a->BindText(3, reason);
  a->BindText(4, trial_id);
  a->BindInt64(5, attempt);
  RETURN_IF_ERROR(a->Run());
  return new_state;
}

}  // namespace

absl::StatusOr<std::string> ResultsStore::FailTrial(
    const std::string& worker_id, const std::string& trial_id, int attempt,
    const std::string& reason, bool preempted, const std::string& checkpoint,
    int64_t checkpoint_step, int64_t now_ms, bool permanent) {
  std::string state;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    RETURN_IF_ERROR(CheckLease(worker_id, trial_id, attempt, now_ms));
    ASSIGN_OR_RETURN(
        state, EndAttemptAndRequeue(db_.get(), trial_id, attempt,
                                    preempted ? kPreempted : kFailed, reason,
                                    preempted, checkpoint, checkpoint_step,
                                    now_ms, permanent));
    return absl::OkStatus();
  }));
  return state;
}

absl::StatusOr<int64_t> ResultsStore::ExpireLeases(int64_t now_ms) {
  int64_t n = 0;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    ASSIGN_OR_RETURN(n, ExpireLeasesLocked(now_ms));
    return absl::OkStatus();
  }));
  return n;
}

absl::StatusOr<int64_t> ResultsStore::ExpireLeasesLocked(int64_t now_ms) {
  std::vector<std::pair<std::string, int>> expired;
  {
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(kExpiredSql));
    s->BindInt64(1, now_ms);
    while (true) {
      ASSIGN_OR_RETURN(bool row, s->Step());
      if (!row) break;
      expired.emplace_back(s->ColumnText(0),
                           static_cast<int>(s->ColumnInt64(1)));
    }
  }
  for (const auto& [trial_id, attempt] : expired) {
    RETURN_IF_ERROR(EndAttemptAndRequeue(db_.get(), trial_id, attempt, "lost",
                                         "lease expired without heartbeat",
                                         false, "", 0, now_ms)
                        .status());
  }
  return static_cast<int64_t>(expired.size());
}

absl::StatusOr<std::vector<TrialRecord>> ResultsStore::ListTrials(
    const std::string& sweep_name, const std::string& state,
    int64_t after_ordinal, int limit) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SweepRecord sweep, GetSweepLocked(sweep_name));
  static const std::string sql = absl::StrCat(
      kTrialColumns,
      "WHERE t.sweep_id = ? AND (? = '' OR t.state = ?) AND t.ordinal > ? ",
      "ORDER BY t.ordinal LIMIT ?");
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(sql.c_str()));
  s->BindInt64(1, sweep.sweep_id);
  s->BindText(2, state);
  s->BindText(3, state);
  s->BindInt64(4, after_ordinal);
  s->BindInt64(5, limit);
  std::vector<TrialRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(ReadTrial(*s));
  }
  return out;
}

absl::StatusOr<std::vector<TrialRecord>> ResultsStore::TrialsUpdatedSince(
    const std::string& sweep_name, int64_t since_ms) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SweepRecord sweep, GetSweepLocked(sweep_name));
  static const std::string sql = absl::StrCat(
      kTrialColumns,
      "WHERE t.sweep_id = ? AND t.updated_ms >= ? ORDER BY t.ordinal");
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(sql.c_str()));
  s->BindInt64(1, sweep.sweep_id);
  s->BindInt64(2, since_ms);
  std::vector<TrialRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(ReadTrial(*s));
  }
  return out;
}

absl::StatusOr<TrialRecord> ResultsStore::GetTrial(
    const std::string& trial_id) {
  absl::MutexLock lock(&mu_);
  static const std::string sql =
      absl::StrCat(kTrialColumns, "WHERE t.trial_id = ?");
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(sql.c_str()));
  s->BindText(1, trial_id);
  ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row)
    return absl::NotFoundError(absl::StrCat("no trial '", trial_id, "'"));
  TrialRecord t = ReadTrial(*s);
  s->Reset();
  {
    ASSIGN_OR_RETURN(Statement * a, db_->Cached(kAttemptsOfTrialSql));
    a->BindText(1, trial_id);
    while (true) {
      ASSIGN_OR_RETURN(bool r, a->Step());
      if (!r) break;
      t.attempt_history.push_back(
          AttemptRecord{static_cast<int>(a->ColumnInt64(0)), a->ColumnText(1),
                        a->ColumnText(2), a->ColumnInt64(3), a->ColumnInt64(4),
                        a->ColumnText(5), a->ColumnText(6)});
    }
  }
  {
    ASSIGN_OR_RETURN(Statement * r, db_->Cached(kResultsOfTrialSql));
    r->BindText(1, trial_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row2, r->Step());
      if (!row2) break;
      t.results[r->ColumnText(0)] = r->ColumnDouble(1);
    }
  }
  {
    ASSIGN_OR_RETURN(Statement * r, db_->Cached(kArtifactsOfTrialSql));
    r->BindText(1, trial_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row2, r->Step());
      if (!row2) break;
      t.artifacts.push_back(
          ArtifactRecord{r->ColumnText(0), r->ColumnText(1), r->ColumnText(2)});
    }
  }
  return t;
}

absl::StatusOr<std::vector<TrialRecord>> ResultsStore::TrialsWithResults(
    const std::string& sweep_name, const std::vector<std::string>& metrics) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SweepRecord sweep, GetSweepLocked(sweep_name));
  static const std::string trials_sql =
      absl::StrCat(kTrialColumns, "WHERE t.sweep_id = ? ORDER BY t.ordinal");
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(trials_sql.c_str()));
  s->BindInt64(1, sweep.sweep_id);
  std::vector<TrialRecord> out;
  std::map<std::string, size_t> index;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    index[s->ColumnText(0)] = out.size();
    out.push_back(ReadTrial(*s));
  }
  constexpr char kSweepResultsSql[] =
      "SELECT r.trial_id, r.name, r.value FROM results r JOIN trials t USING "
      "(trial_id) "
      "WHERE t.sweep_id = ?";
  ASSIGN_OR_RETURN(Statement * r, db_->Cached(kSweepResultsSql));
  r->BindInt64(1, sweep.sweep_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, r->Step());
    if (!row) break;
    const std::string name = r->ColumnText(1);
    if (!metrics.empty() &&
        std::find(metrics.begin(), metrics.end(), name) == metrics.end())
      continue;
    out[index[r->ColumnText(0)]].results[name] = r->ColumnDouble(2);
  }
  return out;
}

absl::StatusOr<std::vector<MetricRecord>> ResultsStore::Metrics(
    const std::string& trial_id) {
  absl::MutexLock lock(&mu_);
  // The trial's curve: the last attempt's points, plus each earlier
  // attempt's points up to where every later attempt resumed from its
  // checkpoint. An attempt followed by a restart from step 0 contributes none.
  constexpr char kStartStepsSql[] =
      "SELECT attempt, start_step FROM attempts WHERE trial_id = ? ORDER BY "
      "attempt DESC";
  std::map<int64_t, int64_t> cutoff;  // attempt -> last step kept (-1: none)
  {
    ASSIGN_OR_RETURN(Statement * a, db_->Cached(kStartStepsSql));
    a->BindText(1, trial_id);
    int64_t limit = std::numeric_limits<int64_t>::max();
    while (true) {
      ASSIGN_OR_RETURN(bool row, a->Step());
      if (!row) break;
      cutoff[a->ColumnInt64(0)] = limit;
      const int64_t start = a->ColumnInt64(1);
      limit = start > 0 ? std::min(limit, start) : -1;
    }
  }
  constexpr char kAllMetricsSql[] =
      "SELECT attempt, step, name, value FROM metrics WHERE trial_id = ? ORDER "
      "BY name, step, attempt";
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kAllMetricsSql));
  s->BindText(1, trial_id);
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

absl::StatusOr<bool> ResultsStore::AllIdle() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kAnyActiveSql));
  ASSIGN_OR_RETURN(bool row, s->Step());
  return !(row && s->ColumnInt64(0) != 0);
}

absl::StatusOr<bool> ResultsStore::IntegrityOk() {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto s, db_->Prepare("PRAGMA integrity_check"));
  ASSIGN_OR_RETURN(bool row, s->Step());
  return row && s->ColumnText(0) == "ok";
}

}  // namespace qkov::storage
