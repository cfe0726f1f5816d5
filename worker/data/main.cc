// qkov-data: reads a text dataset exactly as a trial would (loader,
// tokenizer, truncation; docs/text-tasks.md) and shows what the model will
// see, before any GPU hours: counts per label, truncation, and chosen
// examples as word pieces with their ids and rationale weights.
//
//   qkov-data --format=hatexplain --path=test.jsonl --vocab=vocab.txt
//             [--max_len=128] [--show=3] [--json]
//
// --json writes JSON Lines instead, one example per line (id, label,
// tokens, ids, rationale per piece), for comparison with other tools.
// Exit codes: 0 read, 1 the file or vocabulary is bad, 2 bad flags.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/flags_help.h"
#include "common/text.h"
#include "common/version.h"
#include "worker/training/text/datasets.h"
#include "worker/training/text/wordpiece.h"

ABSL_FLAG(std::string, format, "jsonl",
          "jsonl, hatexplain, hatexplain_official, linzen_tsv or sva_filtered");
ABSL_FLAG(std::string, path, "", "the data file");
ABSL_FLAG(std::string, divisions, "",
          "hatexplain_official: post_id_divisions.json");
ABSL_FLAG(std::string, split, "",
          "jsonl: keep this \"split\"; hatexplain_official: train|val|test");
ABSL_FLAG(std::string, vocab, "", "WordPiece vocab.txt");
ABSL_FLAG(std::string, vocab_sha256,
          qkov::training::text::kBertBaseUncasedVocabSha256,
          "expected sha256 of the vocabulary (none: not checked)");
ABSL_FLAG(int, max_len, 128, "pieces kept per example");
ABSL_FLAG(int, show, 3, "examples to print");
ABSL_FLAG(bool, json, false, "write every example as JSON Lines");

namespace {

using qkov::training::text::TextData;
using qkov::training::text::WordPieceTokenizer;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "qkov-data: %s\n",
               qkov::TerminalSafe(std::string(s.message())).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  qkov::HelpListsFlagsOf(__FILE__, "qkov-data", qkov::CodeVersion());
  absl::SetProgramUsageMessage(
      "qkov-data --format=F --path=FILE --vocab=vocab.txt [--json]");
  absl::ParseCommandLine(argc, argv);
  namespace text = qkov::training::text;
  absl::StatusOr<text::TextFormat> format =
      text::ParseTextFormat("--format", absl::GetFlag(FLAGS_format));
  if (!format.ok()) {
    std::fprintf(stderr, "qkov-data: %s\n",
                 std::string(format.status().message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_path).empty() || absl::GetFlag(FLAGS_vocab).empty() ||
      absl::GetFlag(FLAGS_max_len) < 1) {
    std::fprintf(
        stderr, "qkov-data: --path and --vocab are required, --max_len >= 1\n");
    return 2;
  }
  text::WordPieceOptions wo;
  wo.vocab_path = absl::GetFlag(FLAGS_vocab);
  wo.vocab_sha256 = absl::GetFlag(FLAGS_vocab_sha256) == "none"
                        ? ""
                        : absl::GetFlag(FLAGS_vocab_sha256);
  absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> tok =
      WordPieceTokenizer::Load(wo);
  if (!tok.ok()) return Fail(tok.status());
  text::TextSource src;
  src.format = *format;
  src.path = absl::GetFlag(FLAGS_path);
  src.divisions_path = absl::GetFlag(FLAGS_divisions);
  src.split = absl::GetFlag(FLAGS_split);
  absl::StatusOr<TextData> data = text::LoadTextData(src);
  if (!data.ok()) return Fail(data.status());

  const size_t max_len = static_cast<size_t>(absl::GetFlag(FLAGS_max_len));
  std::map<int, int64_t> per_label;
  int64_t truncated = 0, total = 0, longest = 0;
  int shown = 0;
  for (const text::TextExample& ex : data->examples) {
    std::vector<int32_t> piece_word;
    std::vector<int32_t> ids = (*tok)->EncodeWords(ex.words, &piece_word);
    ++per_label[ex.label];
    total += static_cast<int64_t>(ids.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(ids.size()));
    if (ids.size() > max_len) ++truncated;
    ids.resize(std::min(ids.size(), max_len));
    if (absl::GetFlag(FLAGS_json)) {
      nlohmann::json line;
      line["id"] = ex.id;
      line["label"] = ex.label;
      std::vector<std::string> tokens;
      std::vector<float> rationale;
      for (size_t p = 0; p < ids.size(); ++p) {
        tokens.push_back((*tok)->token(ids[p]));
        rationale.push_back(ex.rationale.empty() ? 0.0f
                                                 : ex.rationale[piece_word[p]]);
      }
      line["tokens"] = tokens;
      line["ids"] = ids;
      line["rationale"] = rationale;
      std::printf("%s\n", line.dump().c_str());
      continue;
    }
    if (shown++ < absl::GetFlag(FLAGS_show)) {
      std::printf("%s  label %s  %zu pieces\n ",
                  qkov::TerminalSafe(ex.id).c_str(),
                  data->label_names[ex.label].c_str(), ids.size());
      for (size_t p = 0; p < ids.size(); ++p) {
        const bool marked =
            !ex.rationale.empty() && ex.rationale[piece_word[p]] > 0;
        std::printf(" %s%s(%d)",
                    qkov::TerminalSafe((*tok)->token(ids[p])).c_str(),
                    marked ? "*" : "", ids[p]);
      }
      std::printf("\n");
    }
  }
  if (absl::GetFlag(FLAGS_json)) return 0;
  const int64_t n = static_cast<int64_t>(data->examples.size());
  std::printf("%s: %lld examples (sha256 %s)\n",
              qkov::TerminalSafe(src.path).c_str(), static_cast<long long>(n),
              data->sha256.c_str());
  if (data->dropped > 0)
    std::printf("  dropped %lld: %s\n", static_cast<long long>(data->dropped),
                data->dropped_why.c_str());
  for (const auto& [label, count] : per_label) {
    std::printf("  label %d %-12s %lld (%.1f%%)\n", label,
                data->label_names[label].c_str(), static_cast<long long>(count),
                100.0 * count / n);
  }
  std::printf(
      "  pieces per example: mean %.1f, max %lld; %lld (%.1f%%) longer than "
      "--max_len %zu are truncated\n",
      static_cast<double>(total) / n, static_cast<long long>(longest),
      static_cast<long long>(truncated), 100.0 * truncated / n, max_len);
  std::printf("  (* marks pieces with rationale weight > 0)\n");
  return 0;
}
