// SQuAD F1 / exact match: hand-worked cases, the whole shipped dev set
// (a gold answer scores 1, an empty answer 0), and qkov's values against
// the official script's definitions (official_eval.py, run by python3) on
// predictions built from the dev set.
#include "worker/tasks/squad/squad_eval.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/data_available.h"
#include "worker/tasks/squad/squad_data.h"

namespace qkov::training::squad {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

TEST(SquadEvalTest, NormalizationAsTheOfficialScript) {
  QKOV_SKIP_WITHOUT_DATA("squad");
  EXPECT_EQ(NormalizeAnswer("The  Denver Broncos!"), "denver broncos");
  EXPECT_EQ(NormalizeAnswer("U.S."), "us");
  // Punctuation goes before articles: "an-apple" becomes one word.
  EXPECT_EQ(NormalizeAnswer("an-apple"), "anapple");
  EXPECT_EQ(NormalizeAnswer("the theater, a play"), "theater play");
  // Only ASCII punctuation is removed.
  EXPECT_EQ(NormalizeAnswer("“golden anniversary”"), "“golden anniversary”");
  // Python's full lower-case mapping (final sigma) and Unicode spaces.
  EXPECT_EQ(NormalizeAnswer("ΣΑΣ\u00a0Ångström"), "σας ångström");
  EXPECT_EQ(NormalizeAnswer(" \t\n"), "");
}

TEST(SquadEvalTest, HandWorkedScores) {
  QKOV_SKIP_WITHOUT_DATA("squad");
  EXPECT_DOUBLE_EQ(F1Score("the Denver Broncos", "Denver Broncos"), 1.0);
  EXPECT_DOUBLE_EQ(ExactMatch("the Denver Broncos", "Denver Broncos"), 1.0);
  // precision 1, recall 1/2: 2 * 1 * 0.5 / 1.5.
  EXPECT_DOUBLE_EQ(F1Score("Denver", "Denver Broncos"), 2.0 / 3.0);
  // [broncos of denver] vs [denver broncos]: 2 shared, p 2/3, r 1 -> 0.8.
  EXPECT_DOUBLE_EQ(F1Score("Broncos of Denver!", "Denver Broncos"), 0.8);
  EXPECT_DOUBLE_EQ(ExactMatch("Broncos of Denver!", "Denver Broncos"), 0.0);
  // Counts are a multiset: [x x y] vs [y y] share one y: p 1/3, r 1/2.
  EXPECT_DOUBLE_EQ(F1Score("x x y", "y y"), 0.4);
  EXPECT_DOUBLE_EQ(F1Score("", "Denver Broncos"), 0.0);
  EXPECT_DOUBLE_EQ(F1Score("Denver Broncos", ""), 0.0);
  // Several golds (dev question 56be4db0acb8001400a502ee): against
  // "Santa Clara, California" p 1, r 2/3 -> 0.8; against the 11-token gold
  // p 1, r 2/11 -> 4/13; against "Levi's Stadium" 0. The maximum: 0.8.
  const std::vector<std::string> golds = {
      "Santa Clara, California", "Levi's Stadium",
      "Levi's Stadium in the San Francisco Bay Area at Santa Clara, "
      "California."};
  EXPECT_DOUBLE_EQ(F1Score("Santa Clara", golds[2]), 4.0 / 13.0);
  EXPECT_DOUBLE_EQ(MaxF1("Santa Clara", golds), 0.8);
  EXPECT_DOUBLE_EQ(MaxExactMatch("levis stadium", golds), 1.0);
  EXPECT_DOUBLE_EQ(MaxExactMatch("Santa Clara", golds), 0.0);
  EXPECT_DOUBLE_EQ(MaxF1("anything", {}), 0.0);
}

SquadData Dev() {
  SquadSource s;
  s.path = kShared + "/squad/dev-v1.1-all.json";
  absl::StatusOr<SquadData> d = LoadSquad(s);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : SquadData();
}

TEST(SquadEvalTest, GoldScoresOneAndEmptyScoresZeroOnTheDevSet) {
  QKOV_SKIP_WITHOUT_DATA("squad");
  const SquadData dev = Dev();
  ASSERT_EQ(dev.questions.size(), 10570u);
  int64_t answers = 0, empty_em = 0, empty_gold = 0;
  for (const SquadQuestion& q : dev.questions) {
    for (const std::string& g : q.answers) {
      ++answers;
      ASSERT_DOUBLE_EQ(MaxF1(g, q.answers), NormalizeAnswer(g).empty() ? 0 : 1)
          << q.id << ": " << g;
      ASSERT_DOUBLE_EQ(MaxExactMatch(g, q.answers), 1.0) << q.id;
    }
    ASSERT_DOUBLE_EQ(MaxF1("", q.answers), 0.0) << q.id;
    empty_em += MaxExactMatch("", q.answers) > 0;
    bool any_empty = false;
    for (const std::string& g : q.answers)
      any_empty |= NormalizeAnswer(g).empty();
    empty_gold += any_empty;
  }
  EXPECT_EQ(answers, 34726);
  // An empty prediction matches exactly only a gold that normalises to
  // nothing (an answer such as "the").
  EXPECT_EQ(empty_em, empty_gold);
}

TEST(SquadEvalTest, EqualsTheOfficialDefinitionOnDevSetPredictions) {
  QKOV_SKIP_WITHOUT_DATA("squad");
  const SquadData dev = Dev();
  ASSERT_FALSE(dev.questions.empty());
  const std::string path = ::testing::TempDir() + "/squad_predictions.jsonl";
  std::ofstream out(path);
  int64_t cases = 0;
  auto write = [&](const std::string& prediction, const SquadQuestion& q) {
    out << nlohmann::json{{"prediction", prediction},
                          {"golds", q.answers},
                          {"f1", MaxF1(prediction, q.answers)},
                          {"em", MaxExactMatch(prediction, q.answers)}}
               .dump()
        << "\n";
    ++cases;
  };
  for (size_t i = 0; i < dev.questions.size(); ++i) {
    const SquadQuestion& q = dev.questions[i];
    const std::string& g = q.answers[0];
    // Partial and padded answers, the question itself, the context's start,
    // another question's answer, and an empty answer.
    const std::vector<std::string> words = absl::StrSplit(g, ' ');
    const size_t n = words.size();
    write(absl::StrJoin(words.begin(), words.begin() + (n + 1) / 2, " "), q);
    write(absl::StrJoin(words.begin() + n / 3, words.end(), " "), q);
    write("The " + g + ", " + words[0] + ".", q);
    write(q.question, q);
    write(q.context.substr(0, text::ByteOffsetOfCodePoint(q.context, 40)), q);
    write(dev.questions[(i + 1) % dev.questions.size()].answers[0], q);
    write("", q);
  }
  out.close();
  const std::string command =
      "python3 " QKOV_TESTS_DIR "/unit/tasks/squad/official_eval.py " + path;
  EXPECT_EQ(std::system(command.c_str()), 0)
      << command << ": qkov's F1/EM differ from the official definition";
  EXPECT_EQ(cases, 7 * 10570);
}

}  // namespace
}  // namespace qkov::training::squad
