// qkov-data, the real binary: a generic JSON Lines file of the reference
// texts (each text split at spaces into words) comes out with exactly the ids
// Hugging Face gives those texts; the summary counts the shipped HateXplain
// test split; a truncated file is one readable error, exit 1.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/integration/harness.h"

namespace qkov {
namespace {

using ::qkov::testing::CommandResult;
using ::qkov::testing::RunCommand;

const std::string kShared = QKOV_SHARED_DATA_DIR;
const std::string kVocab = kShared + "/tokenizers/bert-base-uncased/vocab.txt";

TEST(DataLookTest, JsonOutputForAGenericFileHasTheReferenceIds) {
  std::ifstream in(kShared +
                   "/tokenizers/testvectors/bert_base_uncased_real.jsonl");
  ASSERT_TRUE(in);
  const std::string path = ::testing::TempDir() + "/reference.jsonl";
  std::vector<std::vector<int>> want;
  {
    std::ofstream out(path);
    std::string line;
    while (std::getline(in, line)) {
      const nlohmann::json c = nlohmann::json::parse(line);
      std::vector<std::string> words = absl::StrSplit(
          c["text"].get<std::string>(), ' ', absl::SkipWhitespace());
      if (words.empty()) continue;
      want.push_back(c["ids"].get<std::vector<int>>());
      out << nlohmann::json{{"tokens", words}, {"label", 0}}.dump() << "\n";
    }
  }
  const CommandResult r =
      RunCommand({QKOV_DATA_BIN, "--format=jsonl", "--path=" + path,
                  "--vocab=" + kVocab, "--max_len=100000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  size_t i = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(i, want.size());
    EXPECT_EQ(nlohmann::json::parse(line)["ids"].get<std::vector<int>>(),
              want[i])
        << "example " << i;
    ++i;
  }
  EXPECT_EQ(i, want.size());
  EXPECT_EQ(want.size(), 960u);
}

TEST(DataLookTest, SummaryCountsLabelsAndTruncation) {
  const CommandResult r =
      RunCommand({QKOV_DATA_BIN, "--format=hatexplain",
                  "--path=" + kShared + "/hatexplain/test.jsonl",
                  "--vocab=" + kVocab, "--max_len=32", "--show=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1924 examples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("label 0 hatespeech   594"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("longer than --max_len 32 are truncated"),
            std::string::npos);
}

TEST(DataLookTest, ATruncatedFileIsOneReadableError) {
  const std::string path = ::testing::TempDir() + "/cut.jsonl";
  std::ofstream(path)
      << "{\"tokens\": [\"a\"], \"label\": 0}\n{\"tokens\": [\"b\"";
  const CommandResult r =
      RunCommand({QKOV_DATA_BIN, "--path=" + path, "--vocab=" + kVocab});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("qkov-data: " + path + ":2: not valid JSON (", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

// --help of each program with Abseil flags lists that program's own flags
// with their defaults (common/flags_help.h), and no library's.
TEST(ProgramHelpTest, EachProgramListsItsOwnFlags) {
  struct Case {
    std::string bin;
    std::vector<std::string> flags;
  };
  for (const Case& c :
       {Case{QKOV_SERVER_BIN, {"--db", "--http_listen", "--token_file"}},
        Case{QKOV_WORKER_BIN, {"--server", "--device", "--batch_trials"}},
        Case{QKOV_DATA_BIN, {"--format", "--path", "--vocab"}}}) {
    CommandResult r = RunCommand({c.bin, "--help"});
    const std::string text = r.out + r.err;
    EXPECT_EQ(text.find("No flags matched"), std::string::npos) << c.bin;
    for (const std::string& flag : c.flags) {
      EXPECT_NE(text.find("    " + flag + " ("), std::string::npos)
          << c.bin << " --help lacks " << flag << ":\n"
          << text;
    }
    EXPECT_NE(text.find("default: "), std::string::npos) << c.bin;
    // Library flags (gRPC's, Abseil's own) stay behind --helpfull.
    EXPECT_EQ(text.find("--flagfile"), std::string::npos) << c.bin;
  }
}

}  // namespace
}  // namespace qkov
