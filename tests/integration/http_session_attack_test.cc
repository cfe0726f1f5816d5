// The dashboard's logins, sessions and event streams attacked over raw
// sockets on loopback, with the probes, RSS budget and SIGTERM check of
// tests/integration/http_attack_fixture.h: failed logins throttled per
// address and per token, a session flood, session expiry, event-stream
// slots per token and in total.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "tests/integration/harness.h"
#include "tests/integration/http_attack_fixture.h"

namespace qkov::testing {
namespace {

// Wrong tokens are throttled per address (429 + Retry-After) without
// touching other addresses.
TEST_F(HttpAttackTest, FailedLoginsAreThrottledPerAddress) {
  StartServer();
  std::atomic<int> refused{0}, throttled{0}, odd{0};
  std::atomic<int> retry_after_ok{0};
  UnderAttack(
      4, 4,
      [&](int i, const std::atomic<bool>& stop) {
        for (int n = 0; n < 2000 && !stop; ++n) {
          const Reply r = Exchange(
              port_,
              PostLogin(port_,
                        absl::StrCat("guess-", i, "-", n, "-0123456789")),
              From(40, i), 1.0);
          if (r.status == 303 &&
              r.Header("Location") == "/login?failed=token") {
            ++refused;
          } else if (r.status == 429) {
            ++throttled;
            int seconds = 0;
            if (absl::SimpleAtoi(r.Header("Retry-After"), &seconds) &&
                seconds >= 1)
              ++retry_after_ok;
          } else if (r.status != 0) {
            ++odd;
          }
        }
      },
      [&] {
        // The right token: from another address it logs in; from a throttled
        // one it waits like any other try.
        const Reply mine = Exchange(port_, PostLogin(port_, kReader));
        EXPECT_EQ(mine.status, 303);
        EXPECT_EQ(mine.Header("Location"), "/");
        EXPECT_EQ(
            Exchange(port_, PostLogin(port_, kReader), From(40, 0)).status,
            429);
      });
  // 10 a minute per address, a burst of 10: 4 addresses over ~5 s.
  std::printf("[attack] 4 addresses: %d wrong tokens answered, %d throttled\n",
              refused.load(), throttled.load());
  EXPECT_LE(refused.load(), 4 * 12);
  EXPECT_GT(throttled.load(), 100);
  EXPECT_EQ(retry_after_ok.load(), throttled.load());
  EXPECT_EQ(odd.load(), 0);
}

TEST_F(HttpAttackTest, LoginsPerTokenAreThrottled) {
  StartServer({"--http_logins_per_token_per_minute=5"});
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(Exchange(port_, PostLogin(port_, kReader)).status, 303) << i;
  const Reply sixth = Exchange(port_, PostLogin(port_, kReader));
  EXPECT_EQ(sixth.status, 429);
  EXPECT_EQ(sixth.Header("Retry-After"), "12");
  EXPECT_EQ(Exchange(port_, PostLogin(port_, kAdmin)).status, 303)
      << "another token";
}

// A reader logging in as fast as it can (the per-token rate lifted so that
// only the session cap is at work) ends only its own oldest sessions.
TEST_F(HttpAttackTest, ASessionFloodEndsOnlyThatTokensOldestSessions) {
  StartServer({"--http_logins_per_token_per_minute=60000",
               "--http_sessions_per_token=4"});
  auto cookie_of = [](const Reply& r) {
    const std::string c = r.Header("Set-Cookie");
    return c.substr(0, c.find(';'));
  };
  auto status_with = [&](const std::string& cookie) {
    return Exchange(port_, Get("/api/v1/sweeps", "Cookie: " + cookie + "\r\n"))
        .status;
  };
  const std::string admin =
      cookie_of(Exchange(port_, PostLogin(port_, kAdmin)));
  const std::string first =
      cookie_of(Exchange(port_, PostLogin(port_, kReader)));
  ASSERT_EQ(status_with(admin), 200);
  ASSERT_EQ(status_with(first), 200);
  std::atomic<int> logins{0};
  std::mutex mu;
  std::string last;
  UnderAttack(
      2, 4,
      [&](int i, const std::atomic<bool>& stop) {
        for (int n = 0; n < 20000 && !stop; ++n) {
          const Reply r =
              Exchange(port_, PostLogin(port_, kReader), From(70, i), 1.0);
          if (r.status != 303) continue;
          ++logins;
          std::lock_guard<std::mutex> lock(mu);
          last = cookie_of(r);
        }
      },
      [&] {
        EXPECT_GT(logins.load(), 100);
        EXPECT_EQ(status_with(admin), 200)
            << "a reader's flood logged the admin out";
        EXPECT_EQ(status_with(first), 401)
            << "the reader's oldest session outlived the cap";
        std::lock_guard<std::mutex> lock(mu);
        EXPECT_EQ(status_with(last), 200);
      });
}

TEST_F(HttpAttackTest, SessionsExpireAfterTheirLifetime) {
  StartServer({"--http_session_lifetime_seconds=2"});
  const Reply r = Exchange(port_, PostLogin(port_, kReader));
  ASSERT_EQ(r.status, 303);
  EXPECT_NE(r.Header("Set-Cookie").find("Max-Age=2"), std::string::npos);
  const std::string cookie =
      r.Header("Set-Cookie").substr(0, r.Header("Set-Cookie").find(';'));
  auto status = [&] {
    return Exchange(port_, Get("/api/v1/sweeps", "Cookie: " + cookie + "\r\n"))
        .status;
  };
  EXPECT_EQ(status(), 200);
  EXPECT_TRUE(WaitUntil([&] { return status() == 401; }, 10));
}

// Event streams are capped per token and in total; a closed stream frees
// its slot within about a second. One token holding its streams, with 16
// slow connections beside it, takes nothing from anyone else.
TEST_F(HttpAttackTest, EventStreamSlotsPerTokenAndInTotal) {
  StartServer(
      {"--http_max_event_streams=12", "--http_event_streams_per_token=8"});
  auto open_stream = [&](const std::string& token, const std::string& from,
                         int* fd) {
    *fd = Dial(port_, from, 2.0);
    if (*fd < 0) return 0;
    std::string head;
    if (!SendAll(*fd, absl::StrCat(
                          "GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Authorization: Bearer ",
                          token, "\r\n\r\n")))
      return 0;
    char buf[4096];
    const ssize_t n = ::recv(*fd, buf, sizeof(buf), 0);
    if (n <= 0) return 0;
    return Parse(std::string(buf, static_cast<size_t>(n)) + "\r\n\r\n").status;
  };
  std::vector<int> mine;
  for (int i = 0; i < 8; ++i) {
    int fd;
    ASSERT_EQ(open_stream(kReader, "127.0.0.50", &fd), 200) << i;
    mine.push_back(fd);
  }
  int extra;
  EXPECT_EQ(open_stream(kReader, "127.0.0.51", &extra), 429)
      << "a ninth stream";
  ::close(extra);
  std::vector<int> others;
  for (int i = 0; i < 4; ++i) {
    int fd;
    ASSERT_EQ(open_stream(kAdmin, "127.0.0.52", &fd), 200) << i;
    others.push_back(fd);
  }
  EXPECT_EQ(open_stream(kAdmin, "127.0.0.52", &extra), 429) << "past the total";
  ::close(extra);
  // A closed stream's slot comes back within about a second.
  ::close(mine.back());
  mine.pop_back();
  const absl::Time closed = absl::Now();
  int again = -1;
  EXPECT_TRUE(WaitUntil(
      [&] {
        if (again >= 0) ::close(again);
        return open_stream(kReader, "127.0.0.50", &again) == 200;
      },
      5));
  std::printf("[streams] slot free again after %.2f s\n",
              absl::ToDoubleSeconds(absl::Now() - closed));
  mine.push_back(again);

  UnderAttack(2, 4, [&](int i, const std::atomic<bool>& stop) {
    std::vector<int> slow;
    for (int k = 0; k < 8; ++k) {
      const int fd = Dial(port_, From(60, i), 1.0);
      if (fd >= 0 && SendAll(fd, "GET /login HTTP/1.1\r\n")) slow.push_back(fd);
    }
    for (int w = 0; w < 100 && !stop; ++w)
      absl::SleepFor(absl::Milliseconds(100));
    for (int fd : slow) ::close(fd);
  });
  for (int fd : mine) ::close(fd);
  for (int fd : others) ::close(fd);
}

}  // namespace
}  // namespace qkov::testing
