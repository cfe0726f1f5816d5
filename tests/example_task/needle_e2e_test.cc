// The needle task (defined in this folder alone, docs/adding-a-task.md) end
// to end through real programs built with it: qkov-server-needle on
// loopback with its SQLite file, a qkov-worker-needle process and the
// qkov-needle CLI (presets, submit of the task's preset, watch, results,
// plot); then the database is read directly. The programs built without it
// refuse the task by name and do not list its preset.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

// A sweep of the task, for the programs built without it.
constexpr char kSweep[] = R"(name: needle-elsewhere
axes: {lr_ratio: [1], eta_ov: [0.2], seed: [1]}
training: {task: needle}
)";

// qkov-needle against `server`.
CommandResult Needle(const ServerUnderTest& server,
                     const std::vector<std::string>& args) {
  std::vector<std::string> argv = {QKOV_NEEDLE_CLI_BIN,
                                   "--server=" + server.address()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, 120);
}

TEST(NeedleTaskTest, RunsEndToEndThroughProgramsBuiltWithIt) {
  TempDir dir;
  ServerUnderTest server(dir,
                         {"--http_listen=127.0.0.1:0",
                          "--http_port_file=" + dir.File("http.port")},
                         QKOV_NEEDLE_SERVER_BIN);
  WriteFile(dir.File("sweep.yaml"), kSweep);

  // The qkov built without the task knows neither its name nor its preset.
  CommandResult refused =
      RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                  dir.File("sweep.yaml")});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("unknown value 'needle'"), std::string::npos)
      << refused.err;
  CommandResult presets = RunCommand({QKOV_CLI_BIN, "presets"});
  ASSERT_EQ(presets.exit_code, 0) << presets.err;
  EXPECT_EQ(presets.out.find("needle-ratio"), std::string::npos);
  EXPECT_NE(presets.out.find("paper-four-param"), std::string::npos);

  // qkov-needle lists the task's preset after the paper's, and submits it.
  presets = Needle(server, {"presets"});
  ASSERT_EQ(presets.exit_code, 0) << presets.err;
  ASSERT_NE(presets.out.find("needle-ratio"), std::string::npos) << presets.out;
  EXPECT_GT(presets.out.find("needle-ratio"), presets.out.find("paper-squad"))
      << presets.out;
  CommandResult submit = Needle(server, {"submit", "--preset", "needle-ratio"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("4 trials (4 new"), std::string::npos)
      << submit.out;
  Process worker({QKOV_NEEDLE_WORKER_BIN, "--server=" + server.address(),
                  "--name=w1", "--exit_when_idle"},
                 dir.File("worker.log"));
  CommandResult watch = Needle(server, {"watch", "needle-ratio"});
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_NE(watch.out.find("4/4 finished: 4 done"), std::string::npos)
      << watch.out << ReadFile(dir.File("worker.log"));
  ASSERT_EQ(worker.Wait(60), 0) << ReadFile(dir.File("worker.log"));

  // The results table shows the task's own columns (its defaults).
  CommandResult results = Needle(server, {"results", "needle-ratio"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  std::vector<std::string> lines =
      absl::StrSplit(results.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << results.out;
  EXPECT_NE(lines[0].find("needle_attention"), std::string::npos) << lines[0];

  CommandResult plot =
      Needle(server, {"plot", "needle-ratio", "--out", dir.File("plots")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  for (const char* name : {"ratio_needle_attention", "curves_train_loss",
                           "curves_needle_attention"}) {
    EXPECT_TRUE(IsValidPng(dir.File(std::string("plots/") + name + ".png")))
        << name << "\n"
        << plot.out;
  }
  // The dashboard's task table holds the task under the number the sweep's
  // JSON carries, so its pages choose the task's own panels.
  ASSERT_TRUE(
      WaitUntil([&] { return !ReadFile(dir.File("http.port")).empty(); }, 30));
  httplib::Client http("127.0.0.1", std::stoi(ReadFile(dir.File("http.port"))));
  httplib::Result tasks = http.Get("/api/v1/tasks");
  ASSERT_TRUE(tasks && tasks->status == 200);
  const nlohmann::json table = nlohmann::json::parse(tasks->body);
  nlohmann::json needle;
  for (const auto& t : table["tasks"])
    if (t["name"] == "needle") needle = t;
  ASSERT_FALSE(needle.is_null()) << tasks->body.substr(0, 2000);
  EXPECT_EQ(needle["views"]["figures"],
            nlohmann::json::array({"ratio", "curves"}));
  httplib::Result sweep = http.Get("/api/v1/sweeps/needle-ratio");
  ASSERT_TRUE(sweep && sweep->status == 200);
  EXPECT_EQ(nlohmann::json::parse(sweep->body)["spec"]["training"]["task"],
            needle["kind"]);
  EXPECT_EQ(needle["kind"], 1000);

  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(30), 0);

  // Stored with the task's registered number, every curve point and result.
  const std::string db = server.db_path();
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM trials WHERE json_extract("
                     "config_json, '$.training.task') = 1000"),
            4);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM metrics WHERE name = "
                     "'needle_attention'"),
            4 * 6);
  // The paper's direction in miniature: at 10x the QK rate, attention on the
  // needle is higher for each seed.
  std::map<std::string, std::map<double, double>> attention;
  for (const auto& row :
       QueryRows(db,
                 "SELECT json_extract(t.config_json, '$.seed'), "
                 "json_extract(t.config_json, '$.lr_ratio'), r.value "
                 "FROM results r JOIN trials t USING (trial_id) "
                 "WHERE r.name = 'needle_attention'")) {
    ASSERT_EQ(row.size(), 3u);
    double ratio = 0, v = 0;
    ASSERT_TRUE(absl::SimpleAtod(row[1], &ratio)) << row[1];
    ASSERT_TRUE(absl::SimpleAtod(row[2], &v)) << row[2];
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1);
    attention[row[0]][ratio] = v;
  }
  ASSERT_EQ(attention.size(), 2u);
  for (const auto& [seed, by_ratio] : attention) {
    ASSERT_EQ(by_ratio.size(), 2u) << seed;
    EXPECT_GT(by_ratio.at(10), by_ratio.at(1)) << "seed " << seed;
    std::printf("seed %s: needle attention %.4f at ratio 1, %.4f at 10\n",
                seed.c_str(), by_ratio.at(1), by_ratio.at(10));
  }
}

}  // namespace
}  // namespace qkov::testing
