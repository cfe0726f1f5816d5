// The WordPiece tokenizer against Hugging Face's BertTokenizer on the
// reference tokenizations in shared/data/tokenizers/testvectors (34 edge
// cases, 960 real texts): every id and every token string.
#include "worker/tasks/text/wordpiece.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/data_available.h"

namespace qkov::training::text {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;
const std::string kVocab = kShared + "/tokenizers/bert-base-uncased/vocab.txt";

std::unique_ptr<WordPieceTokenizer> Bert() {
  WordPieceOptions o;
  o.vocab_path = kVocab;
  auto t = WordPieceTokenizer::Load(o);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : nullptr;
}

// Every case of one test-vector file; returns how many matched.
int CheckFile(const WordPieceTokenizer& t, const std::string& name,
              int* cases) {
  std::ifstream in(kShared + "/tokenizers/testvectors/" + name);
  EXPECT_TRUE(in) << name;
  std::string line;
  int matched = 0;
  *cases = 0;
  while (std::getline(in, line)) {
    const nlohmann::json c = nlohmann::json::parse(line);
    ++*cases;
    std::vector<std::string> tokens;
    const std::vector<int32_t> ids =
        t.Encode(c["text"].get<std::string>(), &tokens);
    const auto want_ids = c["ids"].get<std::vector<int32_t>>();
    const auto want_tokens = c["tokens"].get<std::vector<std::string>>();
    EXPECT_EQ(ids, want_ids)
        << name << " case " << *cases << ": " << c["text"].get<std::string>();
    EXPECT_EQ(tokens, want_tokens) << name << " case " << *cases;
    matched += ids == want_ids && tokens == want_tokens;
  }
  return matched;
}

TEST(WordPieceTest, MatchesHuggingFaceOnTheEdgeCases) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  auto t = Bert();
  ASSERT_NE(t, nullptr);
  int cases = 0;
  EXPECT_EQ(CheckFile(*t, "bert_base_uncased_wordpiece.jsonl", &cases), cases);
  EXPECT_EQ(cases, 34);
}

TEST(WordPieceTest, MatchesHuggingFaceOnRealTexts) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  auto t = Bert();
  ASSERT_NE(t, nullptr);
  int cases = 0;
  EXPECT_EQ(CheckFile(*t, "bert_base_uncased_real.jsonl", &cases), cases);
  EXPECT_EQ(cases, 960);
}

TEST(WordPieceTest, VocabularyIsReadAndChecked) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  auto t = Bert();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab_size(), 30522);
  EXPECT_EQ(t->pad_id(), 0);
  EXPECT_EQ(t->unk_id(), 100);
  EXPECT_EQ(t->token(101), "[CLS]");
  EXPECT_EQ(t->vocab_sha256(), kBertBaseUncasedVocabSha256);
}

TEST(WordPieceTest, AnotherVocabularyIsRefusedByItsChecksum) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  const std::string path = ::testing::TempDir() + "/vocab.txt";
  {
    std::ifstream in(kVocab);
    std::ofstream out(path);
    out << in.rdbuf() << "qkov-extra-token\n";
  }
  WordPieceOptions o;
  o.vocab_path = path;
  auto t = WordPieceTokenizer::Load(o);
  ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find(path + ": sha256 "), std::string::npos)
      << t.status();
  o.vocab_sha256 = "";  // a user's own vocabulary, not checked
  EXPECT_TRUE(WordPieceTokenizer::Load(o).ok());
  {
    std::ifstream in(kVocab);
    std::ofstream out(path);
    out << in.rdbuf() << "extra\n";  // already token 4469 (line 4470)
  }
  EXPECT_EQ(WordPieceTokenizer::Load(o).status().message(),
            path + ":30523: token 'extra' appears twice");
  o.vocab_path = path + ".missing";
  EXPECT_EQ(WordPieceTokenizer::Load(o).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(WordPieceTest, WordsCarryTheirIndexToEveryPiece) {
  QKOV_SKIP_WITHOUT_DATA("tokenizers");
  auto t = Bert();
  ASSERT_NE(t, nullptr);
  std::vector<int32_t> piece_word;
  const std::vector<int32_t> ids =
      t->EncodeWords({"i", "like", "strawberries", "!"}, &piece_word);
  EXPECT_EQ(ids, (std::vector<int32_t>{1045, 2066, 13137, 20968, 999}));
  EXPECT_EQ(piece_word, (std::vector<int32_t>{0, 1, 2, 2, 3}));
}

}  // namespace
}  // namespace qkov::training::text
