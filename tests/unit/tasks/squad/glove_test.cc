// GloVe vectors mapped onto the GPT-2 vocabulary: which rows take which
// vector, how many matched, and the errors for a malformed file.
#include "worker/tasks/squad/glove.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/data_available.h"
#include "tests/unit/training/shared_data.h"

namespace qkov::training::squad {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;
const std::string kGlove = kShared + "/glove/glove.6B.100d.squad-first5.txt";

const text::Gpt2BpeTokenizer& Gpt2() { return testing::SharedGpt2(); }

// The vector of `word` as the file spells it.
std::vector<float> Vector(const std::string& word) {
  std::ifstream in(kGlove);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(word + " ", 0) != 0) continue;
    std::vector<float> v;
    std::istringstream s(line.substr(word.size() + 1));
    float x;
    while (s >> x) v.push_back(x);
    return v;
  }
  return {};
}

TEST(GloveTest, TokensTakeTheVectorsOfTheirWords) {
  QKOV_SKIP_WITHOUT_DATA("glove", "tokenizers");
  const text::Gpt2BpeTokenizer& bpe = Gpt2();
  torch::Tensor e = torch::full({bpe.vocab_size(), 100}, 7.0f);
  absl::StatusOr<GloveMapping> m = InitEmbeddingFromGlove(kGlove, bpe, e);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->words, 5866);
  // " the" (262), "the" (1169) and " The" (383) all take "the".
  const std::vector<float> the = Vector("the");
  ASSERT_EQ(the.size(), 100u);
  const torch::Tensor want = torch::tensor(the);
  for (int32_t id : {262, 1169, 383}) {
    ASSERT_EQ(bpe.token_bytes(id) == " the" || bpe.token_bytes(id) == "the" ||
                  bpe.token_bytes(id) == " The",
              true)
        << id;
    EXPECT_TRUE(e[id].equal(want)) << id;
  }
  // " Broncos" is one GPT-2 token and a GloVe word.
  const std::vector<int32_t> broncos = bpe.Encode(" Broncos");
  ASSERT_EQ(broncos.size(), 1u);
  EXPECT_TRUE(e[broncos[0]].equal(torch::tensor(Vector("broncos"))));
  // Unmatched rows keep their values; the count is the rows that changed.
  EXPECT_TRUE(e[bpe.end_of_text_id()].eq(7.0f).all().item<bool>());
  const int64_t changed = e.ne(7.0f).any(1).sum().item<int64_t>();
  EXPECT_EQ(m->matched, changed);
  EXPECT_GT(m->matched, 5000);
  EXPECT_LT(m->matched, bpe.vocab_size());
  EXPECT_EQ(m->sha256,
            "947c1e053667afabaa540c3d30abbc8b04a4a5209fd4c79ded477b9af25c4aa0");
}

TEST(GloveTest, MalformedFilesNameFileAndLine) {
  QKOV_SKIP_WITHOUT_DATA("glove", "tokenizers");
  const text::Gpt2BpeTokenizer& bpe = Gpt2();
  torch::Tensor wide = torch::zeros({bpe.vocab_size(), 300});
  absl::StatusOr<GloveMapping> m = InitEmbeddingFromGlove(kGlove, bpe, wide);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            kGlove +
                ":1: a word and 300 numbers expected (the embedding's "
                "width), found 100 values");
  const std::string path = ::testing::TempDir() + "/glove-bad.txt";
  std::ofstream(path) << "the 0.1 0.2\nof 0.3 x\n";
  torch::Tensor narrow = torch::zeros({bpe.vocab_size(), 2});
  m = InitEmbeddingFromGlove(path, bpe, narrow);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), path + ":2: value 2 \"x\" is not a number");
  EXPECT_EQ(InitEmbeddingFromGlove(path + ".none", bpe, narrow).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace qkov::training::squad
