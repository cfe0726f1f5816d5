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
#include "tests/data_available.h"
#include "tests/integration/harness.h"

namespace qkov {
namespace {

using ::qkov::testing::CommandResult;
using ::qkov::testing::RunCommand;

const std::string kShared = QKOV_SHARED_DATA_DIR;
const std::string kVocab = kShared + "/tokenizers/bert-base-uncased/vocab.txt";

// Each line of `out` is a JSON object whose "ids" are want[line], and
// there are as many lines.
void ExpectIdsPerLine(const std::string& out,
                      const std::vector<std::vector<int>>& want) {
  std::istringstream lines(out);
  std::string line;
  size_t i = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(i, want.size());
    EXPECT_EQ(nlohmann::json::parse(line)["ids"].get<std::vector<int>>(),
              want[i])
        << "line " << i;
    ++i;
  }
  EXPECT_EQ(i, want.size());
}

TEST(DataLookTest, JsonOutputForAGenericFileHasTheReferenceIds) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "tokenizers");
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
  ExpectIdsPerLine(r.out, want);
  EXPECT_EQ(want.size(), 960u);
}

TEST(DataLookTest, SummaryCountsLabelsAndTruncation) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "tokenizers");
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
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "tokenizers");
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

const std::string kEncoder = kShared + "/tokenizers/gpt2/encoder.json";
const std::string kMerges = kShared + "/tokenizers/gpt2/vocab.bpe";

// --tokenizer=gpt2 --format=text: the reference texts, one per line, come
// out with the ids OpenAI's encoder gives them.
TEST(DataLookTest, Gpt2TextModeGivesTheReferenceIds) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "tokenizers");
  std::vector<std::vector<int>> want;
  const std::string path = ::testing::TempDir() + "/gpt2-texts.txt";
  {
    std::ofstream out(path);
    for (const char* file : {"gpt2_bpe.jsonl", "gpt2_real.jsonl"}) {
      std::ifstream in(kShared + "/tokenizers/testvectors/" + file);
      ASSERT_TRUE(in) << file;
      std::string line;
      while (std::getline(in, line)) {
        const nlohmann::json c = nlohmann::json::parse(line);
        const std::string text = c["text"].get<std::string>();
        if (text.find('\n') != std::string::npos) continue;  // one per line
        out << text << "\n";
        want.push_back(c["ids"].get<std::vector<int>>());
      }
    }
  }
  ASSERT_GT(want.size(), 100u);
  const CommandResult r = RunCommand(
      {QKOV_DATA_BIN, "--tokenizer=gpt2", "--format=text", "--path=" + path,
       "--encoder=" + kEncoder, "--merges=" + kMerges, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectIdsPerLine(r.out, want);
  // Without --json: the ids, space-separated.
  const CommandResult plain = RunCommand(
      {QKOV_DATA_BIN, "--tokenizer=gpt2", "--format=text", "--path=" + path,
       "--encoder=" + kEncoder, "--merges=" + kMerges});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.substr(0, plain.out.find('\n')), "72 588 36973");
}

// --format=squad reads the file as a trial does: an independent script
// turns the pieces back into text and finds the question, the context crop
// and, in the marked pieces, the answer.
TEST(DataLookTest, SquadPromptsCarryTheQuestionAndTheMarkedAnswer) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "tokenizers");
  const std::string squad = kShared + "/squad/dev-v1.1-all.json";
  const CommandResult r =
      RunCommand({QKOV_DATA_BIN, "--format=squad", "--path=" + squad,
                  "--article_begin=40", "--encoder=" + kEncoder,
                  "--merges=" + kMerges, "--crop_chars=60", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = ::testing::TempDir() + "/squad.jsonl";
  std::ofstream(out) << r.out;
  const CommandResult check =
      RunCommand({"/usr/bin/python3",
                  QKOV_SOURCE_DIR "/tests/integration/squad_data_check.py", out,
                  squad, kEncoder});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out.rfind("checked ", 0), 0u) << check.out;

  const CommandResult summary = RunCommand(
      {QKOV_DATA_BIN, "--format=squad", "--path=" + squad, "--article_begin=40",
       "--encoder=" + kEncoder, "--merges=" + kMerges, "--show=1"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("version 1.1, 8 articles"), std::string::npos)
      << summary.out;
  EXPECT_NE(summary.out.find("prompts built: "), std::string::npos);
  EXPECT_NE(summary.out.find("Q(48)"), std::string::npos) << summary.out;

  const CommandResult bad =
      RunCommand({QKOV_DATA_BIN, "--format=squad", "--path=" + squad,
                  "--encoder=" + kEncoder});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "qkov-data: --path, --encoder and --merges are required\n");
  const std::string cut = ::testing::TempDir() + "/cut.json";
  std::ofstream(cut) << "{\"version\": \"1.1\", \"data\": [";
  const CommandResult truncated =
      RunCommand({QKOV_DATA_BIN, "--format=squad", "--path=" + cut,
                  "--encoder=" + kEncoder, "--merges=" + kMerges});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_EQ(truncated.err.rfind("qkov-data: " + cut + ":1: ", 0), 0u)
      << truncated.err;
}

// --help of each program with Abseil flags lists that program's own flags
// with their defaults (common/flags_help.h), and no library's.
TEST(ProgramHelpTest, EachProgramListsItsOwnFlags) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "tokenizers");
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
