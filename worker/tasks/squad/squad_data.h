// SQuAD question answering as the paper's decoder sees it
// (docs/squad.md): questions read from the official SQuAD v1.1 or v2.0 JSON
// (v2.0: answerable questions only), each turned into a prompt
// "Q: {question} C: {context} A:" over a context cropped around the first
// answer, the answer " {answer}" + <|endoftext|> to be generated, and the
// prompt positions whose text overlaps the answer span (the tokens
// attention should find).
// A file that is missing, truncated or malformed is an INVALID_ARGUMENT (or
// NOT_FOUND) whose message starts "PATH:LINE: " for JSON syntax and
// "PATH: data[i].paragraphs[j].qas[k]: " for a field that is wrong.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_DATA_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/tasks/text/gpt2_bpe.h"

namespace qkov::training::squad {

struct SquadQuestion {
  std::string id;
  std::string title;    // the article's
  int32_t article = 0;  // its index in the file
  std::string question;
  std::string context;
  // Every gold answer in the file's order (duplicates kept), and where each
  // starts in `context`, in code points (as the file counts).
  std::vector<std::string> answers;
  std::vector<int64_t> answer_starts;
};

struct SquadSource {
  std::string path;
  // Articles [article_begin, article_end) of the file (article_end 0: to the
  // end): how the shipped dev set is split into training and evaluation
  // articles.
  int32_t article_begin = 0;
  int32_t article_end = 0;
  int64_t max_questions = 0;  // > 0: the first ones only
  std::string sha256;         // non-empty: `path` must have this checksum
};

struct SquadData {
  std::string version;   // the file's "version"
  int32_t articles = 0;  // articles read (in the range)
  std::vector<SquadQuestion> questions;
  int64_t unanswerable = 0;  // v2.0 questions left out (no answer)
  std::string sha256;        // of `path` (provenance)
};

absl::StatusOr<SquadData> LoadSquad(const SquadSource& source);

struct PromptOptions {
  int32_t crop_chars = 200;         // context kept either side of the answer
  int32_t max_prompt_tokens = 204;  // 256 positions - 50 answer - 2
  int32_t max_answer_tokens = 50;   // before <|endoftext|>
};

struct SquadExample {
  std::string id;
  std::vector<int32_t> prompt;  // "Q: ... C: ... A:"
  // " {first answer}" (at most max_answer_tokens) then <|endoftext|>.
  std::vector<int32_t> answer;
  // Per prompt position: 1 when its bytes overlap the first answer's span in
  // the context.
  std::vector<uint8_t> relevant;
  std::vector<std::string> gold;  // every gold answer, for F1/EM
  int32_t crop_chars = 0;  // the crop used (smaller when the prompt was long)
};

// The example of `q`. The crop shrinks (by quarters) until the prompt has
// at most max_prompt_tokens; NOT_FOUND when even the answer alone does not
// fit, or the answer span is not in the context (such questions are
// counted and left out by the caller).
absl::StatusOr<SquadExample> BuildExample(const SquadQuestion& q,
                                          const text::Gpt2BpeTokenizer& bpe,
                                          const PromptOptions& options);

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_DATA_H_
