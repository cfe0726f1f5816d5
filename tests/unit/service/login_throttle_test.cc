// The dashboard's login throttle with a fake clock: a burst, then one try
// back per refill, per client address; a table that stays bounded.
// (tests/integration/http_session_attack_test.cc attacks the real login.)
#include "server/service/login_throttle.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/clock.h"

namespace qkov::service {
namespace {

TEST(LoginThrottleTest, BurstThenOneBackPerRefill) {
  FakeClock clock;
  LoginThrottle t({/*burst=*/3, /*refill=*/absl::Seconds(6), /*max_keys=*/100},
                  &clock);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.Wait("10.0.0.1"), absl::ZeroDuration()) << i;
    t.Take("10.0.0.1");
  }
  EXPECT_EQ(t.Wait("10.0.0.1"), absl::Seconds(6));
  EXPECT_EQ(t.Wait("10.0.0.2"), absl::ZeroDuration()) << "another key";
  clock.Advance(absl::Seconds(4));
  EXPECT_EQ(t.Wait("10.0.0.1"), absl::Seconds(2));
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(t.Wait("10.0.0.1"), absl::ZeroDuration());
  t.Take("10.0.0.1");
  EXPECT_EQ(t.Wait("10.0.0.1"), absl::Seconds(6));
  // Taking from an empty bucket keeps it empty, never below.
  t.Take("10.0.0.1");
  clock.Advance(absl::Seconds(6));
  EXPECT_EQ(t.Wait("10.0.0.1"), absl::ZeroDuration());
  // A long quiet time refills to the burst, not past it.
  clock.Advance(absl::Hours(1));
  for (int i = 0; i < 3; ++i) t.Take("10.0.0.1");
  EXPECT_GT(t.Wait("10.0.0.1"), absl::ZeroDuration());
}

TEST(LoginThrottleTest, TheTableStaysBoundedAndKeepsRecentKeys) {
  FakeClock clock;
  LoginThrottle t({2, absl::Seconds(30), /*max_keys=*/100}, &clock);
  t.Take("victim");
  t.Take("victim");
  // 10,000 one-off addresses, a second apart.
  for (int i = 0; i < 10000; ++i) {
    clock.Advance(absl::Milliseconds(1));
    t.Take(absl::StrCat("flood-", i));
    t.Take(absl::StrCat("flood-", i));
    ASSERT_LE(t.size(), 100);
  }
  EXPECT_GT(t.Wait("flood-9999"), absl::ZeroDuration())
      << "the newest keys are kept";
}

}  // namespace
}  // namespace qkov::service
