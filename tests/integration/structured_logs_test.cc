// Structured logs of the real programs (common/log.h, docs/operations.md):
// one trial's lease, expiry, second lease and completion found by filtering
// qkov-server's JSON log on the trial's id, as `journalctl QKOV_TRIAL=...`
// filters the journal.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

// Every line of a JSON log, each checked to be one object with the four
// keys every event has.
std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    if (j.is_discarded()) continue;
    for (const char* key : {"ts", "program", "severity", "event"})
      EXPECT_TRUE(j.contains(key)) << key << " missing: " << line;
    out.push_back(std::move(j));
  }
  return out;
}

TEST(StructuredLogsTest, OneTrialsLeasesExpiryAndCompletionByItsId) {
  TempDir dir;
  ServerUnderTest server(
      dir, {"--log_format=json", "--lease_seconds=2", "--heartbeat_seconds=1"});
  WriteFile(dir.File("sweep.yaml"), R"(name: logged
axes: {parameterization: [FAFO], lr_ratio: [1], eta_ov: [0.1], seed: [7]}
training:
  max_steps: 20000
  report_every: 200
  target_loss: -1
  evaluation: {num_examples: 256}
)");
  CommandResult submit =
      RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                  dir.File("sweep.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto q = [&](const std::string& sql) {
    return QueryInt(server.db_path(), sql);
  };
  Process a({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=a",
             "--log_format=json", "--exit_when_idle"},
            dir.File("a.log"));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return q("SELECT COUNT(*) FROM trials WHERE last_step >= 400") > 0;
      },
      60));
  a.Signal(SIGSTOP);  // no heartbeats: the lease expires
  ASSERT_TRUE(WaitUntil(
      [&] {
        return q("SELECT COUNT(*) FROM attempts WHERE state = 'lost'") == 1;
      },
      30));
  Process b({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=b",
             "--log_format=json", "--exit_when_idle"},
            dir.File("b.log"));
  ASSERT_EQ(b.Wait(180), 0) << ReadFile(dir.File("b.log"));
  a.Signal(SIGKILL);
  const std::string trial =
      QueryRows(server.db_path(), "SELECT trial_id FROM trials")[0][0];

  // The server's log, filtered on the trial's id.
  std::vector<std::string> story;
  std::vector<std::string> workers;
  for (const nlohmann::json& e : JsonLines(ReadFile(dir.File("server.log")))) {
    EXPECT_EQ(e["program"], "qkov-server");
    if (!e.contains("trial") || e["trial"] != trial) continue;
    story.push_back(absl::StrCat(e["event"].get<std::string>(), " ",
                                 e["attempt"].get<int>()));
    workers.push_back(e["worker"].get<std::string>());
  }
  EXPECT_EQ(story,
            (std::vector<std::string>{"trial_leased 1", "lease_expired 1",
                                      "trial_leased 2", "trial_completed 2"}));
  ASSERT_EQ(workers.size(), 4u);
  EXPECT_EQ(workers[0].rfind("a/", 0), 0u) << workers[0];
  EXPECT_EQ(workers[1], workers[0]);
  EXPECT_EQ(workers[2].rfind("b/", 0), 0u) << workers[2];
  EXPECT_EQ(workers[3], workers[2]);
  // The worker that finished logs JSON too, ending with its count.
  std::vector<nlohmann::json> b_log = JsonLines(ReadFile(dir.File("b.log")));
  ASSERT_FALSE(b_log.empty());
  EXPECT_EQ(b_log.back()["event"], "worker_finished");
  EXPECT_EQ(b_log.back()["trials_completed"], 1);
}

TEST(StructuredLogsTest, AnUnknownLogFormatIsRefusedAtStart) {
  TempDir dir;
  const std::vector<std::vector<std::string>> commands = {
      {QKOV_SERVER_BIN, "--db=" + dir.File("x.db"), "--log_format=xml"},
      {QKOV_WORKER_BIN, "--server=127.0.0.1:1", "--log_format=xml"}};
  for (const std::vector<std::string>& argv : commands) {
    CommandResult r = RunCommand(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << argv[0] << ": " << r.err;
    EXPECT_NE(r.err.find("--log_format: 'xml' is not text or json"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace qkov::testing
