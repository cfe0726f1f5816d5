// The text loaders on the shipped data (counts from each folder's README)
// and on small hand-written files in every format, and the errors a bad file
// gives: one line naming the file and line.
#include "worker/tasks/text/datasets.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/data_available.h"

namespace qkov::training::text {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

std::vector<int> LabelCounts(const TextData& d) {
  std::vector<int> n(d.label_names.size(), 0);
  for (const auto& e : d.examples) ++n[e.label];
  return n;
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(TextDatasetsTest, HateXplainSplitsHaveTheirDocumentedCounts) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  TextSource src;
  src.format = TextFormat::kHateXplain;
  src.path = kShared + "/hatexplain/test.jsonl";
  absl::StatusOr<TextData> test = LoadTextData(src);
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->examples.size(), 1924u);
  EXPECT_EQ(LabelCounts(*test), (std::vector<int>{594, 782, 548}));
  EXPECT_EQ(test->sha256,
            "312193273bf29f02357c03a4f4145b192fc116931d521de98190748a48085c6b");
  // Line 3: labels [2, 1, 2], two annotators marked the last word.
  const TextExample& third = test->examples[2];
  EXPECT_EQ(third.id, "1252707503441313794_twitter");
  EXPECT_EQ(third.label, 2);
  ASSERT_EQ(third.rationale.size(), 12u);
  EXPECT_FLOAT_EQ(third.rationale[11], 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(third.rationale[0], 0.0f);

  src.path = kShared + "/hatexplain/validation.jsonl";
  absl::StatusOr<TextData> val = LoadTextData(src);
  ASSERT_TRUE(val.ok()) << val.status();
  EXPECT_EQ(LabelCounts(*val), (std::vector<int>{593, 781, 548}));

  src.path = kShared + "/hatexplain/train-reconstructed.jsonl";
  absl::StatusOr<TextData> train = LoadTextData(src);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(LabelCounts(*train), (std::vector<int>{4748, 6251, 4384}));
  EXPECT_EQ(train->dropped, 0);
}

TEST(TextDatasetsTest, OfficialHateXplainDropsPostsWithoutAMajority) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  const std::string dataset = Write("dataset.json", R"({
 "a": {"post_id": "a", "annotators": [{"label": "normal"}, {"label": "normal"}, {"label": "offensive"}],
       "rationales": [], "post_tokens": ["hello", "there"]},
 "b": {"post_id": "b", "annotators": [{"label": "normal"}, {"label": "hatespeech"}, {"label": "offensive"}],
       "rationales": [], "post_tokens": ["no", "majority"]},
 "c": {"post_id": "c", "annotators": [{"label": "hatespeech"}, {"label": "hatespeech"}, {"label": "normal"}],
       "rationales": [[0, 1, 1], [0, 0, 1]], "post_tokens": ["x", "y", "z"]}})");
  const std::string divisions = Write(
      "divisions.json", R"({"train": ["c", "b", "a"], "val": [], "test": []})");
  TextSource src;
  src.format = TextFormat::kHateXplainOfficial;
  src.path = dataset;
  src.divisions_path = divisions;
  src.split = "train";
  absl::StatusOr<TextData> d = LoadTextData(src);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->examples.size(), 2u);
  EXPECT_EQ(d->dropped, 1);
  EXPECT_EQ(d->examples[0].id, "c");  // the divisions' order
  EXPECT_EQ(d->examples[0].label, 0);
  EXPECT_EQ(d->examples[0].rationale,
            (std::vector<float>{0, 1.0f / 3, 2.0f / 3}));
  EXPECT_EQ(d->examples[1].label, 1);
  src.split = "dev";
  EXPECT_EQ(LoadTextData(src).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TextDatasetsTest, FilteredSvaLabelsByVerbNumberAndMarksTheVerb) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  TextSource src;
  src.format = TextFormat::kSvaFiltered;
  src.path = kShared + "/sva/subj_agr_filtered.text";
  absl::StatusOr<TextData> d = LoadTextData(src);
  ASSERT_TRUE(d.ok()) << d.status();
  // shared/data/sva/README.md: singular 2,730, plural 4,755, 4 undetermined.
  EXPECT_EQ(LabelCounts(*d), (std::vector<int>{2730, 4755}));
  EXPECT_EQ(d->dropped, 4);
  const TextExample& first = d->examples[0];
  ASSERT_EQ(first.words.size(), 16u);  // "<eos>" dropped
  EXPECT_EQ(first.words[11], "is");
  EXPECT_EQ(first.label, 0);
  EXPECT_EQ(first.rationale[11], 1.0f);
  EXPECT_EQ(std::count(first.rationale.begin(), first.rationale.end(), 1.0f),
            1);
}

TEST(TextDatasetsTest, LinzenTsvMarksSubjectAndVerb) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  const std::string path =
      Write("agr.tsv",
            "sentence\torig_sentence\tverb_pos\tsubj_index\tverb_index\n"
            "x\tthe keys to the cabinet are here\tVBP\t2\t6\n"
            "x\tthe dog runs\tVBZ\t2\t3\n");
  TextSource src;
  src.format = TextFormat::kLinzenTsv;
  src.path = path;
  absl::StatusOr<TextData> d = LoadTextData(src);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->examples.size(), 2u);
  EXPECT_EQ(d->examples[0].label, 1);
  EXPECT_EQ(d->examples[0].rationale,
            (std::vector<float>{0, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(d->examples[1].label, 0);

  src.path = Write("agr-bad.tsv",
                   "sentence\torig_sentence\tverb_pos\tsubj_index\tverb_index\n"
                   "x\tthe dog runs\tVBD\t2\t3\n");
  EXPECT_EQ(LoadTextData(src).status().message(),
            src.path + ":2: verb_pos 'VBD' is not VBZ or VBP");
  src.path = Write("agr-short.tsv",
                   "sentence\torig_sentence\tverb_pos\tsubj_index\tverb_index\n"
                   "x\tthe dog runs\tVBZ\t2\t9\n");
  EXPECT_EQ(LoadTextData(src).status().message(),
            src.path + ":2: verb_index '9' is not a word position (1-based)");
}

TEST(TextDatasetsTest, GenericJsonLinesWithSplitsAndRationales) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  const std::string path = Write(
      "data.jsonl",
      R"({"tokens": ["a", "b"], "label": 1, "rationale": [0, 1], "split": "train"}
{"tokens": ["c"], "label": 0, "split": "test", "id": "t1"}
{"tokens": ["d", "e"], "label": 2, "rationales": [[1, 0], [0, 0]], "split": "train"}
)");
  TextSource src;
  src.path = path;
  src.split = "train";
  absl::StatusOr<TextData> d = LoadTextData(src);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->examples.size(), 2u);
  EXPECT_EQ(d->examples[0].rationale, (std::vector<float>{0, 1}));
  EXPECT_EQ(d->examples[1].rationale, (std::vector<float>{0.5f, 0}));
  EXPECT_EQ(d->label_names, (std::vector<std::string>{"0", "1", "2"}));
  src.split = "test";
  d = LoadTextData(src);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->examples[0].id, "t1");
  EXPECT_TRUE(d->examples[0].rationale.empty());
}

TEST(TextDatasetsTest, BadFilesNameTheFileAndLine) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  TextSource src;
  src.path = Write("bad1.jsonl", R"({"tokens": ["a"], "label": 0}
{"tokens": ["a", "b"], "label": 0, "rationale": [1]}
)");
  EXPECT_EQ(LoadTextData(src).status().message(),
            src.path + ":2: \"rationale\" must have one value per token (2)");
  src.path = Write("bad2.jsonl", "{\"tokens\": [\"a\"], \"label\": -1}\n");
  EXPECT_EQ(LoadTextData(src).status().message(),
            src.path + ":1: \"label\" must be an integer in [0, 1000000]");
  src.path = Write("bad3.jsonl", "\n{\"tokens\": \"a b\", \"label\": 0}\n");
  EXPECT_EQ(LoadTextData(src).status().message(),
            src.path + ":2: \"tokens\" must be a list of strings");
  src.path = kShared + "/nothing-here.jsonl";
  EXPECT_EQ(LoadTextData(src).status().code(), absl::StatusCode::kNotFound);

  // A truncated HateXplain file: the last line is cut mid-object.
  std::ifstream in(kShared + "/hatexplain/test.jsonl");
  std::string text, line;
  for (int i = 0; i < 3 && std::getline(in, line); ++i) text += line + "\n";
  std::getline(in, line);
  text += line.substr(0, line.size() / 2);
  src.format = TextFormat::kHateXplain;
  src.path = Write("truncated.jsonl", text);
  const absl::Status s = LoadTextData(src).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(src.path + ":4: not valid JSON (", 0), 0u) << s;
}

// A number past double's range makes nlohmann's parser throw out_of_range
// (not parse_error): still a refusal naming the file, never an exception
// out of the reader.
TEST(TextDatasetsTest, NumbersPastDoubleAreRefusedNotThrown) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  TextSource src;
  src.path = Write("huge.jsonl",
                   "{\"tokens\": [\"a\"], \"label\": 0, \"x\": 2e557}\n");
  const absl::Status s = LoadTextData(src).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(src.path + ": not valid JSON (", 0), 0u) << s;
  EXPECT_NE(s.message().find("2e557"), std::string::npos) << s;
}

TEST(TextDatasetsTest, SplitByFractionIsSeededAndComplete) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "sva");
  std::vector<TextExample> all(100);
  for (int i = 0; i < 100; ++i) all[i].id = std::to_string(i);
  std::vector<TextExample> a_train, a_test, b_train, b_test, c_train, c_test;
  SplitByFraction(all, 0.1, 7, &a_train, &a_test);
  SplitByFraction(all, 0.1, 7, &b_train, &b_test);
  SplitByFraction(all, 0.1, 8, &c_train, &c_test);
  ASSERT_EQ(a_train.size(), 10u);
  EXPECT_EQ(a_test.size(), 90u);
  std::vector<std::string> a, b, c;
  for (const auto& e : a_train) a.push_back(e.id);
  for (const auto& e : b_train) b.push_back(e.id);
  for (const auto& e : c_train) c.push_back(e.id);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace qkov::training::text
