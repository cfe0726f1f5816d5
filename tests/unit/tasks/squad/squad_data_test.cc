// SQuAD loading (counts of the shipped dev set, article ranges, v2.0's
// unanswerable questions, errors naming file and place) and the prompt,
// answer and answer-span positions built from a question.
#include "worker/tasks/squad/squad_data.h"

#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/match.h"
#include "tests/data_available.h"
#include "tests/unit/training/shared_data.h"

namespace qkov::training::squad {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

const text::Gpt2BpeTokenizer& Gpt2() { return testing::SharedGpt2(); }

absl::StatusOr<SquadData> Load(const std::string& path, int32_t begin = 0,
                               int32_t end = 0) {
  SquadSource s;
  s.path = path;
  s.article_begin = begin;
  s.article_end = end;
  return LoadSquad(s);
}

int64_t Answers(const SquadData& d) {
  int64_t n = 0;
  for (const SquadQuestion& q : d.questions) n += q.answers.size();
  return n;
}

TEST(SquadDataTest, ShippedFilesReadToTheirCounts) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  absl::StatusOr<SquadData> first5 =
      Load(kShared + "/squad/dev-v1.1-first5.json");
  ASSERT_TRUE(first5.ok()) << first5.status();
  EXPECT_EQ(first5->version, "1.1");
  EXPECT_EQ(first5->articles, 5);
  EXPECT_EQ(first5->questions.size(), 1877u);
  EXPECT_EQ(Answers(*first5), 5623);
  EXPECT_EQ(first5->sha256,
            "b70b4e0e1f137d5f5a433812d70835a515832a2913ef5773ad0ae9b2a5a3f355");
  const SquadQuestion& q = first5->questions[0];
  EXPECT_EQ(q.id, "56be4db0acb8001400a502ec");
  EXPECT_EQ(q.title, "Super_Bowl_50");
  EXPECT_EQ(q.answers, std::vector<std::string>(3, "Denver Broncos"));
  EXPECT_EQ(q.answer_starts[0], 177);

  // Training and evaluation articles of the whole dev set.
  absl::StatusOr<SquadData> train =
      Load(kShared + "/squad/dev-v1.1-all.json", 0, 40);
  absl::StatusOr<SquadData> eval =
      Load(kShared + "/squad/dev-v1.1-all.json", 40);
  ASSERT_TRUE(train.ok() && eval.ok());
  EXPECT_EQ(train->articles, 40);
  EXPECT_EQ(eval->articles, 8);
  EXPECT_EQ(train->questions.size() + eval->questions.size(), 10570u);
  EXPECT_EQ(Answers(*train) + Answers(*eval), 34726);
  EXPECT_EQ(eval->questions.front().article, 40);
}

std::string Temp(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << body;
  return path;
}

TEST(SquadDataTest, VersionTwoKeepsAnswerableQuestionsOnly) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  const std::string path = Temp("v2.json", R"({"version": "v2.0", "data": [
    {"title": "T", "paragraphs": [{"context": "Paris is in France.", "qas": [
      {"id": "a", "question": "Where is Paris?", "is_impossible": false,
       "answers": [{"text": "France", "answer_start": 12}]},
      {"id": "b", "question": "Where is Rome?", "is_impossible": true,
       "answers": [], "plausible_answers": [{"text": "France", "answer_start": 12}]}
    ]}]}]})");
  absl::StatusOr<SquadData> d = Load(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->questions.size(), 1u);
  EXPECT_EQ(d->questions[0].id, "a");
  EXPECT_EQ(d->unanswerable, 1);
}

TEST(SquadDataTest, BadFilesNameFileAndPlace) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  std::ifstream in(kShared + "/squad/dev-v1.1-first5.json");
  const std::string body(std::istreambuf_iterator<char>(in), {});
  struct Case {
    std::string body, want;
  };
  const std::vector<Case> cases = {
      {body.substr(0, body.size() / 2), ":1: not valid JSON"},
      {"{\"data\": [{\"title\": \"T\",\n \"paragraphs\": [}]}",
       ":2: not valid JSON"},
      {R"({"data": {}})", ": top level: \"data\" must be a list"},
      {R"({"data": [{"title": "T", "paragraphs": [{"qas": []}]}]})",
       ": data[0].paragraphs[0]: \"context\" must be a string"},
      {R"({"data": [{"title": "T", "paragraphs": [{"context": "abc", "qas": [
         {"id": "x", "question": "q?", "answers": [{"text": "bc", "answer_start": 2}]}]}]}]})",
       ": data[0].paragraphs[0].qas[0].answers[0]: \"answer_start\" must be an "
       "integer with the answer inside the context (3 characters)"},
      {R"({"data": [{"title": "T", "paragraphs": [{"context": "abc", "qas": [
         {"id": "x", "question": "q?", "answers": []}]}]}]})",
       "question x has no answers and is not is_impossible"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path =
        Temp("bad" + std::to_string(i) + ".json", cases[i].body);
    absl::StatusOr<SquadData> d = Load(path);
    ASSERT_FALSE(d.ok()) << i;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << i;
    EXPECT_TRUE(absl::StartsWith(d.status().message(), path)) << d.status();
    EXPECT_TRUE(absl::StrContains(d.status().message(), cases[i].want))
        << i << ": " << d.status();
  }
  EXPECT_EQ(Load(::testing::TempDir() + "/none.json").status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<SquadData> none =
      Load(kShared + "/squad/dev-v1.1-first5.json", 5);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(),
                                "articles [5, 0) select none of its 5"))
      << none.status();
}

TEST(SquadDataTest, PromptAnswerAndAnswerSpanPositions) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  SquadQuestion q;
  q.id = "t";
  q.question = "Who won?";
  q.context = "In 2016 the Denver Broncos beat the Carolina Panthers 24–10.";
  q.answers = {"Denver Broncos", "the Denver Broncos"};
  q.answer_starts = {12, 8};
  PromptOptions o;
  absl::StatusOr<SquadExample> ex = BuildExample(q, Gpt2(), o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_EQ(Gpt2().Decode(ex->prompt), "Q: Who won? C: " + q.context + " A:");
  EXPECT_EQ(Gpt2().Decode(ex->answer), " Denver Broncos<|endoftext|>");
  EXPECT_EQ(ex->answer.back(), Gpt2().end_of_text_id());
  EXPECT_EQ(ex->gold, q.answers);
  // The relevant positions are exactly the tokens " Denver" and " Broncos".
  ASSERT_EQ(ex->relevant.size(), ex->prompt.size());
  std::string marked;
  for (size_t i = 0; i < ex->prompt.size(); ++i)
    if (ex->relevant[i]) marked += Gpt2().Decode({ex->prompt[i]});
  EXPECT_EQ(marked, " Denver Broncos");

  // A crop of 5 characters either side.
  o.crop_chars = 5;
  ex = BuildExample(q, Gpt2(), o);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(Gpt2().Decode(ex->prompt),
            "Q: Who won? C:  the Denver Broncos beat A:");
  // Crops count code points, as answer_start does ("–" is one, 3 bytes).
  SquadQuestion score = q;
  score.answers = {"10."};
  score.answer_starts = {57};
  ex = BuildExample(score, Gpt2(), o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_EQ(Gpt2().Decode(ex->prompt), "Q: Who won? C: s 24–10. A:");

  // A prompt budget too small for the full crop shrinks it; one too small
  // for the answer alone refuses the question.
  o.crop_chars = 200;
  o.max_prompt_tokens = 14;
  ex = BuildExample(q, Gpt2(), o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_LE(ex->prompt.size(), 14u);
  EXPECT_LT(ex->crop_chars, 200);
  o.max_prompt_tokens = 5;
  EXPECT_EQ(BuildExample(q, Gpt2(), o).status().code(),
            absl::StatusCode::kNotFound);

  // An answer cut to max_answer_tokens still ends with <|endoftext|>.
  o = PromptOptions();
  o.max_answer_tokens = 1;
  ex = BuildExample(q, Gpt2(), o);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(Gpt2().Decode(ex->answer), " Denver<|endoftext|>");

  // The answer span must be where answer_start says.
  q.answer_starts[0] = 3;
  EXPECT_EQ(BuildExample(q, Gpt2(), PromptOptions()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SquadDataTest, EveryShippedQuestionBuildsWithItsAnswerMarked) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  absl::StatusOr<SquadData> d = Load(kShared + "/squad/dev-v1.1-first5.json");
  ASSERT_TRUE(d.ok());
  int64_t built = 0, full_crop = 0;
  for (const SquadQuestion& q : d->questions) {
    absl::StatusOr<SquadExample> ex = BuildExample(q, Gpt2(), PromptOptions());
    ASSERT_TRUE(ex.ok()) << ex.status();
    ++built;
    std::string marked;
    for (size_t i = 0; i < ex->prompt.size(); ++i)
      if (ex->relevant[i]) marked += Gpt2().Decode({ex->prompt[i]});
    // The marked tokens cover the answer (and at most the rest of the words
    // it starts or ends inside).
    EXPECT_TRUE(absl::StrContains(marked, q.answers[0]))
        << q.id << ": " << marked;
    EXPECT_LE(ex->prompt.size(), 204u);
    full_crop += ex->crop_chars == 200;
  }
  EXPECT_EQ(built, 1877);
  // docs/squad.md: every shipped question fits at the full crop.
  EXPECT_EQ(full_crop, built);
}

}  // namespace
}  // namespace qkov::training::squad
