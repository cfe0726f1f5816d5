#include "storage/results_store.h"

#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "storage/migrations.h"

namespace qkov::storage {
namespace {

// Read connections: researchers' and dashboards' reads share kClientReaders
// (more than one, so a long export does not hold a watch back); a worker's
// call has kWorkerReaders of its own. Each is a few hundred KiB of page
// cache at most.
constexpr int kClientReaders = 4;
constexpr int kWorkerReaders = 2;

}  // namespace

ResultsStore::ResultsStore(std::unique_ptr<StoreCore> core)
    : core_(std::move(core)),
      sweeps_(core_.get()),
      trials_(core_.get()),
      leases_(core_.get()),
      results_(core_.get(), &leases_),
      searches_(core_.get()) {}

absl::StatusOr<std::unique_ptr<ResultsStore>> ResultsStore::Open(
    const std::string& path, const Database::Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, options));
  RETURN_IF_ERROR(Migrate(db.get()));
  auto core = std::make_unique<StoreCore>(std::move(db));
  StoreCore* c = core.get();
  ASSIGN_OR_RETURN(c->readers, ReaderPool::Open(path, options, kClientReaders,
                                                "the store's client reads"));
  ASSIGN_OR_RETURN(c->worker_readers,
                   ReaderPool::Open(path, options, kWorkerReaders,
                                    "the store's worker reads"));
  if (!options.read_only) {
    c->checkpointer =
        std::make_unique<WalCheckpointer>(path, options, c->db.get());
  }
  {
    absl::MutexLock lock(&c->mu);
    ASSIGN_OR_RETURN(Statement * paused,
                     c->db->Cached("SELECT paused FROM leasing WHERE id = 1"));
    ASSIGN_OR_RETURN(bool row, paused->Step());
    c->leasing_paused = row && paused->ColumnInt64(0) != 0;
    paused->Reset();
  }
  c->writes = std::make_unique<WriteQueue>(c->db.get(), &c->mu, [c] {
    c->mu.AssertHeld();
    if (c->checkpointer != nullptr) c->checkpointer->RewindIfLong(c->db.get());
  });
  return std::unique_ptr<ResultsStore>(new ResultsStore(std::move(core)));
}

void ResultsStore::StopReads() { core_->readers->Stop(); }

void ResultsStore::SetEventSink(TrialEventSink sink) {
  core_->event_sink = std::move(sink);
}

std::vector<Database::StatementTime> ResultsStore::ReaderStatementProfile() {
  std::vector<Database::StatementTime> out = core_->readers->StatementProfile();
  for (Database::StatementTime& t : core_->worker_readers->StatementProfile())
    out.push_back(std::move(t));
  return out;
}

std::vector<Database::StatementTime> ResultsStore::WriterStatementProfile() {
  absl::MutexLock lock(&core_->mu);
  return core_->db->StatementProfile();
}

ResultsStore::WriteStats ResultsStore::GetWriteStats() {
  const WriteQueue::Stats q = core_->writes->stats();
  WriteStats out;
  out.writes = q.writes;
  out.commits = q.commits;
  out.busy_ns = q.busy_ns;
  out.replays = q.replays;
  out.group_time = q.group_time;
  out.checkpoints =
      core_->checkpointer ? core_->checkpointer->checkpoints() : 0;
  return out;
}

absl::StatusOr<bool> ResultsStore::IntegrityOk() {
  ASSIGN_OR_RETURN(ReaderPool::Lease r, core_->readers->Acquire());
  ASSIGN_OR_RETURN(auto s, r.db()->Prepare("PRAGMA integrity_check"));
  ASSIGN_OR_RETURN(bool row, s->Step());
  return row && s->ColumnText(0) == "ok";
}

}  // namespace qkov::storage
