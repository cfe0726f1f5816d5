// ResultsStore on a real SQLite file: the writer thread's group commit (a
// failing write isolated, replays, a lost transaction).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "storage/migrations.h"
#include "storage/results_store.h"
#include "tests/unit/storage/results_store_fixture.h"

namespace qkov::storage {
namespace {

// Holds the writer thread before its next group until `n` writes are
// queued, so that they commit as one group.
void GroupNextWrites(ResultsStore* store, size_t n) {
  auto armed = std::make_shared<std::atomic<bool>>(true);
  store->CoreForTesting().SetBeforeGroupHookForTesting([store, n, armed] {
    if (!armed->exchange(false)) return;
    while (store->CoreForTesting().QueuedWritesForTesting() < n)
      std::this_thread::yield();
  });
}

// Starts a thread per lease in `leases`, each reporting train_loss 0.5 + i
// at step 1 for lease i; its outcome goes to (*status)[i].
void ReportOnThreads(ResultsStore* store,
                     const std::vector<LeaseRecord>& leases,
                     std::vector<absl::Status>* status,
                     std::vector<std::thread>* threads) {
  for (size_t i = 0; i < leases.size(); ++i) {
    threads->emplace_back([store, &leases, status, i] {
      (*status)[i] = store->results().AddMetrics(
          "w1", leases[i].trial_id, leases[i].attempt,
          {{1, "train_loss", 0.5 + i}}, 2100);
    });
  }
}

// A write that inserts a row (worker 'ghost') and then fails.
absl::Status FailAfterWriting(ResultsStore* store) {
  return store->CoreForTesting().WriteForTesting([](Database* db) {
    absl::Status s = db->Execute(
        "INSERT INTO workers VALUES ('ghost', 'g', 1, '{}', 1, 1, '', '')");
    return s.ok() ? absl::InternalError("fails after writing") : s;
  });
}

TEST_F(ResultsStoreTest, GroupCommitIsolatesAFailingWrite) {
  Submit("s", 4);
  std::vector<LeaseRecord> leases = LeaseN(4);
  ASSERT_EQ(leases.size(), 4u);
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  GroupNextWrites(store_.get(), 6);
  std::vector<absl::Status> status(6);
  std::vector<std::thread> threads;
  ReportOnThreads(store_.get(), leases, &status, &threads);
  // A superseded attempt: refused before it writes.
  threads.emplace_back([&] {
    status[4] = store_->results().AddMetrics("w1", leases[0].trial_id, 7,
                                             {{1, "train_loss", 9}}, 2100);
  });
  // A write that fails after writing: undone alone.
  threads.emplace_back([&] { status[5] = FailAfterWriting(store_.get()); });
  for (auto& t : threads) t.join();
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  EXPECT_EQ(after.writes - before.writes, 6);
  EXPECT_EQ(after.commits - before.commits, 1);  // one transaction for all
  // The write that failed after writing made the group run again, a
  // savepoint per write.
  EXPECT_EQ(after.replays - before.replays, 1);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(status[i].ok()) << status[i];
  EXPECT_EQ(status[4].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status[5].message(), "fails after writing");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 4);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics WHERE value = 9"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 0);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, LoneWriteThatFailsAfterWritingStoresNothing) {
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  EXPECT_EQ(FailAfterWriting(store_.get()).message(), "fails after writing");
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  EXPECT_EQ(after.commits - before.commits, 0);
  EXPECT_EQ(after.replays - before.replays, 0);  // nothing else to keep
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 0);
  // The store goes on: the same row can be written by a write that succeeds.
  EXPECT_TRUE(
      store_->leases().RegisterWorker("ghost", "g", 1, "{}", {"", ""}, 1).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 1);
}

TEST_F(ResultsStoreTest, GroupCommitRefusalBeforeWritingNeedsNoReplay) {
  Submit("s", 2);
  std::vector<LeaseRecord> leases = LeaseN(2);
  ASSERT_EQ(leases.size(), 2u);
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  GroupNextWrites(store_.get(), 3);
  std::vector<absl::Status> status(3);
  std::vector<std::thread> threads;
  ReportOnThreads(store_.get(), leases, &status, &threads);
  threads.emplace_back([&] {  // a superseded attempt
    status[2] = store_->results().AddMetrics("w1", leases[1].trial_id, 9,
                                             {{2, "train_loss", 9}}, 2100);
  });
  for (auto& t : threads) t.join();
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  EXPECT_TRUE(status[0].ok()) << status[0];
  EXPECT_TRUE(status[1].ok()) << status[1];
  EXPECT_EQ(status[2].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(after.commits - before.commits, 1);
  EXPECT_EQ(after.replays - before.replays, 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics WHERE value = 9"), 0);
}

// The replay runs the group's other writes again on the rolled-back
// database: each must be stored once, with the outputs its caller saw.
TEST_F(ResultsStoreTest, GroupCommitReplayStoresEveryOtherWriteOnce) {
  Submit("s", 4);
  std::vector<LeaseRecord> leases = LeaseN(2);
  ASSERT_EQ(leases.size(), 2u);
  const ResultsStore::WriteStats before = store_->GetWriteStats();
  GroupNextWrites(store_.get(), 3);
  std::vector<absl::Status> status(3);
  absl::StatusOr<LeaseAvailability> next_availability;
  std::vector<LeaseRecord> next;
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    next_availability = store_->results().CompleteAndLease(
        {Done(leases[0], {{"accuracy", 0.75}})}, "w1", 2100, 1000, 1, &next);
    status[0] = next_availability.status();
  });
  threads.emplace_back([&] {
    status[1] = store_->results().AddMetrics("w1", leases[1].trial_id,
                                             leases[1].attempt,
                                             {{1, "train_loss", 0.25}}, 2100);
  });
  threads.emplace_back([&] { status[2] = FailAfterWriting(store_.get()); });
  for (auto& t : threads) t.join();
  const ResultsStore::WriteStats after = store_->GetWriteStats();
  ASSERT_TRUE(status[0].ok()) << status[0];
  ASSERT_TRUE(status[1].ok()) << status[1];
  EXPECT_EQ(status[2].message(), "fails after writing");
  EXPECT_EQ(after.replays - before.replays, 1);
  EXPECT_EQ(after.commits - before.commits, 1);
  ASSERT_EQ(*next_availability, LeaseAvailability::kLeased);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].attempt, 1);
  // The lease the caller got is the one stored, once.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running'"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM trials WHERE state = 'running' AND "
                  "attempts = 1 AND trial_id = '" +
                  next[0].trial_id + "'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts WHERE trial_id = '" +
                  next[0].trial_id + "'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE value = 0.75"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics WHERE value = 0.25"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM workers WHERE worker_id = 'ghost'"), 0);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(ResultsStoreTest, GroupCommitLostTransactionFailsEveryWriteOfIt) {
  Submit("s", 2);
  std::vector<LeaseRecord> leases = LeaseN(2);
  ASSERT_EQ(leases.size(), 2u);
  GroupNextWrites(store_.get(), 3);
  std::vector<absl::Status> status(3);
  std::vector<std::thread> threads;
  ReportOnThreads(store_.get(), leases, &status, &threads);
  // Ends the group's transaction, as SQLite does on a full disk.
  threads.emplace_back([&] {
    status[2] = store_->CoreForTesting().WriteForTesting(
        [](Database* db) { return db->Execute("ROLLBACK"); });
  });
  for (auto& t : threads) t.join();
  for (const absl::Status& s : status) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("nothing stored"), std::string::npos) << s;
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 0);
  // The store goes on working after the lost group.
  EXPECT_TRUE(store_->results()
                  .AddMetrics("w1", leases[0].trial_id, leases[0].attempt,
                              {{2, "train_loss", 0.5}}, 2200)
                  .ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM metrics"), 1);
}

}  // namespace
}  // namespace qkov::storage
