// qkov-data: reads a dataset exactly as a trial would (loader, tokenizer,
// truncation or crop; docs/text-tasks.md, docs/squad.md) and shows what the
// model will see, before any GPU hours.
//
//   qkov-data --format=hatexplain --path=test.jsonl --vocab=vocab.txt
//             [--max_len=128] [--show=3] [--json]
//   qkov-data --format=squad --path=dev-v1.1.json --encoder=encoder.json
//             --merges=vocab.bpe [--article_begin=0 --article_end=0]
//             [--crop_chars=200] [--show=3] [--json]
//   qkov-data --tokenizer=gpt2 --format=text --path=FILE
//             --encoder=encoder.json --merges=vocab.bpe [--json]
//
// Text tasks: counts per label, truncation, and chosen examples as word
// pieces with their ids and rationale marks; --json writes one example per
// line (id, label, tokens, ids, rationale per piece). SQuAD: the prompts
// ("Q: ... C: ... A:") as GPT-2 pieces with their ids, the pieces that
// overlap the answer span marked, the crop used, and the questions left out;
// --json writes one example per line (id, ids, tokens, answer_mask,
// answer_ids, crop_chars). --tokenizer=gpt2 --format=text: one text per
// line, its GPT-2 ids (and with --json its pieces), to check the BPE
// against other tools.
//   qkov-data fetch DATASET... [--to=DIR] [--from=MIRROR]
//
// fetch (worker/data/fetch.h, docs/data.md): hatexplain, squad, sva, glove,
// tokenizers or all, into --to (default $QKOV_DATA, else
// ~/.cache/qkov/data), downloaded from the published addresses or copied
// from --from, each file verified by its sha256.
// Exit codes: 0 read (fetched), 1 the file, vocabulary or merges are bad (a
// download failed or a checksum differs), 2 bad flags.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_dirs.h"
#include "common/flags_help.h"
#include "common/man_page.h"
#include "common/text.h"
#include "common/trial_defaults.h"
#include "common/version.h"
#include "worker/data/data_manual.h"
#include "worker/data/dataset_files.h"
#include "worker/data/fetch.h"
#include "worker/tasks/squad/squad_data.h"
#include "worker/tasks/squad/squad_defaults.h"
#include "worker/tasks/text/datasets.h"
#include "worker/tasks/text/gpt2_bpe.h"
#include "worker/tasks/text/wordpiece.h"

ABSL_FLAG(std::string, format, "jsonl",
          "jsonl, hatexplain, hatexplain_official, linzen_tsv, sva_filtered, "
          "squad, or text (with --tokenizer=gpt2: one text per line)");
ABSL_FLAG(std::string, tokenizer, "",
          "gpt2 (with --format=text); the text formats use WordPiece "
          "(--vocab), squad GPT-2's BPE");
ABSL_FLAG(std::string, encoder, "", "squad, text: GPT-2's encoder.json");
ABSL_FLAG(std::string, merges, "", "squad, text: GPT-2's vocab.bpe");
ABSL_FLAG(int, article_begin, 0, "squad: the first article read");
ABSL_FLAG(int, article_end, 0, "squad: the article after the last (0: all)");
ABSL_FLAG(int, crop_chars, qkov::defaults::kSquad.crop_chars,
          "squad: context kept either side of the answer, as "
          "training.squad.crop_chars");
ABSL_FLAG(std::string, path, "", "the data file");
ABSL_FLAG(std::string, divisions, "",
          "hatexplain_official: post_id_divisions.json");
ABSL_FLAG(std::string, split, "",
          "jsonl: keep this \"split\"; hatexplain_official: train|val|test");
ABSL_FLAG(std::string, vocab, "", "WordPiece vocab.txt");
ABSL_FLAG(std::string, vocab_sha256,
          qkov::training::text::kBertBaseUncasedVocabSha256,
          "expected sha256 of the vocabulary (none: not checked)");
ABSL_FLAG(int, max_len, 128, "text formats: pieces kept per example");
ABSL_FLAG(int, max_prompt_tokens, qkov::defaults::kSquad.max_prompt_tokens,
          "squad: the prompt's pieces at most (the crop shrinks to fit), as "
          "training.squad.max_prompt_tokens");
ABSL_FLAG(int, show, 3, "examples to print");
ABSL_FLAG(bool, json, false, "write every example as JSON Lines");
ABSL_FLAG(std::string, to, "",
          "fetch: the data folder written (default $QKOV_DATA, else "
          "~/.cache/qkov/data)");
ABSL_FLAG(std::string, from, "",
          "fetch: copy from this mirror of a data folder instead of "
          "downloading");

namespace {

namespace squad = qkov::training::squad;
namespace text = qkov::training::text;
using qkov::training::text::TextData;
using qkov::training::text::WordPieceTokenizer;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "qkov-data: %s\n",
               qkov::TerminalSafe(std::string(s.message())).c_str());
  return 1;
}

int BadFlags(const char* what) {
  std::fprintf(stderr, "qkov-data: %s\n", what);
  return 2;
}

// GPT-2's BPE from --encoder and --merges, checked against the shipped
// files' checksums as a trial checks them.
absl::StatusOr<std::unique_ptr<text::Gpt2BpeTokenizer>> LoadBpe() {
  text::Gpt2BpeOptions o;
  o.encoder_path = absl::GetFlag(FLAGS_encoder);
  o.merges_path = absl::GetFlag(FLAGS_merges);
  return text::Gpt2BpeTokenizer::Load(o);
}

std::vector<std::string> PieceNames(const text::Gpt2BpeTokenizer& bpe,
                                    const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(bpe.token_name(id));
  return out;
}

// --tokenizer=gpt2 --format=text: each line of --path, its ids.
int Gpt2Text() {
  absl::StatusOr<std::unique_ptr<text::Gpt2BpeTokenizer>> bpe = LoadBpe();
  if (!bpe.ok()) return Fail(bpe.status());
  std::ifstream in(absl::GetFlag(FLAGS_path), std::ios::binary);
  if (!in) {
    return Fail(absl::NotFoundError(
        absl::StrCat(absl::GetFlag(FLAGS_path), ": cannot be read")));
  }
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<int32_t> ids = (*bpe)->Encode(line);
    if (absl::GetFlag(FLAGS_json)) {
      nlohmann::json j;
      j["ids"] = ids;
      j["tokens"] = PieceNames(**bpe, ids);
      std::printf("%s\n", j.dump(-1, ' ', false,
                                 nlohmann::json::error_handler_t::replace)
                              .c_str());
      continue;
    }
    std::printf("%s\n", absl::StrJoin(ids, " ").c_str());
  }
  return 0;
}

// --format=squad: the prompts a trial builds from the file's questions.
int Squad() {
  absl::StatusOr<std::unique_ptr<text::Gpt2BpeTokenizer>> bpe = LoadBpe();
  if (!bpe.ok()) return Fail(bpe.status());
  squad::SquadSource source;
  source.path = absl::GetFlag(FLAGS_path);
  source.article_begin = absl::GetFlag(FLAGS_article_begin);
  source.article_end = absl::GetFlag(FLAGS_article_end);
  absl::StatusOr<squad::SquadData> data = squad::LoadSquad(source);
  if (!data.ok()) return Fail(data.status());
  squad::PromptOptions prompt;
  prompt.crop_chars = absl::GetFlag(FLAGS_crop_chars);
  prompt.max_prompt_tokens = absl::GetFlag(FLAGS_max_prompt_tokens);
  prompt.max_answer_tokens = qkov::defaults::kSquad.max_answer_tokens;
  int64_t built = 0, left_out = 0, cropped = 0, prompt_pieces = 0;
  int shown = 0;
  for (const squad::SquadQuestion& q : data->questions) {
    absl::StatusOr<squad::SquadExample> ex =
        squad::BuildExample(q, **bpe, prompt);
    if (!ex.ok()) {
      ++left_out;
      continue;
    }
    ++built;
    prompt_pieces += static_cast<int64_t>(ex->prompt.size());
    if (ex->crop_chars < prompt.crop_chars) ++cropped;
    if (absl::GetFlag(FLAGS_json)) {
      nlohmann::json j;
      j["id"] = ex->id;
      j["ids"] = ex->prompt;
      j["tokens"] = PieceNames(**bpe, ex->prompt);
      j["answer_mask"] = ex->relevant;
      j["answer_ids"] = ex->answer;
      j["crop_chars"] = ex->crop_chars;
      std::printf("%s\n", j.dump(-1, ' ', false,
                                 nlohmann::json::error_handler_t::replace)
                              .c_str());
      continue;
    }
    if (shown++ >= absl::GetFlag(FLAGS_show)) continue;
    std::printf("%s  %zu prompt pieces, crop %d chars, answer \"%s\"\n ",
                qkov::TerminalSafe(ex->id).c_str(), ex->prompt.size(),
                ex->crop_chars, qkov::TerminalSafe(q.answers[0]).c_str());
    for (size_t p = 0; p < ex->prompt.size(); ++p) {
      std::printf(" %s%s(%d)",
                  qkov::TerminalSafe((*bpe)->token_name(ex->prompt[p])).c_str(),
                  ex->relevant[p] ? "*" : "", ex->prompt[p]);
    }
    std::printf("\n");
  }
  if (absl::GetFlag(FLAGS_json)) return 0;
  std::printf("%s: version %s, %d articles, %lld questions (sha256 %s)\n",
              qkov::TerminalSafe(source.path).c_str(),
              qkov::TerminalSafe(data->version).c_str(), data->articles,
              static_cast<long long>(data->questions.size()),
              data->sha256.c_str());
  if (data->unanswerable > 0) {
    std::printf("  unanswerable (v2.0) left out: %lld\n",
                static_cast<long long>(data->unanswerable));
  }
  std::printf(
      "  prompts built: %lld, mean %.1f pieces; %lld cropped below %d "
      "chars to fit %d pieces; %lld left out (the answer does not fit or "
      "is not in the context)\n",
      static_cast<long long>(built),
      built > 0 ? static_cast<double>(prompt_pieces) / built : 0.0,
      static_cast<long long>(cropped), prompt.crop_chars,
      prompt.max_prompt_tokens, static_cast<long long>(left_out));
  std::printf("  (* marks prompt pieces that overlap the answer span)\n");
  return 0;
}

}  // namespace

// qkov-data fetch DATASET...: 0 when every file is in place.
int Fetch(const std::vector<char*>& args) {
  std::vector<std::string> names;
  for (size_t i = 2; i < args.size(); ++i) {
    if (std::string(args[i]) == "all") {
      names = qkov::data::DatasetNames();
      break;
    }
    names.emplace_back(args[i]);
  }
  if (names.empty()) {
    return BadFlags(
        absl::StrCat("fetch: name a dataset (",
                     absl::StrJoin(qkov::data::DatasetNames(), ", "), ", all)")
            .c_str());
  }
  qkov::data::FetchOptions o;
  o.to = absl::GetFlag(FLAGS_to);
  if (o.to.empty()) o.to = qkov::DefaultDataDir();
  o.from = absl::GetFlag(FLAGS_from);
  for (const std::string& name : names) {
    if (absl::Status s = qkov::data::FetchDataset(name, o, stdout); !s.ok()) {
      std::fprintf(stderr, "qkov-data: fetch %s: %s\n", name.c_str(),
                   std::string(s.message()).c_str());
      return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    }
  }
  std::printf("qkov-data: %s in %s\n", absl::StrJoin(names, ", ").c_str(),
              o.to.c_str());
  return 0;
}

int main(int argc, char** argv) {
  qkov::HelpListsFlagsOf(__FILE__, "qkov-data", qkov::CodeVersion());
  qkov::PrintManPageIfAsked(argc, argv, qkov::data::DataManPage(),
                            qkov::CodeVersion());
  absl::SetProgramUsageMessage(
      "qkov-data --format=F --path=FILE (--vocab=vocab.txt | --encoder=E "
      "--merges=M) [--json]");
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1 && std::string(args[1]) == "fetch") return Fetch(args);
  if (args.size() > 1)
    return BadFlags(absl::StrCat("unknown command '", args[1],
                                 "' (the one command is fetch)")
                        .c_str());
  const std::string format_name = absl::GetFlag(FLAGS_format);
  const std::string tokenizer = absl::GetFlag(FLAGS_tokenizer);
  if (!tokenizer.empty() && tokenizer != "gpt2")
    return BadFlags("--tokenizer: only gpt2 (the text formats use --vocab)");
  if (format_name == "squad" || format_name == "text") {
    if (format_name == "text" && tokenizer != "gpt2")
      return BadFlags("--format=text needs --tokenizer=gpt2");
    if (absl::GetFlag(FLAGS_path).empty() ||
        absl::GetFlag(FLAGS_encoder).empty() ||
        absl::GetFlag(FLAGS_merges).empty())
      return BadFlags("--path, --encoder and --merges are required");
    if (absl::GetFlag(FLAGS_crop_chars) < 1 ||
        absl::GetFlag(FLAGS_max_prompt_tokens) < 1)
      return BadFlags("--crop_chars and --max_prompt_tokens must be >= 1");
    return format_name == "squad" ? Squad() : Gpt2Text();
  }
  if (!tokenizer.empty())
    return BadFlags("--tokenizer=gpt2 goes with --format=text");
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
