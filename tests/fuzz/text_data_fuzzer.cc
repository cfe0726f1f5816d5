// The text tasks' dataset readers (LoadTextData: jsonl, HateXplain in our
// layout and the official one, Linzen's TSV, the filtered SVA pair) on any
// bytes. Input: three option bytes (format, split, max_examples), then the
// file, then "--8<--" and the second file (the official layout's divisions,
// SVA's .gold). Property: no crash, no leak; a refusal names the file; an
// accepted file gives examples whose labels index label_names and whose
// rationales have one value in [0, 1] per word.
#include "tests/fuzz/fuzz_support.h"
#include "worker/tasks/text/datasets.h"

namespace text = qkov::training::text;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view all(reinterpret_cast<const char*>(data), size);
  const text::TextFormat formats[] = {
      text::TextFormat::kJsonl, text::TextFormat::kHateXplain,
      text::TextFormat::kHateXplainOfficial, text::TextFormat::kLinzenTsv,
      text::TextFormat::kSvaFiltered};
  text::TextSource source;
  source.format = formats[qkov::fuzz::OptionByte(all, 0) % 5];
  const char* splits[] = {"", "train", "val", "test"};
  source.split = splits[qkov::fuzz::OptionByte(all, 1) % 4];
  source.max_examples = qkov::fuzz::OptionByte(all, 2) % 51;
  const std::vector<std::string> files =
      qkov::fuzz::SplitInput(all.substr(std::min<size_t>(3, size)), 2);
  source.path = qkov::fuzz::WriteScratch("data.text", files[0]);
  source.divisions_path =
      qkov::fuzz::WriteScratch("post_id_divisions.json", files[1]);
  qkov::fuzz::WriteScratch("data.gold", files[1]);

  absl::StatusOr<text::TextData> read = text::LoadTextData(source);
  if (!read.ok()) {
    QKOV_FUZZ_CHECK(!read.status().message().empty(), "empty refusal");
    return 0;
  }
  for (const text::TextExample& e : read->examples) {
    QKOV_FUZZ_CHECK(
        e.label >= 0 && static_cast<size_t>(e.label) < read->label_names.size(),
        e.id);
    QKOV_FUZZ_CHECK(e.rationale.empty() || e.rationale.size() == e.words.size(),
                    e.id);
    for (float r : e.rationale) QKOV_FUZZ_CHECK(r >= 0 && r <= 1, e.id);
  }
  if (source.max_examples > 0)
    QKOV_FUZZ_CHECK(
        static_cast<int64_t>(read->examples.size()) <= source.max_examples,
        "max_examples");
  return 0;
}
