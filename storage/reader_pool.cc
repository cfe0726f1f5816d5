#include "storage/reader_pool.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::storage {

// One pooled connection and the deadline of the read that holds it. The
// deadline is read by the progress handler on the reading thread and
// written by Acquire before the connection is lent, so it needs no lock;
// `stopped` is the pool's flag.
class ReaderPool::Connection {
 public:
  Connection(std::unique_ptr<Database> db, const std::atomic<bool>* stopped)
      : db_(std::move(db)), stopped_(stopped) {}
  Database* db() const { return db_.get(); }
  void set_deadline(absl::Time t) { deadline_ = t; }
  bool Expired() const {
    return stopped_->load(std::memory_order_relaxed) || absl::Now() > deadline_;
  }

 private:
  std::unique_ptr<Database> db_;
  const std::atomic<bool>* stopped_;
  absl::Time deadline_ = absl::InfiniteFuture();
};

ReaderPool::ReaderPool(std::string name) : name_(std::move(name)) {}

absl::StatusOr<std::unique_ptr<ReaderPool>> ReaderPool::Open(
    const std::string& path, const Database::Options& options, int size,
    std::string name) {
  std::unique_ptr<ReaderPool> pool(new ReaderPool(std::move(name)));
  Database::Options read = options;
  read.read_only = true;
  for (int i = 0; i < std::max(size, 1); ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, read));
    auto c = std::make_unique<Connection>(std::move(db), &pool->stopped_);
    sqlite3_progress_handler(c->db()->raw(), kProgressOps,
                             &ReaderPool::OnProgress, c.get());
    pool->all_.push_back(std::move(c));
  }
  absl::MutexLock lock(&pool->mu_);
  for (auto& c : pool->all_) pool->free_.push_back(c.get());
  return pool;
}

ReaderPool::~ReaderPool() {
  Stop();
  // Every Lease must be gone by now (the store outlives its readers).
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](ReaderPool* p) ABSL_SHARED_LOCKS_REQUIRED(p->mu_) {
        return p->free_.size() == p->all_.size();
      },
      this));
}

int ReaderPool::OnProgress(void* connection) {
  return static_cast<Connection*>(connection)->Expired() ? 1 : 0;
}

absl::StatusOr<ReaderPool::Lease> ReaderPool::Acquire(absl::Time deadline) {
  if (stopped_.load())
    return absl::CancelledError(
        absl::StrCat(name_, ": the server is stopping; no more reads"));
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !free_.empty() || stopped_.load();
  };
  if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline))
    return absl::DeadlineExceededError(absl::StrCat(
        name_, ": every connection stayed busy until the read's deadline"));
  if (stopped_.load())
    return absl::CancelledError(
        absl::StrCat(name_, ": the server is stopping; no more reads"));
  Connection* c = free_.back();
  free_.pop_back();
  c->set_deadline(deadline);
  return Lease(this, c);
}

void ReaderPool::Release(Connection* c) {
  c->db()->ResetBusyStatements();
  // A read that left its transaction open would pin its snapshot for every
  // later read on this connection.
  if (!sqlite3_get_autocommit(c->db()->raw()))
    c->db()->Execute("ROLLBACK").IgnoreError();
  c->set_deadline(absl::InfiniteFuture());
  absl::MutexLock lock(&mu_);
  free_.push_back(c);
}

void ReaderPool::Stop() {
  stopped_.store(true);
  absl::MutexLock lock(&mu_);  // wakes the waiting Acquires
}

std::vector<Database::StatementTime> ReaderPool::StatementProfile() const {
  absl::flat_hash_map<std::string, Database::StatementTime> sum;
  for (const auto& c : all_) {
    for (const Database::StatementTime& t : c->db()->StatementProfile()) {
      Database::StatementTime& s = sum[t.sql];
      s.sql = t.sql;
      s.runs += t.runs;
      s.nanos += t.nanos;
    }
  }
  std::vector<Database::StatementTime> out;
  for (auto& [sql, t] : sum) out.push_back(std::move(t));
  std::sort(out.begin(), out.end(),
            [](const Database::StatementTime& a,
               const Database::StatementTime& b) { return a.nanos > b.nanos; });
  return out;
}

ReaderPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), c_(other.c_) {
  other.c_ = nullptr;
}

ReaderPool::Lease::~Lease() {
  if (c_ != nullptr) pool_->Release(c_);
}

Database* ReaderPool::Lease::db() const { return c_->db(); }

}  // namespace qkov::storage
