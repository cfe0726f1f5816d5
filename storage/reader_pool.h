// ReaderPool: read-only connections to the results database, lent one at a
// time. WAL lets each of them read a snapshot while the writer commits, so
// no read waits for the writer and the writer waits for no read.
//
// ResultsStore keeps two pools (docs/architecture.md, "Reads and the
// writer"): one for the reads of researchers and dashboards (queries,
// watches, exports, event streams) and one, of its own, for the reads that
// a worker's call makes (its identity, early stopping's peers). However
// many reads the first pool is serving, the second is free, so no read-only
// token can delay a report.
//
// Every read runs under a deadline: a read still running past it stops
// with DEADLINE_EXCEEDED (SQLite's progress handler, checked every
// kProgressOps virtual-machine steps). Stop() makes every running read and
// every later Acquire fail with CANCELLED, so that a server stops within a
// moment whatever is reading.
//
// Thread safety: thread-safe. A Lease is used by one thread.
#ifndef QKOV_STORAGE_READER_POOL_H_
#define QKOV_STORAGE_READER_POOL_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/database.h"

namespace qkov::storage {

class ReaderPool {
 public:
  // How long one read may run, unless the caller gives another deadline.
  static constexpr absl::Duration kDefaultDeadline = absl::Seconds(60);
  // The progress handler's period, in SQLite virtual-machine steps (about
  // a millisecond's work).
  static constexpr int kProgressOps = 10000;

  // `size` connections to the database at `path`, opened read-only. `name`
  // names the pool in errors ("client reads", "worker reads").
  static absl::StatusOr<std::unique_ptr<ReaderPool>> Open(
      const std::string& path, const Database::Options& options, int size,
      std::string name);
  ~ReaderPool();

  class Connection;
  // A connection lent to one read. On return, every statement the read left
  // mid-way is reset and a transaction it left open is rolled back (either
  // would hold its snapshot, and the next read would see old data), and the
  // connection goes back to the pool.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    Database* db() const;

   private:
    friend class ReaderPool;
    Lease(ReaderPool* pool, Connection* c) : pool_(pool), c_(c) {}
    ReaderPool* pool_;
    Connection* c_;
  };

  // A free connection, waiting for one while all are lent (up to the
  // deadline: then DEADLINE_EXCEEDED). Reads on it stop at `deadline`.
  // CANCELLED once Stop() was called.
  absl::StatusOr<Lease> Acquire(absl::Time deadline);
  absl::StatusOr<Lease> Acquire() {
    return Acquire(absl::Now() + kDefaultDeadline);
  }

  // Interrupts every running read and refuses every later one (CANCELLED).
  void Stop();

  int size() const { return static_cast<int>(all_.size()); }
  // The statement profile of every connection, summed by SQL text (empty
  // unless opened with Options::profile_statements).
  std::vector<Database::StatementTime> StatementProfile() const;

 private:
  explicit ReaderPool(std::string name);
  void Release(Connection* c);
  static int OnProgress(void* connection);

  const std::string name_;
  std::vector<std::unique_ptr<Connection>> all_;
  std::atomic<bool> stopped_{false};
  mutable absl::Mutex mu_;
  std::vector<Connection*> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_READER_POOL_H_
