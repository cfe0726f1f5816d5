// GPT-2's byte-level BPE tokenizer, as OpenAI's encoder.py runs it: split
// the text with GPT-2's pre-tokenization pattern (PCRE2, Unicode
// properties), then merge each piece's bytes by the ranked merge rules of
// vocab.bpe and look the merged symbols up in encoder.json. Every id keeps
// the byte span of the text it came from, so prompt positions can be matched
// to a character span (an answer in a SQuAD context).
// gpt2_bpe_test checks it against OpenAI's and Hugging Face's output on the
// 994 texts of shared/data/tokenizers/testvectors/gpt2_*.jsonl.
#ifndef QKOV_WORKER_TASKS_TEXT_GPT2_BPE_H_
#define QKOV_WORKER_TASKS_TEXT_GPT2_BPE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/trial_defaults.h"
#include "worker/tasks/text/text_defaults.h"

namespace qkov::training::text {

struct Gpt2BpeOptions {
  std::string encoder_path;  // encoder.json: token (byte-to-unicode form) -> id
  std::string merges_path;   // vocab.bpe: "#version" line, then "a b" per rank
  // The files' expected sha256 (lower-case hex); empty: not checked.
  std::string encoder_sha256 = defaults::kGpt2EncoderSha256;
  std::string merges_sha256 = defaults::kGpt2MergesSha256;
};

// A token's bytes in the encoded text: [begin, end).
struct ByteSpan {
  int32_t begin = 0;
  int32_t end = 0;
};

class Gpt2BpeTokenizer {
 public:
  ~Gpt2BpeTokenizer();

  // Reads and checks both files. NOT_FOUND for a missing file;
  // INVALID_ARGUMENT "PATH[:LINE]: ..." for a checksum that differs, JSON
  // that does not parse, a token or merge that is not of the byte-level
  // alphabet, a merge whose parts or result have no id, or no <|endoftext|>.
  static absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> Load(
      const Gpt2BpeOptions& options);

  // The ids of `text` (UTF-8; no special tokens are recognised, as in
  // encoder.py: "<|endoftext|>" in the text is plain text). `spans`, when
  // given, receives each id's byte span in `text`. Safe to call from several
  // threads.
  std::vector<int32_t> Encode(absl::string_view text,
                              std::vector<ByteSpan>* spans = nullptr) const;

  // The text of `ids` (their bytes joined; a sequence cut inside a UTF-8
  // character gives those bytes as they are).
  std::string Decode(const std::vector<int32_t>& ids) const;

  int32_t end_of_text_id() const { return end_of_text_id_; }
  int64_t vocab_size() const { return static_cast<int64_t>(bytes_.size()); }
  // Token `id`'s raw bytes (not the byte-to-unicode form of encoder.json).
  const std::string& token_bytes(int32_t id) const { return bytes_[id]; }
  // Token `id` as encoder.json spells it (byte-to-unicode form).
  std::string token_name(int32_t id) const;
  // The files' sha256, as read (for provenance).
  const std::string& encoder_sha256() const { return encoder_sha256_; }
  const std::string& merges_sha256() const { return merges_sha256_; }

 private:
  struct Pattern;
  Gpt2BpeTokenizer() = default;
  // Load's steps; `reverse` maps GPT-2's byte-to-unicode alphabet (ICU's
  // UChar32, an int32_t) back to bytes.
  absl::Status LoadEncoder(const Gpt2BpeOptions& options,
                           const std::unordered_map<int32_t, char>& reverse);
  absl::Status LoadMerges(const Gpt2BpeOptions& options,
                          const std::unordered_map<int32_t, char>& reverse);
  absl::Status CompilePattern();
  // The ids of one pre-tokenized piece (raw bytes), with each id's byte
  // length; from the cache when seen before.
  void EncodePiece(absl::string_view piece, std::vector<int32_t>* ids,
                   std::vector<int32_t>* lengths) const;

  struct Merge {
    int32_t rank = 0;    // lower merges first
    int32_t result = 0;  // the merged symbol's id
  };
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  std::unique_ptr<Pattern> pattern_;
  std::vector<std::string> bytes_;                // id -> raw bytes
  std::unordered_map<std::string, int32_t> ids_;  // raw bytes -> id
  int32_t byte_ids_[256] = {};                    // byte -> its symbol's id
  std::unordered_map<uint64_t, Merge> merges_;    // PairKey(left, right)
  int32_t end_of_text_id_ = -1;
  std::string encoder_sha256_;
  std::string merges_sha256_;

  // Pieces already merged: raw bytes -> (ids, byte lengths). Bounded.
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<
      std::string, std::pair<std::vector<int32_t>, std::vector<int32_t>>>
      cache_;
};

// The byte offset in UTF-8 `text` of code point `index` (Python's str index,
// as SQuAD's answer_start counts); text.size() for the end or past it.
int64_t ByteOffsetOfCodePoint(absl::string_view text, int64_t index);

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_GPT2_BPE_H_
