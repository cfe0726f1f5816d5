#include "storage/results_store.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/task_info.h"
#include "storage/migrations.h"

namespace qkov::storage {
namespace {

// Read connections: researchers' and dashboards' reads share kClientReaders
// (more than one, so a long export does not hold a watch back); a worker's
// call has kWorkerReaders of its own. Each is a few hundred KiB of page
// cache at most.
constexpr int kClientReaders = 4;
constexpr int kWorkerReaders = 2;

// The task of a config's `training.task` as its JSON holds it: config.proto's
// name ("TASK_FIXED_ATTENTION" -> fixed_attention) or a registered task's
// number ("1000" -> its name); "unknown" for anything else.
std::string TaskNameInConfig(const std::string& value) {
  if (absl::StartsWith(value, "TASK_"))
    return absl::AsciiStrToLower(value.substr(5));
  int kind = 0;
  if (absl::SimpleAtoi(value, &kind)) {
    for (const TaskInfo& t : Tasks())
      if (t.kind != 0 && t.kind == kind) return t.name;
  }
  return "unknown";
}

}  // namespace

std::string TrialIdOf(int64_t sweep_id, int64_t ordinal) {
  return absl::StrCat(sweep_id, "-", absl::Dec(ordinal, absl::kZeroPad8));
}

absl::StatusOr<std::unique_ptr<ResultsStore>> ResultsStore::Open(
    const std::string& path, const Database::Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, options));
  RETURN_IF_ERROR(Migrate(db.get()));
  std::unique_ptr<ResultsStore> store(new ResultsStore(std::move(db)));
  ResultsStore* s = store.get();
  ASSIGN_OR_RETURN(s->readers_, ReaderPool::Open(path, options, kClientReaders,
                                                 "the store's client reads"));
  ASSIGN_OR_RETURN(s->worker_readers_,
                   ReaderPool::Open(path, options, kWorkerReaders,
                                    "the store's worker reads"));
  if (!options.read_only) {
    s->checkpointer_ =
        std::make_unique<WalCheckpointer>(path, options, s->db_.get());
  }
  {
    absl::MutexLock lock(&s->mu_);
    ASSIGN_OR_RETURN(Statement * paused,
                     s->db_->Cached("SELECT paused FROM leasing WHERE id = 1"));
    ASSIGN_OR_RETURN(bool row, paused->Step());
    s->leasing_paused_ = row && paused->ColumnInt64(0) != 0;
    paused->Reset();
  }
  s->writes_ = std::make_unique<WriteQueue>(s->db_.get(), &s->mu_, [s] {
    s->mu_.AssertHeld();
    if (s->checkpointer_ != nullptr)
      s->checkpointer_->RewindIfLong(s->db_.get());
  });
  return store;
}

ResultsStore::~ResultsStore() {
  writes_.reset();  // runs what is queued
  checkpointer_.reset();
}

void ResultsStore::StopReads() { readers_->Stop(); }

std::vector<Database::StatementTime> ResultsStore::ReaderStatementProfile() {
  std::vector<Database::StatementTime> out = readers_->StatementProfile();
  for (Database::StatementTime& t : worker_readers_->StatementProfile())
    out.push_back(std::move(t));
  return out;
}

absl::Status ResultsStore::Write(absl::FunctionRef<absl::Status()> op,
                                 bool alone) {
  return writes_->Write(op, alone);
}

const char* TrialEventName(TrialEvent::Kind kind) {
  switch (kind) {
    case TrialEvent::Kind::kLeased:
      return "leased";
    case TrialEvent::Kind::kExpired:
      return "expired";
    case TrialEvent::Kind::kCompleted:
      return "completed";
    case TrialEvent::Kind::kFailed:
      return "failed";
    case TrialEvent::Kind::kPreempted:
      return "preempted";
    case TrialEvent::Kind::kStoppedEarly:
      return "stopped_early";
  }
  return "unknown";
}

void ResultsStore::SetEventSink(TrialEventSink sink) {
  event_sink_ = std::move(sink);
}

absl::Status ResultsStore::WriteWithEvents(
    absl::FunctionRef<absl::Status()> op) {
  std::vector<TrialEvent> events;
  RETURN_IF_ERROR(Write([&]() -> absl::Status {
    mu_.AssertHeld();
    // A write may run twice (WriteQueue): each run starts afresh.
    events_.clear();
    absl::Status s = op();
    events.swap(events_);
    events_.clear();
    return s;
  }));
  if (event_sink_ && !events.empty()) event_sink_(events);
  return absl::OkStatus();
}

absl::Status ResultsStore::RecordEndLocked(
    TrialEvent::Kind kind, const std::string& trial_id, int attempt,
    const std::string& worker_id, const std::string& state,
    const std::string& reason, int64_t now_ms) {
  if (!event_sink_) return absl::OkStatus();
  TrialEvent e;
  e.kind = kind;
  e.trial_id = trial_id;
  e.attempt = attempt;
  e.worker_id = worker_id;
  e.state = state;
  e.reason = reason;
  // The task from the trial's JSON config: "TASK_SYNTHETIC" -> synthetic,
  // a registered task's number -> its name (common/task_info.h); two
  // primary-key lookups.
  constexpr char kAttemptFactsSql[] =
      "SELECT a.started_ms, json_extract(t.config_json, '$.training.task') "
      "FROM attempts a JOIN trials t USING (trial_id) "
      "WHERE a.trial_id = ? AND a.attempt = ?";
  ASSIGN_OR_RETURN(Statement * s, db_->Cached(kAttemptFactsSql));
  s->BindText(1, trial_id);
  s->BindInt64(2, attempt);
  ASSIGN_OR_RETURN(bool row, s->Step());
  e.task = "unknown";
  if (row) {
    e.duration_ms = std::max<int64_t>(0, now_ms - s->ColumnInt64(0));
    if (!s->ColumnIsNull(1)) e.task = TaskNameInConfig(s->ColumnText(1));
  }
  s->Reset();
  events_.push_back(std::move(e));
  return absl::OkStatus();
}

std::vector<Database::StatementTime> ResultsStore::WriterStatementProfile() {
  absl::MutexLock lock(&mu_);
  return db_->StatementProfile();
}

ResultsStore::WriteStats ResultsStore::GetWriteStats() {
  const WriteQueue::Stats q = writes_->stats();
  WriteStats out;
  out.writes = q.writes;
  out.commits = q.commits;
  out.busy_ns = q.busy_ns;
  out.replays = q.replays;
  out.group_time = q.group_time;
  out.checkpoints = checkpointer_ ? checkpointer_->checkpoints() : 0;
  return out;
}

void ResultsStore::SetBeforeGroupHookForTesting(std::function<void()> hook) {
  writes_->SetBeforeGroupHookForTesting(std::move(hook));
}

size_t ResultsStore::QueuedWritesForTesting() {
  return writes_->QueuedForTesting();
}

absl::Status ResultsStore::WriteForTesting(
    std::function<absl::Status(Database*)> op) {
  return Write([&]() -> absl::Status {
    mu_.AssertHeld();
    return op(db_.get());
  });
}

absl::StatusOr<bool> ResultsStore::IntegrityOk() {
  ASSIGN_OR_RETURN(ReaderPool::Lease r, readers_->Acquire());
  ASSIGN_OR_RETURN(auto s, r.db()->Prepare("PRAGMA integrity_check"));
  ASSIGN_OR_RETURN(bool row, s->Step());
  return row && s->ColumnText(0) == "ok";
}

}  // namespace qkov::storage
