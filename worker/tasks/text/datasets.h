// Text-classification data with word rationales, read from the formats the
// paper's experiments use and from one generic JSON Lines form
// (docs/text-tasks.md describes each):
//   jsonl               {"tokens": [...], "label": 0, "rationale": [0, 1, ...],
//                        "split": "train", "id": "..."} per line; "rationales"
//                        (a list of masks) may stand for "rationale"
//   hatexplain          Hugging Face's JSON Lines export (one file per split),
//                        or the reconstructed train split (rationale_union)
//   hatexplain_official the official dataset.json with post_id_divisions.json
//   linzen_tsv          Linzen et al.'s agr_50_mostcommon_10K.tsv (header row)
//   sva_filtered        Gulordava et al.'s subj_agr_filtered.text (+ .gold)
// A file that is missing, truncated or malformed is an INVALID_ARGUMENT (or
// NOT_FOUND) whose message starts "PATH:LINE: ". Nothing here throws.
#ifndef QKOV_WORKER_TASKS_TEXT_DATASETS_H_
#define QKOV_WORKER_TASKS_TEXT_DATASETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace qkov::training::text {

enum class TextFormat {
  kJsonl,
  kHateXplain,
  kHateXplainOfficial,
  kLinzenTsv,
  kSvaFiltered
};
const char* TextFormatName(TextFormat format);
// INVALID_ARGUMENT "field: unknown format ..." for a name not in
// rules::kTextFormats.
absl::StatusOr<TextFormat> ParseTextFormat(absl::string_view field,
                                           absl::string_view name);

struct TextSource {
  TextFormat format = TextFormat::kJsonl;
  // jsonl, hatexplain, linzen_tsv: the file. hatexplain_official: the
  // dataset.json. sva_filtered: the .text file; its .gold sits beside it.
  std::string path;
  std::string divisions_path;  // hatexplain_official: post_id_divisions.json
  // jsonl: keep lines whose "split" is this (empty: every line);
  // hatexplain_official: train, val or test.
  std::string split;
  int64_t max_examples = 0;  // > 0: the first ones only (tests, quick runs)
  std::string sha256;        // non-empty: `path` must have this checksum
};

struct TextExample {
  std::string id;
  std::vector<std::string> words;
  int32_t label = 0;
  // Per word in [0, 1]: the mean over annotators of their marks (HateXplain:
  // over its 3 annotators, a missing mask counting as zeros), 1 on SVA's
  // marked words. Empty: the example has no rationale.
  std::vector<float> rationale;
};

struct TextData {
  std::vector<std::string> label_names;  // label i's name
  std::vector<TextExample> examples;
  int64_t dropped = 0;      // examples the format's rule leaves out
  std::string dropped_why;  // e.g. "no majority label"
  std::string sha256;       // of `path` (provenance)
};

absl::StatusOr<TextData> LoadTextData(const TextSource& source);

// Assigns every example to train (a `train_fraction` share, drawn with
// `seed`) or test, for sources without splits of their own (Linzen's TSV,
// the filtered SVA set). The same seed gives the same split everywhere.
void SplitByFraction(const std::vector<TextExample>& all, double train_fraction,
                     uint64_t seed, std::vector<TextExample>* train,
                     std::vector<TextExample>* test);

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_DATASETS_H_
