// The GPT-2 byte-level BPE tokenizer against OpenAI's encoder.py (edge
// cases) and js-tiktoken / Hugging Face (960 real texts), from
// shared/data/tokenizers/testvectors: every id, and the byte spans put back
// together give the text.
#include "worker/tasks/text/gpt2_bpe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/data_available.h"
#include "tests/unit/training/shared_data.h"
#include "worker/tasks/text/text_defaults.h"

namespace qkov::training::text {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;
const std::string kGpt2 = kShared + "/tokenizers/gpt2";

Gpt2BpeOptions Options() { return testing::SharedGpt2Options(); }

const Gpt2BpeTokenizer& Gpt2() { return testing::SharedGpt2(); }

// Every case of one test-vector file; returns how many matched.
int CheckFile(const std::string& name, int* cases) {
  std::ifstream in(kShared + "/tokenizers/testvectors/" + name);
  EXPECT_TRUE(in) << name;
  std::string line;
  int matched = 0;
  *cases = 0;
  while (std::getline(in, line)) {
    const nlohmann::json c = nlohmann::json::parse(line);
    ++*cases;
    const std::string text = c["text"].get<std::string>();
    std::vector<ByteSpan> spans;
    const std::vector<int32_t> ids = Gpt2().Encode(text, &spans);
    const auto want = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(ids, want) << name << " case " << *cases << ": " << text;
    // The spans tile the text, and each is its token's bytes.
    if (spans.size() != ids.size()) {
      ADD_FAILURE() << name << " case " << *cases << ": " << spans.size()
                    << " spans for " << ids.size() << " ids";
      continue;
    }
    int32_t at = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(spans[i].begin, at);
      EXPECT_EQ(text.substr(spans[i].begin, spans[i].end - spans[i].begin),
                Gpt2().token_bytes(ids[i]));
      at = spans[i].end;
    }
    EXPECT_EQ(at, static_cast<int32_t>(text.size()));
    EXPECT_EQ(Gpt2().Decode(ids), text);
    matched += ids == want;
  }
  return matched;
}

TEST(Gpt2BpeTest, MatchesOpenAiOnTheEdgeCases) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  int cases = 0;
  EXPECT_EQ(CheckFile("gpt2_bpe.jsonl", &cases), cases);
  EXPECT_EQ(cases, 34);
}

TEST(Gpt2BpeTest, MatchesTiktokenOnRealTexts) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  int cases = 0;
  EXPECT_EQ(CheckFile("gpt2_real.jsonl", &cases), cases);
  EXPECT_EQ(cases, 960);
}

TEST(Gpt2BpeTest, VocabularyIsReadAndChecked) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  const Gpt2BpeTokenizer& t = Gpt2();
  EXPECT_EQ(t.vocab_size(), 50257);
  EXPECT_EQ(t.end_of_text_id(), 50256);
  EXPECT_EQ(t.token_name(t.end_of_text_id()), "<|endoftext|>");
  EXPECT_EQ(t.token_name(220), "\xC4\xA0");  // "Ġ", the space byte's symbol
  EXPECT_EQ(t.token_bytes(220), " ");
  EXPECT_EQ(t.encoder_sha256(), defaults::kGpt2EncoderSha256);
  EXPECT_EQ(t.merges_sha256(), defaults::kGpt2MergesSha256);
  // Text that is not UTF-8 still encodes, byte for byte.
  const std::string broken = "ab\xFF\xFE cd";
  EXPECT_EQ(t.Decode(t.Encode(broken)), broken);
}

std::string Temp(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << body;
  return path;
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Gpt2BpeTest, AnotherFileIsRefusedByItsChecksum) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  Gpt2BpeOptions o = Options();
  o.merges_path = Temp("vocab.bpe", FileText(kGpt2 + "/vocab.bpe") + "Ġ Ġ\n");
  auto t = Gpt2BpeTokenizer::Load(o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("sha256"), std::string::npos)
      << t.status();
  o = Options();
  o.encoder_path = ::testing::TempDir() + "/no-such-encoder.json";
  EXPECT_EQ(Gpt2BpeTokenizer::Load(o).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(Gpt2BpeTest, MalformedFilesNameFileAndLine) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  Gpt2BpeOptions o = Options();
  o.encoder_sha256.clear();
  o.merges_sha256.clear();
  // A truncated encoder.json.
  const std::string encoder = FileText(kGpt2 + "/encoder.json");
  o.encoder_path = Temp("cut-encoder.json", encoder.substr(0, 5000));
  auto t = Gpt2BpeTokenizer::Load(o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(o.encoder_path + ":1: not valid JSON"),
            std::string::npos)
      << t.status();
  // A merge line with three parts, on line 3.
  o = Options();
  o.merges_sha256.clear();
  o.merges_path = Temp("bad.bpe", "#version: 0.2\nĠ t\nĠ a b\n");
  t = Gpt2BpeTokenizer::Load(o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            o.merges_path + ":3: a merge must be two symbols and one space");
  // A merge whose result has no id.
  o.merges_path = Temp("unknown.bpe", "#version: 0.2\nĠ t\nq \xC4\x8A\n");
  t = Gpt2BpeTokenizer::Load(o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(o.merges_path + ":3: merge"),
            std::string::npos)
      << t.status();
}

TEST(Gpt2BpeTest, CodePointOffsetsBecomeByteOffsets) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  const std::string text = "Café “x” 😂!";
  EXPECT_EQ(ByteOffsetOfCodePoint(text, 0), 0);
  EXPECT_EQ(ByteOffsetOfCodePoint(text, 3), 3);
  EXPECT_EQ(ByteOffsetOfCodePoint(text, 4), 5);    // after é (2 bytes)
  EXPECT_EQ(ByteOffsetOfCodePoint(text, 6), 9);    // after “ (3 bytes)
  EXPECT_EQ(ByteOffsetOfCodePoint(text, 10), 18);  // after 😂 (4 bytes)
  EXPECT_EQ(ByteOffsetOfCodePoint(text, 99), static_cast<int64_t>(text.size()));
}

}  // namespace
}  // namespace qkov::training::text
