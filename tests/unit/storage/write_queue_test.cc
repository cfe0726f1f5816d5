// WriteQueue with fake writes (rows in a table of a test database): groups
// form while the writer is busy, a refused write is undone alone, and a
// write that must run alone does.
#include "storage/write_queue.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace qkov::storage {
namespace {

class WriteQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-wq-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto db = Database::Open(dir_ + "/q.db", {});
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    ASSERT_TRUE(db_->Execute("CREATE TABLE t (x INTEGER PRIMARY KEY)").ok());
    queue_ = std::make_unique<WriteQueue>(db_.get(), &mu_,
                                          [this] { ++after_commits_; });
  }
  void TearDown() override {
    queue_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A fake write: inserts row x; fails after inserting when `fail_after`,
  // or refuses before writing when `refuse`.
  absl::Status Insert(int x, bool fail_after = false, bool refuse = false) {
    return queue_->Write([&, x]() -> absl::Status {
      if (refuse) return absl::FailedPreconditionError("refused");
      absl::Status s =
          db_->Execute(absl::StrCat("INSERT INTO t VALUES (", x, ")"));
      if (!s.ok()) return s;
      return fail_after ? absl::InternalError("fails after writing") : s;
    });
  }
  int64_t Rows() {
    absl::MutexLock lock(&mu_);
    auto s = db_->Prepare("SELECT COUNT(*) FROM t");
    auto row = (*s)->Step();
    return (*s)->ColumnInt64(0);
  }

  // Holds the writer before its next group until Release(), and returns once
  // `n` writes are queued behind it.
  void HoldWriter() {
    queue_->SetBeforeGroupHookForTesting(
        [this] { release_.WaitForNotification(); });
  }
  void WaitQueued(size_t n) {
    while (queue_->QueuedForTesting() < n) std::this_thread::yield();
  }

  std::string dir_;
  absl::Mutex mu_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<WriteQueue> queue_;
  std::atomic<int> after_commits_{0};
  absl::Notification release_;
};

TEST_F(WriteQueueTest, WritesQueuedTogetherCommitTogether) {
  HoldWriter();
  std::vector<std::thread> writers;
  std::vector<absl::Status> status(8);
  for (int i = 0; i < 8; ++i)
    writers.emplace_back([&, i] { status[i] = Insert(i); });
  WaitQueued(8);
  release_.Notify();
  for (auto& t : writers) t.join();
  for (const auto& s : status) EXPECT_TRUE(s.ok()) << s;
  const WriteQueue::Stats stats = queue_->stats();
  EXPECT_EQ(stats.writes, 8);
  EXPECT_EQ(stats.commits, 1);
  EXPECT_EQ(after_commits_, 1);
  EXPECT_EQ(Rows(), 8);
}

TEST_F(WriteQueueTest, AWriteThatFailsAfterWritingIsUndoneAlone) {
  HoldWriter();
  std::vector<std::thread> writers;
  std::vector<absl::Status> status(6);
  for (int i = 0; i < 6; ++i) {
    writers.emplace_back(
        [&, i] { status[i] = Insert(i, /*fail_after=*/i == 3); });
  }
  WaitQueued(6);
  release_.Notify();
  for (auto& t : writers) t.join();
  for (int i = 0; i < 6; ++i) {
    if (i == 3) {
      EXPECT_EQ(status[i].message(), "fails after writing");
    } else {
      EXPECT_TRUE(status[i].ok()) << status[i];
    }
  }
  EXPECT_EQ(Rows(), 5);  // the other five, once each
  EXPECT_EQ(queue_->stats().replays, 1);
  EXPECT_EQ(queue_->stats().commits, 1);
}

TEST_F(WriteQueueTest, ARefusalBeforeWritingNeedsNoReplay) {
  HoldWriter();
  std::vector<std::thread> writers;
  std::vector<absl::Status> status(4);
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back(
        [&, i] { status[i] = Insert(i, false, /*refuse=*/i == 1); });
  }
  WaitQueued(4);
  release_.Notify();
  for (auto& t : writers) t.join();
  EXPECT_EQ(status[1].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Rows(), 3);
  EXPECT_EQ(queue_->stats().replays, 0);
}

TEST_F(WriteQueueTest, ALoneWriteThatFailsStoresNothing) {
  absl::Status s = Insert(7, /*fail_after=*/true);
  EXPECT_EQ(s.message(), "fails after writing");
  EXPECT_EQ(Rows(), 0);
  EXPECT_EQ(queue_->stats().commits, 0);
  EXPECT_TRUE(Insert(7).ok());  // the same row goes in afterwards
  EXPECT_EQ(Rows(), 1);
}

TEST_F(WriteQueueTest, AWriteMarkedAloneHasATransactionOfItsOwn) {
  HoldWriter();
  std::vector<std::thread> writers;
  for (int i = 0; i < 3; ++i)
    writers.emplace_back([&, i] { Insert(i).IgnoreError(); });
  WaitQueued(3);
  writers.emplace_back([&] {
    queue_
        ->Write([&]() { return db_->Execute("INSERT INTO t VALUES (100)"); },
                /*alone=*/true)
        .IgnoreError();
  });
  WaitQueued(4);
  for (int i = 3; i < 5; ++i)
    writers.emplace_back([&, i] { Insert(i).IgnoreError(); });
  WaitQueued(6);
  release_.Notify();
  for (auto& t : writers) t.join();
  EXPECT_EQ(Rows(), 6);
  // [0 1 2] [alone] [3 4]: three commits.
  EXPECT_EQ(queue_->stats().commits, 3);
}

}  // namespace
}  // namespace qkov::storage
