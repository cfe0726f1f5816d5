#include "server/service/reply_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace qkov::service {
namespace {

// A clock and a CPU clock moved by hand: each computation "costs" `cost`.
class ReplyCacheTest : public ::testing::Test {
 protected:
  absl::StatusOr<ReplyCache::Reply> Get(const std::string& key) {
    return cache_.Get(key, [this]() -> absl::StatusOr<std::string> {
      ++computed_;
      cpu_ += cost_;
      if (!fail_.ok()) return fail_;
      return absl::StrCat("reply ", computed_);
    });
  }

  FakeClock clock_;
  absl::Duration cpu_;
  absl::Duration cost_ = absl::Milliseconds(10);
  absl::Status fail_;
  int computed_ = 0;
  ReplyCache cache_{&clock_, [this] { return cpu_; }};
};

TEST_F(ReplyCacheTest, ReusesAReplyForItsCpuCostTimesTheFactor) {
  const absl::Duration reuse = cost_ * ReplyCache::kReuseFactor;
  ASSERT_LT(reuse, ReplyCache::kMaxReuse);
  absl::StatusOr<ReplyCache::Reply> first = Get("a");
  EXPECT_EQ(first->body, "reply 1");
  EXPECT_EQ(first->age, absl::ZeroDuration());
  EXPECT_EQ(first->expires, reuse);
  clock_.Advance(reuse - absl::Milliseconds(1));
  absl::StatusOr<ReplyCache::Reply> kept = Get("a");
  EXPECT_EQ(kept->body, "reply 1");
  EXPECT_EQ(kept->age, reuse - absl::Milliseconds(1));
  EXPECT_EQ(kept->expires, absl::Milliseconds(1));
  EXPECT_EQ(computed_, 1);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Get("a")->body, "reply 2");
  // Another key is another reply.
  EXPECT_EQ(Get("b")->body, "reply 3");
}

TEST_F(ReplyCacheTest, ReuseIsCappedAndCheapRepliesAreFresh) {
  cost_ = absl::Seconds(5);  // times the factor: far past kMaxReuse
  ASSERT_TRUE(Get("a").ok());
  clock_.Advance(ReplyCache::kMaxReuse);
  ASSERT_TRUE(Get("a").ok());
  EXPECT_EQ(computed_, 2);
  cost_ = absl::ZeroDuration();
  ASSERT_TRUE(Get("b").ok());
  ASSERT_TRUE(Get("b").ok());
  EXPECT_EQ(computed_, 4);
}

TEST_F(ReplyCacheTest, ErrorsAreNotKept) {
  fail_ = absl::NotFoundError("no sweep named 'x'");
  EXPECT_EQ(Get("a").status().code(), absl::StatusCode::kNotFound);
  fail_ = absl::OkStatus();
  EXPECT_EQ(Get("a")->body, "reply 2");
  EXPECT_EQ(computed_, 2);
}

TEST_F(ReplyCacheTest, StaysBoundedUnderManyKeys) {
  for (int i = 0; i < 3 * ReplyCache::kMaxEntries; ++i)
    ASSERT_TRUE(Get(absl::StrCat("k", i)).ok());
  // The oldest keys were dropped and are computed again; the cache never
  // held more than kMaxEntries idle entries.
  const int before = computed_;
  ASSERT_TRUE(Get("k0").ok());
  EXPECT_EQ(computed_, before + 1);
  EXPECT_LE(cache_.size(), ReplyCache::kMaxEntries);
}

// Eight threads asking for 300 keys at once (more than kMaxEntries, so
// entries are added and dropped while others are looked up): each gets its
// own key's reply. Under tests/tsan.sh this is what shows the map's and
// each entry's locks hold.
TEST(ReplyCacheThreadsTest, ConcurrentKeysGetTheirOwnReplies) {
  FakeClock clock;
  ReplyCache cache(&clock, [] { return absl::Milliseconds(1); });
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = absl::StrCat("k", (i * 7 + t * 13) % 300);
        auto r = cache.Get(key, [&]() -> absl::StatusOr<std::string> {
          return "reply of " + key;
        });
        if (!r.ok() || r->body != "reply of " + key) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(cache.size(), ReplyCache::kMaxEntries + 8);
}

}  // namespace
}  // namespace qkov::service
