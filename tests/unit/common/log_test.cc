// The renderings of a log event (common/log.h): one logfmt line, one JSON
// object, the journal's fields; and the rate limit, read back from stderr.
#include "common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace qkov::log {
namespace {

const absl::Time kTs = absl::FromUnixMillis(1764908400123);  // 2025-12-05

std::vector<Field> Hostile() {
  return {{"trial", "1-00000003"},
          {"attempt", 2},
          {"duration_s", absl::Milliseconds(1500)},
          {"error", "a \"quoted\" word=x\nsecond line\ttab\x01"},
          {"ok", true},
          {"loss", 0.25}};
}

TEST(LogTest, TextIsOneLogfmtLineWhateverTheFieldsHold) {
  const std::string line = TextLine(kTs, "qkov-server", Severity::kWarning,
                                    "lease_expired", Hostile());
  EXPECT_EQ(line,
            "2025-12-05T04:20:00.123Z qkov-server WARN lease_expired "
            "trial=1-00000003 attempt=2 duration_s=1.500000 "
            "error=\"a \\\"quoted\\\" word=x\\nsecond line\\ttab\\u0001\" "
            "ok=true loss=0.25");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LogTest, JsonIsOneObjectWithNumbersAsNumbers) {
  const std::string line = JsonLine(kTs, "qkov-worker", Severity::kError,
                                    "trial_report_failed", Hostile());
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["ts"], "2025-12-05T04:20:00.123Z");
  EXPECT_EQ(j["program"], "qkov-worker");
  EXPECT_EQ(j["severity"], "ERROR");
  EXPECT_EQ(j["event"], "trial_report_failed");
  EXPECT_EQ(j["trial"], "1-00000003");
  EXPECT_EQ(j["attempt"], 2);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 1.5);
  EXPECT_EQ(j["error"], "a \"quoted\" word=x\nsecond line\ttab\x01");
  EXPECT_EQ(j["ok"], true);
  // NaN is not JSON: a string.
  const nlohmann::json nan = nlohmann::json::parse(
      JsonLine(kTs, "p", Severity::kInfo, "e", {{"loss", std::nan("")}}));
  EXPECT_EQ(nan["loss"], "nan");
}

TEST(LogTest, JournalFieldsCarryEveryFieldUnderItsOwnName) {
  const std::vector<std::string> f = JournalFields(
      "qkov-server", Severity::kWarning, "lease_expired",
      {{"trial", "1-00000003"}, {"worker", "w1/ab"}, {"odd-key.x", "v"}},
      "the text line");
  EXPECT_EQ(f, (std::vector<std::string>{
                   "MESSAGE=the text line", "PRIORITY=4",
                   "SYSLOG_IDENTIFIER=qkov-server", "QKOV_EVENT=lease_expired",
                   "QKOV_TRIAL=1-00000003", "QKOV_WORKER=w1/ab",
                   "QKOV_ODD_KEY_X=v"}));
}

TEST(LogTest, StatusFieldsNameTheirCode) {
  EXPECT_EQ(Field("error", absl::NotFoundError("no trial 'x'")).value,
            "NOT_FOUND: no trial 'x'");
  EXPECT_EQ(Field("error", absl::OkStatus()).value, "OK");
}

TEST(LogTest, UnknownFormatsAreRefused) {
  const absl::Status s = Init("qkov-test", "xml");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--log_format: 'xml' is not text or json");
}

absl::Time fake_now = kTs;
absl::Time FakeNow() { return fake_now; }

// Events of a rate-limited name past the burst are dropped and counted; the
// next one let through says how many.
TEST(LogTest, RepeatingEventsAreRateLimitedAndCounted) {
  SetClockForTesting(&FakeNow);
  ASSERT_TRUE(Init("qkov-test", "json").ok());
  char path[] = "/tmp/qkov-log-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  const RateLimit limit{3, absl::Milliseconds(300)};
  for (int i = 0; i < 10; ++i)
    Emit(Severity::kWarning, "reconnect", {{"i", i}}, limit);
  // A new window: the next event carries the count of those dropped.
  fake_now += absl::Milliseconds(300);
  Emit(Severity::kWarning, "reconnect", {{"i", 10}}, limit);
  Emit(Severity::kWarning, "other_event", {}, limit);  // its own budget
  std::fflush(stderr);
  SetClockForTesting(nullptr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  std::vector<nlohmann::json> lines;
  for (absl::string_view l :
       absl::StrSplit(text.str(), '\n', absl::SkipEmpty()))
    lines.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(lines.size(), 5u) << text.str();
  EXPECT_EQ(lines[0]["i"], 0);
  EXPECT_EQ(lines[2]["i"], 2);
  EXPECT_FALSE(lines[2].contains("suppressed"));
  EXPECT_EQ(lines[3]["i"], 10);
  EXPECT_EQ(lines[3]["suppressed"], 7);
  EXPECT_EQ(lines[4]["event"], "other_event");
}

}  // namespace
}  // namespace qkov::log
