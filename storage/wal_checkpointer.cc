#include "storage/wal_checkpointer.h"

#include <pthread.h>

#include <algorithm>

namespace qkov::storage {

bool CheckpointDue(int wal_frames, int copied_frames, int checkpoint_pages) {
  // Past the WAL's end: SQLite has restarted it from its start since.
  if (copied_frames > wal_frames) copied_frames = 0;
  return wal_frames - copied_frames >= checkpoint_pages;
}

WalCheckpointer::WalCheckpointer(const std::string& path,
                                 const Database::Options& options,
                                 Database* writer)
    : checkpoint_pages_(options.checkpoint_pages),
      rewind_pages_(options.rewind_pages) {
  sqlite3_wal_hook(writer->raw(), &WalCheckpointer::OnWalCommit, this);
  thread_ = std::thread([this, path, options] { Loop(path, options); });
}

WalCheckpointer::~WalCheckpointer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int WalCheckpointer::OnWalCommit(void* self, sqlite3*, const char*, int pages) {
  auto* c = static_cast<WalCheckpointer*>(self);
  c->wal_pages_.store(pages, std::memory_order_relaxed);
  int copied = c->copied_pages_.load(std::memory_order_relaxed);
  // Past the WAL's end: SQLite has restarted it from its start, and none of
  // it is copied yet (kept if the checkpoint thread has just recorded a copy
  // of this WAL).
  if (copied > pages)
    c->copied_pages_.compare_exchange_strong(copied, 0,
                                             std::memory_order_relaxed);
  if (CheckpointDue(pages, copied, c->checkpoint_pages_)) {
    absl::MutexLock lock(&c->mu_);
    c->wanted_ = true;
  }
  return SQLITE_OK;
}

bool WalCheckpointer::PassiveCheckpoint(Database* db) {
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

void WalCheckpointer::Loop(std::string path, Database::Options options) {
  pthread_setname_np(pthread_self(), "qkov-checkpoint");
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path, options);
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](WalCheckpointer* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu_) {
            return c->wanted_ || c->stopping_;
          },
          this));
      if (stopping_) return;
      wanted_ = false;
    }
    // A failed checkpoint (the file busy, say) is retried at the next commit
    // past the threshold; the WAL only grows meanwhile, nothing is lost.
    bool done = false;
    if (db.ok()) {
      absl::MutexLock run(&run_mu_);
      done = PassiveCheckpoint(db->get());
    }
    if (done) {
      absl::MutexLock lock(&mu_);
      ++checkpoints_;
    }
  }
}

void WalCheckpointer::RewindIfLong(Database* writer) {
  const int wal_pages = wal_pages_.load(std::memory_order_relaxed);
  if (wal_pages < rewind_pages_) return;
  if (wal_pages >= 2 * rewind_pages_) {
    absl::MutexLock run(&run_mu_);
    PassiveCheckpoint(writer);
  } else if (run_mu_.TryLock()) {
    PassiveCheckpoint(writer);
    run_mu_.Unlock();
  }
}

int64_t WalCheckpointer::checkpoints() {
  absl::MutexLock lock(&mu_);
  return checkpoints_;
}

}  // namespace qkov::storage
