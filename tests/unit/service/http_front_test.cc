// The dashboard front's pieces that need no socket: login throttling with a
// fake clock, and percent-decoding of paths, queries and form bodies.
// (tests/integration/http_attack_test.cc attacks the real server.)
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "server/service/http_server.h"
#include "server/service/login_throttle.h"

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

TEST(PercentDecodeTest, PathsQueriesAndRefusals) {
  std::string out;
  EXPECT_TRUE(PercentDecode("/sweeps/a%20b", false, &out));
  EXPECT_EQ(out, "/sweeps/a b");
  EXPECT_TRUE(PercentDecode("a+b%2Bc", true, &out));
  EXPECT_EQ(out, "a b+c");
  EXPECT_TRUE(PercentDecode("a+b", false, &out));
  EXPECT_EQ(out, "a+b") << "'+' is a space only in queries and forms";
  EXPECT_TRUE(PercentDecode("caf%C3%A9", false, &out));
  EXPECT_EQ(out, "caf\xc3\xa9");
  for (const char* bad :
       {"app.js%00.html", "%ff", "%c0%af", "%", "%4", "%zz", "%ed%a0%80"}) {
    EXPECT_FALSE(PercentDecode(bad, false, &out)) << bad;
  }
}

}  // namespace
}  // namespace qkov::service
