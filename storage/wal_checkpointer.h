// WalCheckpointer: keeps the results database's WAL bounded, beside the
// writer. SQLite's automatic checkpoint would run inside the writer's
// commit; instead the writer connection's WAL hook only counts frames and
// wakes a thread of this class, which runs PASSIVE checkpoints on a
// connection of its own each time `checkpoint_pages` frames wait to be
// copied (CheckpointDue). PASSIVE never blocks the writer. SQLite restarts
// the WAL from its start only when a write begins with every frame copied,
// which never happens behind a writer that never pauses, so past
// `rewind_pages` the writer finishes the copy itself after a commit
// (RewindIfLong). docs/schema.md, "The WAL stays bounded".
//
// Thread safety: OnCommit and RewindIfLong run on the writer's thread;
// checkpoints() is thread-safe.
#ifndef QKOV_STORAGE_WAL_CHECKPOINTER_H_
#define QKOV_STORAGE_WAL_CHECKPOINTER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "storage/database.h"

namespace qkov::storage {

// Whether the checkpoint thread should run after a commit that left
// `wal_frames` frames in the WAL, when the last checkpoint had copied the
// first `copied_frames` of them: once `checkpoint_pages` frames wait to be
// copied. (Not at every commit past a WAL size: when the writer never
// pauses, SQLite cannot restart the WAL, and a checkpoint per commit copies
// the same hot pages again and again, each time with two fsyncs.)
bool CheckpointDue(int wal_frames, int copied_frames, int checkpoint_pages);

class WalCheckpointer {
 public:
  // Starts the checkpoint thread ("qkov-checkpoint") with its own connection
  // to `path`, and hooks `writer`'s commits. `writer` must outlive this.
  WalCheckpointer(const std::string& path, const Database::Options& options,
                  Database* writer);
  // Stops the thread; SQLite checkpoints the rest when connections close.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // After a commit on `writer`: past rewind_pages WAL frames, completes the
  // copy so that SQLite reuses the WAL from its start. Only one checkpoint
  // runs at a time (SQLite refuses a second at once): the writer skips its
  // turn while the thread copies, and past twice the threshold waits for it,
  // so the WAL stays bounded under any load.
  void RewindIfLong(Database* writer);

  // Checkpoints run by the thread so far.
  int64_t checkpoints() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int pages);
  void Loop(std::string path, Database::Options options);
  // A PASSIVE checkpoint on `db`; records how far it copied.
  bool PassiveCheckpoint(Database* db) ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mu_);

  const int checkpoint_pages_;
  const int rewind_pages_;
  // Held by whoever runs a checkpoint, the thread or the writer.
  absl::Mutex run_mu_;
  absl::Mutex mu_;
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t checkpoints_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int> wal_pages_{0};  // frames in the WAL at the last commit
  // Frames of the WAL the last checkpoint had copied into the database file.
  std::atomic<int> copied_pages_{0};
  std::thread thread_;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_WAL_CHECKPOINTER_H_
