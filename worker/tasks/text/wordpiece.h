// BERT's WordPiece tokenizer as Hugging Face's BertTokenizer runs it for
// bert-base-uncased: normalize (clean text, space around CJK ideographs,
// strip accents, lower-case), split at whitespace and punctuation, then
// greedy longest-match word pieces ("##" continues a word; a word of more
// than max_chars_per_word characters, or one the vocabulary cannot cover,
// is [UNK]). Unicode properties, NFD and case mapping come from ICU.
// wordpiece_test checks it against Hugging Face's output on the 994 texts of
// shared/data/tokenizers/testvectors/bert_*.jsonl.
#ifndef QKOV_WORKER_TASKS_TEXT_WORDPIECE_H_
#define QKOV_WORKER_TASKS_TEXT_WORDPIECE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/trial_defaults.h"
#include "worker/tasks/text/text_defaults.h"

namespace qkov::training::text {

// The published bert-base-uncased vocab.txt (common/trial_defaults.h).
inline constexpr const char* kBertBaseUncasedVocabSha256 =
    defaults::kBertVocabSha256;

struct WordPieceOptions {
  std::string vocab_path;  // one token per line, id = line number - 1
  // The file's expected sha256 (lower-case hex); empty: not checked.
  std::string vocab_sha256 = kBertBaseUncasedVocabSha256;
  bool clean_text = true;        // drop controls, whitespace -> ' '
  bool chinese_chars = true;     // ' ' around each CJK ideograph
  bool strip_accents = true;     // NFD, then drop nonspacing marks
  bool lowercase = true;         // full Unicode lower-case mapping
  int max_chars_per_word = 100;  // Hugging Face's limit (Google's is 200)
};

class WordPieceTokenizer {
 public:
  // Reads and checks the vocabulary. NOT_FOUND for a missing file;
  // INVALID_ARGUMENT "PATH: ..." for a checksum that differs, an empty file,
  // a duplicate token, or a vocabulary without [UNK] and [PAD].
  static absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> Load(
      const WordPieceOptions& options);

  // The ids of `text` (no [CLS]/[SEP]); `tokens`, when given, receives the
  // pieces' strings. Bytes that are not UTF-8 count as U+FFFD.
  std::vector<int32_t> Encode(absl::string_view text,
                              std::vector<std::string>* tokens = nullptr) const;

  // Encodes `words` one after another (as their space-joined text would
  // encode) and appends to `piece_word`, per piece, the index of the word it
  // came from: how word rationales become piece rationales.
  std::vector<int32_t> EncodeWords(const std::vector<std::string>& words,
                                   std::vector<int32_t>* piece_word) const;

  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  int64_t vocab_size() const { return static_cast<int64_t>(tokens_.size()); }
  const std::string& token(int32_t id) const { return tokens_[id]; }
  // The vocabulary file's sha256, as read (for provenance).
  const std::string& vocab_sha256() const { return sha256_; }

 private:
  WordPieceTokenizer() = default;
  // Appends the pieces of one pre-tokenized word (UTF-8).
  void Pieces(const std::string& word, int64_t chars,
              std::vector<int32_t>* ids) const;

  WordPieceOptions options_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t pad_id_ = 0;
  int32_t unk_id_ = 0;
  std::string sha256_;
};

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_WORDPIECE_H_
