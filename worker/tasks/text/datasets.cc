#include "worker/tasks/text/datasets.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"
#include "common/trial_rules.h"
#include "worker/tasks/text/json_errors.h"
#include "worker/tasks/text/text_formats.h"
#include "worker/training/seeding.h"

namespace qkov::training::text {
namespace {

using nlohmann::json;

absl::StatusOr<std::vector<std::string>> Words(const json& j, const char* key,
                                               const std::string& path,
                                               int64_t line) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    return FileError(path, line,
                     absl::StrCat("\"", key, "\" must be a list of strings"));
  std::vector<std::string> words;
  for (const json& w : *it) {
    if (!w.is_string())
      return FileError(path, line,
                       absl::StrCat("\"", key, "\" must be a list of strings"));
    words.push_back(w.get<std::string>());
  }
  if (words.empty())
    return FileError(path, line, absl::StrCat("\"", key, "\" is empty"));
  return words;
}

// A 0/1 (or [0, 1]) mask with one value per word.
absl::StatusOr<std::vector<float>> Mask(const json& m, size_t words,
                                        const std::string& field,
                                        const std::string& path, int64_t line) {
  if (!m.is_array() || m.size() != words) {
    return FileError(
        path, line,
        absl::StrCat("\"", field, "\" must have one value per token (", words,
                     ")"));
  }
  std::vector<float> out;
  for (const json& v : m) {
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
      return FileError(
          path, line, absl::StrCat("\"", field, "\" values must be in [0, 1]"));
    out.push_back(v.get<float>());
  }
  return out;
}

// The mean of `masks` over `divisor` annotators (missing masks count as 0).
std::vector<float> MeanMask(const std::vector<std::vector<float>>& masks,
                            size_t words, double divisor) {
  std::vector<float> out(words, 0.0f);
  for (const auto& m : masks)
    for (size_t i = 0; i < words; ++i) out[i] += m[i];
  for (float& x : out) x = static_cast<float>(x / divisor);
  return out;
}

// Reads `path` line by line; `each` gets (line number, text) for non-empty
// lines and returns a Status.
template <typename Each>
absl::Status ForEachLine(const std::string& path, Each each) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string text;
  int64_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (absl::StripAsciiWhitespace(text).empty()) continue;
    if (absl::Status s = each(line, text); !s.ok()) return s;
  }
  if (in.bad()) return FileError(path, line, "read failed");
  return absl::OkStatus();
}

absl::Status ReadGeneric(const TextSource& src, TextData* data) {
  int32_t max_label = -1;
  absl::Status s = ForEachLine(
      src.path, [&](int64_t line, const std::string& text) -> absl::Status {
        absl::StatusOr<json> j = ParseJsonAt(text, src.path, line);
        if (!j.ok()) return j.status();
        if (!j->is_object())
          return FileError(src.path, line, "must be a JSON object");
        if (!src.split.empty()) {
          auto split = j->find("split");
          if (split == j->end() || !split->is_string())
            return FileError(src.path, line, "\"split\" is missing (a string)");
          if (split->get<std::string>() != src.split) return absl::OkStatus();
        }
        TextExample ex;
        absl::StatusOr<std::vector<std::string>> words =
            Words(*j, "tokens", src.path, line);
        if (!words.ok()) return words.status();
        ex.words = *std::move(words);
        auto label = j->find("label");
        if (label == j->end() || !label->is_number_integer() ||
            label->get<int64_t>() < 0 || label->get<int64_t>() > 1000000)
          return FileError(src.path, line,
                           "\"label\" must be an integer in [0, 1000000]");
        ex.label = label->get<int32_t>();
        max_label = std::max(max_label, ex.label);
        if (auto id = j->find("id"); id != j->end() && id->is_string())
          ex.id = id->get<std::string>();
        else
          ex.id = absl::StrCat("line ", line);
        if (auto r = j->find("rationale"); r != j->end() && !r->is_null()) {
          absl::StatusOr<std::vector<float>> m =
              Mask(*r, ex.words.size(), "rationale", src.path, line);
          if (!m.ok()) return m.status();
          ex.rationale = *std::move(m);
        } else if (auto rs = j->find("rationales");
                   rs != j->end() && !rs->is_null()) {
          if (!rs->is_array())
            return FileError(src.path, line,
                             "\"rationales\" must be a list of masks");
          std::vector<std::vector<float>> masks;
          for (const json& m : *rs) {
            absl::StatusOr<std::vector<float>> one =
                Mask(m, ex.words.size(), "rationales", src.path, line);
            if (!one.ok()) return one.status();
            masks.push_back(*std::move(one));
          }
          if (!masks.empty())
            ex.rationale = MeanMask(masks, ex.words.size(), masks.size());
        }
        data->examples.push_back(std::move(ex));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  for (int32_t i = 0; i <= max_label; ++i)
    data->label_names.push_back(absl::StrCat(i));
  return absl::OkStatus();
}

constexpr const char* kHateXplainLabels[] = {"hatespeech", "normal",
                                             "offensive"};

// The majority of the annotators' labels, or -1 when there is none.
int32_t Majority(const std::vector<int32_t>& labels) {
  std::map<int32_t, int> votes;
  for (int32_t l : labels) ++votes[l];
  for (const auto& [label, n] : votes) {
    if (2 * n > static_cast<int>(labels.size())) return label;
  }
  return -1;
}

// One HateXplain post from its tokens, annotator labels and masks.
absl::Status AddPost(const std::string& id, std::vector<std::string> words,
                     const std::vector<int32_t>& labels,
                     std::vector<std::vector<float>> masks, TextData* data) {
  const int32_t label = Majority(labels);
  if (label < 0) {
    ++data->dropped;
    return absl::OkStatus();
  }
  TextExample ex;
  ex.id = id;
  ex.label = label;
  // The authors' mean over the 3 annotators; normal posts have no masks.
  ex.rationale =
      MeanMask(masks, words.size(), std::max<size_t>(labels.size(), 1));
  ex.words = std::move(words);
  data->examples.push_back(std::move(ex));
  return absl::OkStatus();
}

absl::Status ReadHateXplain(const TextSource& src, TextData* data) {
  return ForEachLine(
      src.path, [&](int64_t line, const std::string& text) -> absl::Status {
        absl::StatusOr<json> j = ParseJsonAt(text, src.path, line);
        if (!j.ok()) return j.status();
        if (!j->is_object())
          return FileError(src.path, line, "must be a JSON object");
        absl::StatusOr<std::vector<std::string>> words =
            Words(*j, "post_tokens", src.path, line);
        if (!words.ok()) return words.status();
        auto ann = j->find("annotators");
        if (ann == j->end() || !ann->is_object() || !ann->contains("label") ||
            !(*ann)["label"].is_array() || (*ann)["label"].empty())
          return FileError(src.path, line,
                           "\"annotators.label\" must be a list of labels");
        std::vector<int32_t> labels;
        for (const json& l : (*ann)["label"]) {
          if (!l.is_number_integer() || l.get<int>() < 0 || l.get<int>() > 2)
            return FileError(src.path, line,
                             "\"annotators.label\" values must be 0, 1 or 2");
          labels.push_back(l.get<int32_t>());
        }
        std::vector<std::vector<float>> masks;
        if (auto rs = j->find("rationales"); rs != j->end()) {
          if (!rs->is_array())
            return FileError(src.path, line,
                             "\"rationales\" must be a list of masks");
          for (const json& m : *rs) {
            absl::StatusOr<std::vector<float>> one =
                Mask(m, words->size(), "rationales", src.path, line);
            if (!one.ok()) return one.status();
            masks.push_back(*std::move(one));
          }
        } else if (auto u = j->find("rationale_union");
                   u != j->end() && !u->is_null() && !u->empty()) {
          // The reconstructed train split: the union of the marks, counted as
          // every annotator's.
          absl::StatusOr<std::vector<float>> one =
              Mask(*u, words->size(), "rationale_union", src.path, line);
          if (!one.ok()) return one.status();
          masks.assign(labels.size(), *std::move(one));
        }
        const std::string id = j->contains("id") && (*j)["id"].is_string()
                                   ? (*j)["id"].get<std::string>()
                                   : absl::StrCat("line ", line);
        return AddPost(id, *std::move(words), labels, std::move(masks), data);
      });
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  return text;
}

absl::Status ReadHateXplainOfficial(const TextSource& src, TextData* data) {
  if (src.split != "train" && src.split != "val" && src.split != "test")
    return absl::InvalidArgumentError(absl::StrCat(
        "split: '", src.split,
        "' is not train, val or test (post_id_divisions.json's keys)"));
  absl::StatusOr<std::string> dataset_text = ReadWhole(src.path);
  if (!dataset_text.ok()) return dataset_text.status();
  absl::StatusOr<std::string> div_text = ReadWhole(src.divisions_path);
  if (!div_text.ok()) return div_text.status();
  absl::StatusOr<json> dataset = ParseJsonAt(*dataset_text, src.path, 1);
  if (!dataset.ok()) return dataset.status();
  absl::StatusOr<json> divisions =
      ParseJsonAt(*div_text, src.divisions_path, 1);
  if (!divisions.ok()) return divisions.status();
  if (!dataset->is_object())
    return FileError(src.path, 0, "must be an object keyed by post id");
  auto ids = divisions->find(src.split);
  if (!divisions->is_object() || ids == divisions->end() || !ids->is_array())
    return FileError(src.divisions_path, 0,
                     absl::StrCat("no list \"", src.split, "\""));
  const std::map<std::string, int32_t> names = {
      {"hatespeech", 0}, {"normal", 1}, {"offensive", 2}};
  for (const json& id_json : *ids) {
    if (!id_json.is_string())
      return FileError(src.divisions_path, 0, "post ids must be strings");
    const std::string id = id_json.get<std::string>();
    auto post = dataset->find(id);
    if (post == dataset->end())
      return FileError(
          src.path, 0,
          absl::StrCat("post ", id, " of split ", src.split, " is missing"));
    const std::string where = absl::StrCat(src.path, " post ", id);
    if (!post->is_object()) return FileError(where, 0, "must be an object");
    absl::StatusOr<std::vector<std::string>> words =
        Words(*post, "post_tokens", where, 0);
    if (!words.ok()) return words.status();
    auto ann = post->find("annotators");
    if (ann == post->end() || !ann->is_array() || ann->empty())
      return FileError(where, 0, "\"annotators\" must be a list");
    std::vector<int32_t> labels;
    for (const json& a : *ann) {
      auto l = a.is_object() ? a.find("label") : a.end();
      if (l == a.end() || !l->is_string() ||
          !names.count(l->get<std::string>()))
        return FileError(
            where, 0,
            "annotator label must be hatespeech, normal or offensive");
      labels.push_back(names.at(l->get<std::string>()));
    }
    std::vector<std::vector<float>> masks;
    if (auto rs = post->find("rationales");
        rs != post->end() && rs->is_array()) {
      for (const json& m : *rs) {
        absl::StatusOr<std::vector<float>> one =
            Mask(m, words->size(), "rationales", where, 0);
        if (!one.ok()) return one.status();
        masks.push_back(*std::move(one));
      }
    }
    if (absl::Status s =
            AddPost(id, *std::move(words), labels, std::move(masks), data);
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::Status ReadLinzen(const TextSource& src, TextData* data) {
  std::vector<std::string> header;
  int sentence = -1, verb_pos = -1, subj_index = -1, verb_index = -1;
  return ForEachLine(
      src.path, [&](int64_t line, const std::string& text) -> absl::Status {
        std::vector<std::string> fields = absl::StrSplit(text, '\t');
        if (header.empty()) {
          header = fields;
          for (int i = 0; i < static_cast<int>(header.size()); ++i) {
            if (header[i] == "orig_sentence") sentence = i;
            if (header[i] == "verb_pos") verb_pos = i;
            if (header[i] == "subj_index") subj_index = i;
            if (header[i] == "verb_index") verb_index = i;
          }
          if (sentence < 0 || verb_pos < 0 || subj_index < 0 || verb_index < 0)
            return FileError(src.path, line,
                             "the header must name orig_sentence, verb_pos, "
                             "subj_index and verb_index");
          return absl::OkStatus();
        }
        if (fields.size() != header.size())
          return FileError(
              src.path, line,
              absl::StrCat(fields.size(), " fields; the header has ",
                           header.size()));
        TextExample ex;
        ex.id = absl::StrCat("line ", line);
        ex.words = absl::StrSplit(fields[sentence], ' ', absl::SkipEmpty());
        if (fields[verb_pos] == "VBZ") {
          ex.label = 0;
        } else if (fields[verb_pos] == "VBP") {
          ex.label = 1;
        } else {
          return FileError(src.path, line,
                           absl::StrCat("verb_pos '", fields[verb_pos],
                                        "' is not VBZ or VBP"));
        }
        ex.rationale.assign(ex.words.size(), 0.0f);
        for (int col : {subj_index, verb_index}) {
          int64_t k;
          if (!absl::SimpleAtoi(fields[col], &k) || k < 1 ||
              k > static_cast<int64_t>(ex.words.size()))
            return FileError(
                src.path, line,
                absl::StrCat(header[col], " '", fields[col],
                             "' is not a word position (1-based)"));
          ex.rationale[k - 1] = 1.0f;
        }
        data->examples.push_back(std::move(ex));
        return absl::OkStatus();
      });
}

// Singular (0, VBZ) or plural (1, VBP) for a correct/wrong verb pair, -1
// when the pair does not say (docs/text-tasks.md gives the rule).
int32_t VerbNumber(std::string correct, std::string wrong) {
  correct = absl::AsciiStrToLower(correct);
  wrong = absl::AsciiStrToLower(wrong);
  if (correct == wrong) return -1;
  for (const char* s : {"is", "was", "has", "does"})
    if (correct == s) return 0;
  for (const char* p : {"are", "were", "have", "do"})
    if (correct == p) return 1;
  auto inflects = [](const std::string& bare, const std::string& s) {
    return s == bare + "s" || s == bare + "es" ||
           (absl::EndsWith(bare, "y") &&
            s == bare.substr(0, bare.size() - 1) + "ies");
  };
  if (inflects(wrong, correct)) return 0;
  if (inflects(correct, wrong)) return 1;
  return -1;
}

absl::Status ReadSvaFiltered(const TextSource& src, TextData* data) {
  std::string gold_path = src.path;
  if (absl::EndsWith(gold_path, ".text"))
    gold_path.resize(gold_path.size() - 5);
  gold_path += ".gold";
  std::vector<std::string> texts;
  if (absl::Status s = ForEachLine(src.path,
                                   [&](int64_t, const std::string& t) {
                                     texts.push_back(t);
                                     return absl::OkStatus();
                                   });
      !s.ok())
    return s;
  int64_t n = 0;
  absl::Status s = ForEachLine(
      gold_path, [&](int64_t line, const std::string& g) -> absl::Status {
        if (n >= static_cast<int64_t>(texts.size()))
          return FileError(gold_path, line,
                           absl::StrCat("more lines than ", src.path, " (",
                                        texts.size(), ")"));
        const std::vector<std::string> f = absl::StrSplit(g, '\t');
        if (f.size() != 4)
          return FileError(
              gold_path, line,
              "expected 4 tab-separated fields (index, correct, wrong, "
              "attractors)");
        TextExample ex;
        ex.id = absl::StrCat("line ", line);
        ex.words = absl::StrSplit(texts[n++], ' ', absl::SkipEmpty());
        if (!ex.words.empty() && ex.words.back() == "<eos>")
          ex.words.pop_back();
        int64_t k;
        if (!absl::SimpleAtoi(f[0], &k) || k < 0 ||
            k >= static_cast<int64_t>(ex.words.size()))
          return FileError(
              gold_path, line,
              absl::StrCat("verb index '", f[0], "' is not a word of line ",
                           line, " of ", src.path));
        ex.label = VerbNumber(f[1], f[2]);
        if (ex.label < 0) {
          ++data->dropped;
          return absl::OkStatus();
        }
        // The subject's position is not in these files: the verb alone is the
        // rationale.
        ex.rationale.assign(ex.words.size(), 0.0f);
        ex.rationale[k] = 1.0f;
        data->examples.push_back(std::move(ex));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (n != static_cast<int64_t>(texts.size()))
    return FileError(
        gold_path, 0,
        absl::StrCat(n, " lines; ", src.path, " has ", texts.size()));
  return absl::OkStatus();
}

}  // namespace

const char* TextFormatName(TextFormat format) {
  return rules::kTextFormats[static_cast<int>(format)];
}

absl::StatusOr<TextFormat> ParseTextFormat(absl::string_view field,
                                           absl::string_view name) {
  absl::StatusOr<int> f = rules::TextFormatIndex("", field, name);
  if (!f.ok()) return f.status();
  return static_cast<TextFormat>(*f);
}

absl::StatusOr<TextData> LoadTextData(const TextSource& src) {
  TextData data;
  absl::StatusOr<std::string> sha = Sha256HexOfFile(src.path);
  if (!sha.ok())
    return absl::NotFoundError(
        absl::StrCat(src.path, ": cannot open the data file"));
  data.sha256 = *sha;
  if (!src.sha256.empty() && *sha != src.sha256) {
    return absl::InvalidArgumentError(
        absl::StrCat(src.path, ": sha256 ", *sha, " is not the expected ",
                     src.sha256, " (another version of the file?)"));
  }
  absl::Status s;
  switch (src.format) {
    case TextFormat::kJsonl:
      s = ReadGeneric(src, &data);
      break;
    case TextFormat::kHateXplain:
    case TextFormat::kHateXplainOfficial:
      for (const char* name : kHateXplainLabels)
        data.label_names.push_back(name);
      data.dropped_why = "no majority label";
      s = src.format == TextFormat::kHateXplain
              ? ReadHateXplain(src, &data)
              : ReadHateXplainOfficial(src, &data);
      break;
    case TextFormat::kLinzenTsv:
    case TextFormat::kSvaFiltered:
      data.label_names = {"VBZ", "VBP"};
      data.dropped_why =
          "verb number not determined by the correct/wrong forms";
      s = src.format == TextFormat::kLinzenTsv ? ReadLinzen(src, &data)
                                               : ReadSvaFiltered(src, &data);
      break;
  }
  if (!s.ok()) return s;
  if (data.examples.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        src.path, ": no examples",
        src.split.empty() ? "" : absl::StrCat(" in split '", src.split, "'")));
  if (src.max_examples > 0 &&
      static_cast<int64_t>(data.examples.size()) > src.max_examples)
    data.examples.resize(src.max_examples);
  return data;
}

void SplitByFraction(const std::vector<TextExample>& all, double train_fraction,
                     uint64_t seed, std::vector<TextExample>* train,
                     std::vector<TextExample>* test) {
  const size_t n = all.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Fisher-Yates with our generator (std::shuffle's order is not portable).
  std::mt19937_64 rng(MixSeed(seed, 7));
  for (size_t i = n; i > 1; --i) {
    const size_t j =
        std::min<size_t>(i - 1, static_cast<size_t>(UniformDouble(rng) * i));
    std::swap(order[i - 1], order[j]);
  }
  const size_t k = static_cast<size_t>(
      std::llround(train_fraction * static_cast<double>(n)));
  std::vector<bool> in_train(n, false);
  for (size_t i = 0; i < k && i < n; ++i) in_train[order[i]] = true;
  for (size_t i = 0; i < n; ++i)
    (in_train[i] ? train : test)->push_back(all[i]);
}

}  // namespace qkov::training::text
