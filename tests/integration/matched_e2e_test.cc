// The matched comparison end to end: a quick synthetic sweep through the
// real server, worker and CLI; `qkov results --matched`, `qkov plot --kind
// matched` and the dashboard's /api/v1/sweeps/NAME/matched agree with the
// values computed from the exported curves by an independent script
// (tests/integration/matched_check.py).
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

constexpr char kSweep[] = R"(name: matched
axes:
  parameterization: [CACO, FACO]
  lr_ratio: [1, 10]
  eta_ov: [0.1]
  seed: [1, 2]
training:
  max_steps: 4000
  report_every: 200
  target_loss: -1
  evaluation: {num_examples: 64}
)";

// "param,lr_ratio,level" -> {reached, trials, mean}.
struct Expected {
  int reached = 0;
  int trials = 0;
  double mean = NAN;
};
using Table = std::map<std::string, Expected>;

std::string Key(absl::string_view param, absl::string_view ratio,
                absl::string_view level) {
  double r = 0, l = 0;
  EXPECT_TRUE(absl::SimpleAtod(ratio, &r) && absl::SimpleAtod(level, &l))
      << ratio << " " << level;
  return absl::StrCat(param, ",", r, ",", l);
}

TEST(MatchedEndToEndTest, CliFigureAndDashboardAgreeWithAnIndependentScript) {
  TempDir dir;
  ServerUnderTest server(dir, {"--http_listen=127.0.0.1:0",
                               "--http_port_file=" + dir.File("http.port")});
  ASSERT_TRUE(
      WaitUntil([&] { return !ReadFile(dir.File("http.port")).empty(); }, 30));
  auto qkov = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {QKOV_CLI_BIN, "--server=" + server.address()});
    return RunCommand(args);
  };
  WriteFile(dir.File("s.yaml"), kSweep);
  ASSERT_EQ(qkov({"submit", dir.File("s.yaml")}).exit_code, 0);
  Process worker(
      {QKOV_WORKER_BIN, "--server=" + server.address(), "--exit_when_idle"},
      dir.File("worker.log"));
  ASSERT_EQ(worker.Wait(180), 0) << ReadFile(dir.File("worker.log"));

  const std::string levels = "1.1,0.8,0.5";
  CommandResult points = qkov(
      {"export", "matched", "--per", "point", "--out", dir.File("points.csv")});
  ASSERT_EQ(points.exit_code, 0) << points.err;
  CommandResult script =
      RunCommand({"/usr/bin/python3",
                  QKOV_SOURCE_DIR "/tests/integration/matched_check.py",
                  dir.File("points.csv"), "train_loss", levels, "3",
                  "distinct_attention"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  Table expected;
  int reached_somewhere = 0, unreached = 0;
  for (absl::string_view line : absl::StrSplit(script.out, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() != 6) continue;
    Expected e;
    ASSERT_TRUE(absl::SimpleAtoi(f[3], &e.reached));
    ASSERT_TRUE(absl::SimpleAtoi(f[4], &e.trials));
    if (e.reached > 0) ASSERT_TRUE(absl::SimpleAtod(f[5], &e.mean));
    reached_somewhere += e.reached > 0;
    unreached += e.trials - e.reached;
    expected[Key(f[0], f[1], f[2])] = e;
  }
  ASSERT_EQ(expected.size(), 12u) << script.out;  // 4 arms x 3 levels
  EXPECT_GT(reached_somewhere, 0) << script.out;

  // The CLI's table (4 significant digits).
  CommandResult cli = qkov(
      {"results", "matched", "--matched", "train_loss=" + levels, "--window",
       "3", "--metrics", "distinct_attention", "--format", "csv"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(cli.out, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() != 7 || f[0] == "parameterization") continue;
    ++rows;
    const Expected& e = expected[Key(f[0], f[1], f[2])];
    EXPECT_EQ(f[3], absl::StrCat(e.reached, "/", e.trials)) << line;
    if (e.reached == 0) {
      EXPECT_EQ(f[5], "-") << line;
      continue;
    }
    double mean = 0;
    ASSERT_TRUE(absl::SimpleAtod(f[5], &mean)) << line;
    EXPECT_NEAR(mean, e.mean, 5e-4 * std::fabs(e.mean)) << line;
  }
  EXPECT_EQ(rows, 12) << cli.out;

  // The figure's numbers (10 significant digits).
  CommandResult plot =
      qkov({"plot", "matched", "--kind", "matched", "--matched",
            "train_loss=" + levels, "--window", "3", "--metrics",
            "distinct_attention", "--by", "parameterization,lr_ratio", "--out",
            dir.File("fig")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_TRUE(IsValidPng(dir.File("fig/matched_distinct_attention.png")));
  const std::string dat =
      ReadFile(dir.File("fig/matched_distinct_attention.dat"));
  // Blocks in arm order: CACO 1, CACO 10, FACO 1, FACO 10.
  const std::vector<std::pair<std::string, std::string>> arms = {
      {"CACO", "1"}, {"CACO", "10"}, {"FACO", "1"}, {"FACO", "10"}};
  size_t block = 0;
  bool gap = false;  // blank lines after data: the next block
  int points_checked = 0;
  for (absl::string_view line : absl::StrSplit(dat, '\n')) {
    if (line.empty()) {
      gap = points_checked > 0;
      continue;
    }
    if (line[0] == '#') continue;
    if (gap) {
      ++block;
      gap = false;
    }
    ASSERT_LT(block, arms.size()) << dat;
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 6u) << line;
    const Expected& e =
        expected[Key(arms[block].first, arms[block].second, f[0])];
    EXPECT_EQ(f[4], absl::StrCat(e.reached)) << line;
    if (e.reached > 0) {
      double mean = 0;
      ASSERT_TRUE(absl::SimpleAtod(f[1], &mean)) << line;
      EXPECT_NEAR(mean, e.mean, 1e-8 * std::fabs(e.mean)) << line;
    }
    ++points_checked;
  }
  EXPECT_EQ(points_checked, 12) << dat;

  // The dashboard's panel reads the same numbers (full precision).
  httplib::Client http("127.0.0.1", std::stoi(ReadFile(dir.File("http.port"))));
  http.set_read_timeout(30, 0);
  httplib::Result r = http.Get(
      "/api/v1/sweeps/matched/matched?curve=train_loss&level=1.1&level=0.8&"
      "level=0.5&window=3&metric=distinct_attention&by=parameterization,"
      "lr_ratio");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  nlohmann::json m = nlohmann::json::parse(r->body);
  EXPECT_EQ(m["reference"], "train_loss");
  EXPECT_EQ(m["window"], 3);
  EXPECT_EQ(m["downwards"], true);
  EXPECT_EQ(m["levels"], nlohmann::json::parse("[1.1, 0.8, 0.5]"));
  ASSERT_EQ(m["groups"].size(), 12u) << r->body;
  for (const nlohmann::json& g : m["groups"]) {
    const std::string param = g["keys"][0], ratio = g["keys"][1];
    const Expected& e =
        expected[Key(param, ratio, absl::StrCat(g["level"].get<double>()))];
    EXPECT_EQ(g["reached"].get<int>(), e.reached) << g.dump();
    EXPECT_EQ(g["trials"].get<int>(), e.trials) << g.dump();
    const nlohmann::json& s = g["metrics"]["distinct_attention"];
    // Proto JSON writes an int64 as a string.
    EXPECT_EQ(s["n"], absl::StrCat(e.reached)) << g.dump();
    if (e.reached > 0) {
      EXPECT_NEAR(s["mean"].get<double>(), e.mean, 1e-9 * std::fabs(e.mean))
          << g.dump();
    }
  }
}

}  // namespace
}  // namespace qkov::testing
