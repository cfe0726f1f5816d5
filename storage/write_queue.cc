#include "storage/write_queue.h"

#include <pthread.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace qkov::storage {

// A group holds at most this many writes, so that a burst cannot keep one
// transaction (and its waiting callers) open without bound.
constexpr size_t kMaxGroup = 256;

struct WriteQueue::Pending {
  Pending(absl::FunctionRef<absl::Status()> f, bool a) : op(f), alone(a) {}
  absl::FunctionRef<absl::Status()> op;
  const bool alone;
  absl::Status status;
  bool done = false;  // guarded by mu_
  absl::CondVar cv;
};

WriteQueue::WriteQueue(Database* db, absl::Mutex* db_mu,
                       std::function<void()> after_commit)
    : db_(db), db_mu_(db_mu), after_commit_(std::move(after_commit)) {
  thread_ = std::thread([this] { Loop(); });
}

WriteQueue::~WriteQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status WriteQueue::Write(absl::FunctionRef<absl::Status()> op,
                               bool alone) {
  Pending w(op, alone);
  absl::MutexLock lock(&mu_);
  queue_.push_back(&w);
  if (idle_) cv_.Signal();
  while (!w.done) w.cv.Wait(&mu_);
  return w.status;
}

void WriteQueue::Loop() {
  pthread_setname_np(pthread_self(), "qkov-writer");  // for top and perf
  while (true) {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&mu_);
      idle_ = true;
      while (queue_.empty() && !stopping_) cv_.Wait(&mu_);
      idle_ = false;
      if (queue_.empty()) return;  // stopping, and nothing left to write
      hook = before_group_hook_;
    }
    if (hook) hook();
    // The writes queued so far form the group, up to the next one that must
    // run alone. Writes that arrive meanwhile queue behind it and form the
    // next one.
    std::vector<Pending*> group;
    {
      absl::MutexLock lock(&mu_);
      group.push_back(queue_.front());
      if (!group[0]->alone) {
        for (auto it = queue_.begin() + 1;
             it != queue_.end() && !(*it)->alone && group.size() < kMaxGroup;
             ++it) {
          group.push_back(*it);
        }
      }
    }
    {
      absl::MutexLock lock(db_mu_);
      const absl::Time start = absl::Now();
      CommitGroup(group);
      const absl::Duration took = absl::Now() - start;
      const double seconds = absl::ToDoubleSeconds(took);
      int bucket = 0;
      while (bucket < kGroupTimeBuckets - 1 &&
             seconds > kGroupTimeBounds[bucket]) {
        ++bucket;
      }
      absl::MutexLock stats(&stats_mu_);
      stats_.busy_ns += absl::ToInt64Nanoseconds(took);
      ++stats_.group_time[bucket];
    }
    absl::MutexLock lock(&mu_);
    for (Pending* p : group) {
      queue_.pop_front();
      p->done = true;
      p->cv.Signal();
    }
  }
}

void WriteQueue::CommitGroup(const std::vector<Pending*>& group) {
  auto run = [this](const char* sql) -> absl::Status {
    ASSIGN_OR_RETURN(Statement * s, db_->Cached(sql));
    return s->Run();
  };
  auto fail_all = [&](const absl::Status& s) {
    for (Pending* p : group) p->status = s;
  };
  for (const bool savepoints : {false, true}) {
    db_->ResetBusyStatements();  // left by reads between groups
    absl::Status begin = run("BEGIN IMMEDIATE");
    if (!begin.ok()) return fail_all(begin);
    bool undo = false;  // a write failed after changing rows
    for (Pending* p : group) {
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
    absl::MutexLock stats(&stats_mu_);
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
  if (after_commit_) after_commit_();
  absl::MutexLock stats(&stats_mu_);
  stats_.writes += static_cast<int64_t>(group.size());
  ++stats_.commits;
}

WriteQueue::Stats WriteQueue::stats() {
  absl::MutexLock lock(&stats_mu_);
  return stats_;
}

void WriteQueue::SetBeforeGroupHookForTesting(std::function<void()> hook) {
  absl::MutexLock lock(&mu_);
  before_group_hook_ = std::move(hook);
}

size_t WriteQueue::QueuedForTesting() {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

}  // namespace qkov::storage
