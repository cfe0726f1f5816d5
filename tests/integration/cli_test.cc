// qkov CLI behaviour against a real server: exit codes and one readable
// error line for each kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/version.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

constexpr char kGood[] = R"(name: cli
axes:
  parameterization: [FAFO, CACO]
  lr_ratio: [1]
  eta_ov: [0.1]
  seed: [1]
training: {max_steps: 100}
)";

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    server_ = new ServerUnderTest(*dir_);
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  CommandResult Qkov(std::vector<std::string> args) {
    args.insert(args.begin(), {QKOV_CLI_BIN, "--server=" + server_->address(),
                               "--deadline=10"});
    return RunCommand(args);
  }
  CommandResult SubmitText(const std::string& text) {
    const std::string path = dir_->File("s.yaml");
    WriteFile(path, text);
    return Qkov({"submit", path});
  }
  static std::string Replace(std::string s, const std::string& from,
                             const std::string& to) {
    s.replace(s.find(from), from.size(), to);
    return s;
  }
  static void ExpectOneLine(const CommandResult& r) {
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("qkov: ", 0), 0u) << r.err;
  }

  static TempDir* dir_;
  static ServerUnderTest* server_;
};
TempDir* CliTest::dir_ = nullptr;
ServerUnderTest* CliTest::server_ = nullptr;

TEST_F(CliTest, HelpForEveryCommand) {
  for (const char* cmd :
       {"submit", "status", "watch", "results", "trials", "trial", "cancel",
        "pause", "resume", "retry", "presets", "export", "sql", "plot"}) {
    CommandResult r = RunCommand({QKOV_CLI_BIN, cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << r.out;
  }
  CommandResult r = RunCommand({QKOV_CLI_BIN, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("submit"), std::string::npos);
}

// One version string everywhere: each program's --version line is its name
// and the code version that the provenance of every result records.
TEST_F(CliTest, EveryProgramPrintsTheCodeVersion) {
  for (const auto& [name, bin] :
       std::vector<std::pair<std::string, std::string>>{
           {"qkov", QKOV_CLI_BIN},
           {"qkov-server", QKOV_SERVER_BIN},
           {"qkov-worker", QKOV_WORKER_BIN},
           {"qkov-data", QKOV_DATA_BIN}}) {
    CommandResult r = RunCommand({bin, "--version"});
    EXPECT_EQ(r.exit_code, 0) << name << r.err;
    EXPECT_EQ(r.out, name + " " + CodeVersion() + "\n") << name;
  }
}

TEST_F(CliTest, UnknownCommandIsUsageError) {
  CommandResult r = RunCommand({QKOV_CLI_BIN, "frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
}

TEST_F(CliTest, UnknownParameterizationIsRefusedWithFieldAndLine) {
  CommandResult r = SubmitText(Replace(kGood, "CACO", "CAXO"));
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  EXPECT_NE(r.err.find("s.yaml:3: axes.parameterization[1]: unknown "
                       "parameterization 'CAXO'"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, NanRateIsRefusedByServerNamingField) {
  CommandResult r =
      SubmitText(Replace(kGood, "eta_ov: [0.1]", "eta_ov: [.nan]"));
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  EXPECT_NE(
      r.err.find("spec.axes.eta_ovs[0]: must be finite and > 0 (got nan)"),
      std::string::npos)
      << r.err;
}

TEST_F(CliTest, NegativeRatioIsRefusedByServerNamingField) {
  CommandResult r =
      SubmitText(Replace(kGood, "lr_ratio: [1]", "lr_ratio: [1, -20]"));
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  EXPECT_NE(
      r.err.find("spec.axes.lr_ratios[1]: must be finite and > 0 (got -20)"),
      std::string::npos)
      << r.err;
}

TEST_F(CliTest, EmptyAxisIsRefusedByServerNamingField) {
  CommandResult r = SubmitText(Replace(kGood, "seed: [1]", "seed: []"));
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  EXPECT_NE(r.err.find("spec.axes.seeds: axis is empty"), std::string::npos)
      << r.err;
}

TEST_F(CliTest, BadYamlNamesLine) {
  CommandResult r = SubmitText("name: x\naxes: {parameterization: [FAFO\n");
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  EXPECT_NE(r.err.find("s.yaml:"), std::string::npos) << r.err;
}

TEST_F(CliTest, MissingFileAndUnknownSweepAreNotFound) {
  CommandResult r = Qkov({"submit", dir_->File("nope.yaml")});
  EXPECT_EQ(r.exit_code, 3);
  ExpectOneLine(r);
  r = Qkov({"status", "no-such-sweep"});
  EXPECT_EQ(r.exit_code, 3);
  ExpectOneLine(r);
  EXPECT_NE(r.err.find("no sweep named 'no-such-sweep'"), std::string::npos)
      << r.err;
  r = Qkov({"trial", "0123456789abcdef"});
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(CliTest, SqlIsReadOnly) {
  CommandResult r = Qkov({"sql", "SELECT COUNT(*) AS n FROM sweeps"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("n\n", 0), 0u) << r.out;
  for (const char* write :
       {"DELETE FROM trials", "UPDATE sweeps SET priority = 9",
        "DROP TABLE metrics",
        "INSERT INTO sweeps (name, spec_json, max_attempts, created_ms, "
        "updated_ms) "
        "VALUES ('x', '{}', 1, 0, 0)"}) {
    r = Qkov({"sql", write});
    EXPECT_EQ(r.exit_code, 2) << write;
    ExpectOneLine(r);
    EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  }
  r = Qkov({"sql", "SELECT 1; DELETE FROM trials"});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  r = Qkov({"sql", "SELEKT 1"});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r);
  EXPECT_NE(r.err.find("syntax error"), std::string::npos) << r.err;
}

TEST_F(CliTest, PresetsListAndSubmit) {
  CommandResult r = RunCommand({QKOV_CLI_BIN, "presets"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* p : {"paper-four-param", "paper-ratio", "paper-qk-ramp",
                        "paper-theory", "paper-fixed-attention"}) {
    EXPECT_NE(r.out.find(p), std::string::npos) << p;
  }
  r = Qkov({"submit", "--preset", "paper-ratio", "--quick", "--set",
            "name=preset-check"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("15 trials"), std::string::npos)
      << r.out;  // 5 ratios x 3 seeds
  // Every preset is a valid sweep the server accepts.
  for (const char* p : {"paper-four-param", "paper-qk-ramp", "paper-theory",
                        "paper-fixed-attention"}) {
    r = Qkov({"submit", "--preset", p, "--quick", "--set",
              std::string("name=check-") + p});
    ASSERT_EQ(r.exit_code, 0) << p << ": " << r.err;
    EXPECT_EQ(Qkov({"cancel", std::string("check-") + p}).exit_code, 0);
  }
  r = Qkov({"submit", "--preset", "paper-nothing"});
  EXPECT_EQ(r.exit_code, 3);
  ExpectOneLine(r);
  r = Qkov({"cancel", "preset-check"});
  EXPECT_EQ(r.exit_code, 0);
}

TEST_F(CliTest, UnreachableServerExitsFour) {
  CommandResult r = RunCommand(
      {QKOV_CLI_BIN, "--server=127.0.0.1:1", "--deadline=2", "status"});
  EXPECT_EQ(r.exit_code, 4);
  ExpectOneLine(r);
  EXPECT_NE(r.err.find("cannot reach qkov-server at 127.0.0.1:1"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, SubmitStatusCancel) {
  CommandResult r = SubmitText(Replace(kGood, "name: cli", "name: cli-cancel"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Qkov({"status", "cli-cancel"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cli-cancel"), std::string::npos);
  r = Qkov({"cancel", "cli-cancel"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 trials stopped"), std::string::npos) << r.out;
  r = Qkov({"trials", "cli-cancel", "--state", "cancelled"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  r = Qkov({"trials", "cli-cancel", "--state", "sleeping"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace qkov::testing
