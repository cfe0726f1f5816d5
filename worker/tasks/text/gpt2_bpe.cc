#include "worker/tasks/text/gpt2_bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/utf8.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "worker/tasks/text/json_errors.h"

namespace qkov::training::text {
namespace {

// GPT-2's pre-tokenization pattern (encoder.py), unchanged.
constexpr char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Pieces cached before the cache is emptied and starts again.
constexpr size_t kCacheLimit = 1 << 16;

// encoder.py's bytes_to_unicode(): the printable bytes stand for
// themselves, every other byte for a code point from 256 on.
std::vector<UChar32> ByteToUnicode() {
  std::vector<UChar32> table(256, -1);
  auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
           (b >= 0xAE && b <= 0xFF);
  };
  int next = 0;
  for (int b = 0; b < 256; ++b) table[b] = printable(b) ? b : 256 + next++;
  return table;
}

// The raw bytes a byte-to-unicode string stands for; false when a code
// point is not in the table or the UTF-8 is broken.
bool UnicodeToBytes(absl::string_view s,
                    const std::unordered_map<UChar32, char>& reverse,
                    std::string* out) {
  out->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const int32_t n = static_cast<int32_t>(s.size());
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(p, i, n, c);
    auto it = reverse.find(c);
    if (c < 0 || it == reverse.end()) return false;
    out->push_back(it->second);
  }
  return true;
}

absl::StatusOr<std::string> ReadChecked(const std::string& path,
                                        const std::string& want_sha256,
                                        const char* what, std::string* sha256) {
  absl::StatusOr<std::string> sha = Sha256HexOfFile(path);
  if (!sha.ok()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the ", what, " file"));
  }
  if (!want_sha256.empty() && *sha != want_sha256) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": sha256 ", *sha, " is not the expected ",
                     want_sha256, " (another tokenizer, or a damaged file)"));
  }
  *sha256 = *sha;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return FileError(path, 0, "read failed");
  return text.str();
}

}  // namespace

struct Gpt2BpeTokenizer::Pattern {
  pcre2_code* code = nullptr;
  ~Pattern() { pcre2_code_free(code); }
};

Gpt2BpeTokenizer::~Gpt2BpeTokenizer() = default;

absl::StatusOr<std::unique_ptr<Gpt2BpeTokenizer>> Gpt2BpeTokenizer::Load(
    const Gpt2BpeOptions& options) {
  std::unique_ptr<Gpt2BpeTokenizer> t(new Gpt2BpeTokenizer());
  const std::vector<UChar32> to_unicode = ByteToUnicode();
  std::unordered_map<UChar32, char> reverse;
  for (int b = 0; b < 256; ++b) reverse[to_unicode[b]] = static_cast<char>(b);
  if (absl::Status s = t->LoadEncoder(options, reverse); !s.ok()) return s;
  if (absl::Status s = t->LoadMerges(options, reverse); !s.ok()) return s;
  if (absl::Status s = t->CompilePattern(); !s.ok()) return s;
  return t;
}

// encoder.json: token (in GPT-2's alphabet) -> id, every id once, with
// <|endoftext|> and a token for each byte.
absl::Status Gpt2BpeTokenizer::LoadEncoder(
    const Gpt2BpeOptions& options,
    const std::unordered_map<UChar32, char>& reverse) {
  const std::string& epath = options.encoder_path;
  absl::StatusOr<std::string> etext = ReadChecked(
      epath, options.encoder_sha256, "GPT-2 encoder", &encoder_sha256_);
  if (!etext.ok()) return etext.status();
  absl::StatusOr<nlohmann::json> encoder = ParseJsonAt(*etext, epath, 1);
  if (!encoder.ok()) return encoder.status();
  if (!encoder->is_object() || encoder->empty())
    return FileError(epath, 0, "must be a JSON object of token -> id");
  bytes_.assign(encoder->size(), std::string());
  std::vector<bool> seen(encoder->size(), false);
  std::string raw;
  for (auto it = encoder->begin(); it != encoder->end(); ++it) {
    if (!it.value().is_number_integer())
      return FileError(
          epath, 0,
          absl::StrCat("token \"", it.key(), "\" must have an integer id"));
    const int64_t id = it.value().get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(encoder->size()) || seen[id])
      return FileError(epath, 0,
                       absl::StrCat("token \"", it.key(), "\" has id ", id,
                                    ": ids must be 0..", encoder->size() - 1,
                                    ", each once"));
    seen[id] = true;
    if (it.key() == "<|endoftext|>") {
      end_of_text_id_ = static_cast<int32_t>(id);
      raw = it.key();  // never produced by Encode: its text is split
    } else if (!UnicodeToBytes(it.key(), reverse, &raw)) {
      return FileError(
          epath, 0,
          absl::StrCat("token \"", it.key(),
                       "\" is not in GPT-2's byte-to-unicode alphabet"));
    }
    bytes_[id] = raw;
    if (id != end_of_text_id_) ids_[raw] = static_cast<int32_t>(id);
  }
  if (end_of_text_id_ < 0) return FileError(epath, 0, "no <|endoftext|> token");
  for (int b = 0; b < 256; ++b) {
    auto it = ids_.find(std::string(1, static_cast<char>(b)));
    if (it == ids_.end())
      return FileError(epath, 0, absl::StrCat("no token for the byte ", b));
    byte_ids_[b] = it->second;
  }
  return absl::OkStatus();
}

// vocab.bpe: one merge a line ("left right"), ranked in file order, every
// part and result a token of the encoder.
absl::Status Gpt2BpeTokenizer::LoadMerges(
    const Gpt2BpeOptions& options,
    const std::unordered_map<UChar32, char>& reverse) {
  const std::string& mpath = options.merges_path;
  absl::StatusOr<std::string> mtext = ReadChecked(
      mpath, options.merges_sha256, "GPT-2 merges", &merges_sha256_);
  if (!mtext.ok()) return mtext.status();
  std::istringstream lines(*mtext);
  std::string line;
  int64_t number = 0;
  int32_t rank = 0;
  std::string left, right;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line.rfind("#version", 0) == 0) continue;
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 ||
        line.find(' ', space + 1) != std::string::npos ||
        space + 1 == line.size())
      return FileError(mpath, number,
                       "a merge must be two symbols and one space");
    if (!UnicodeToBytes(absl::string_view(line).substr(0, space), reverse,
                        &left) ||
        !UnicodeToBytes(absl::string_view(line).substr(space + 1), reverse,
                        &right))
      return FileError(mpath, number,
                       "not in GPT-2's byte-to-unicode alphabet");
    auto l = ids_.find(left), r = ids_.find(right), m = ids_.find(left + right);
    if (l == ids_.end() || r == ids_.end() || m == ids_.end())
      return FileError(
          mpath, number,
          absl::StrCat("merge \"", line, "\": a part or the result is not in ",
                       options.encoder_path));
    merges_.emplace(PairKey(l->second, r->second), Merge{rank++, m->second});
  }
  if (rank == 0) return FileError(mpath, 0, "no merge rules");
  return absl::OkStatus();
}

// GPT-2's pre-tokenizing pattern, JIT-compiled where PCRE2 can.
absl::Status Gpt2BpeTokenizer::CompilePattern() {
  int error = 0;
  PCRE2_SIZE error_at = 0;
  pattern_ = std::make_unique<Pattern>();
  pattern_->code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern), PCRE2_ZERO_TERMINATED,
      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &error_at,
      nullptr);
  if (pattern_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return absl::InternalError(
        absl::StrCat("PCRE2 cannot compile GPT-2's pattern: ",
                     reinterpret_cast<const char*>(message)));
  }
  pcre2_jit_compile(pattern_->code, PCRE2_JIT_COMPLETE);  // else interpreted
  return absl::OkStatus();
}

void Gpt2BpeTokenizer::EncodePiece(absl::string_view piece,
                                   std::vector<int32_t>* ids,
                                   std::vector<int32_t>* lengths) const {
  const std::string key(piece);
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ids->insert(ids->end(), it->second.first.begin(), it->second.first.end());
      lengths->insert(lengths->end(), it->second.second.begin(),
                      it->second.second.end());
      return;
    }
  }
  // encoder.py's bpe(): merge the lowest-ranked adjacent pair everywhere
  // (left to right, not overlapping) until no adjacent pair has a rank.
  std::vector<int32_t> word, len;
  for (char c : piece) {
    word.push_back(byte_ids_[static_cast<unsigned char>(c)]);
    len.push_back(1);
  }
  while (word.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max();
    int32_t left = -1, right = -1, result = -1;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto it = merges_.find(PairKey(word[i], word[i + 1]));
      if (it != merges_.end() && it->second.rank < best) {
        best = it->second.rank;
        left = word[i];
        right = word[i + 1];
        result = it->second.result;
      }
    }
    if (result < 0) break;
    std::vector<int32_t> merged, merged_len;
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
        merged.push_back(result);
        merged_len.push_back(len[i] + len[i + 1]);
        i += 2;
      } else {
        merged.push_back(word[i]);
        merged_len.push_back(len[i]);
        ++i;
      }
    }
    word.swap(merged);
    len.swap(merged_len);
  }
  ids->insert(ids->end(), word.begin(), word.end());
  lengths->insert(lengths->end(), len.begin(), len.end());
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(key, std::make_pair(std::move(word), std::move(len)));
}

std::vector<int32_t> Gpt2BpeTokenizer::Encode(
    absl::string_view text, std::vector<ByteSpan>* spans) const {
  std::vector<int32_t> ids, lengths;
  pcre2_match_data* match =
      pcre2_match_data_create_from_pattern(pattern_->code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t at = 0;
  auto piece = [&](size_t begin, size_t end) {
    EncodePiece(text.substr(begin, end - begin), &ids, &lengths);
  };
  while (at < text.size()) {
    const int rc = pcre2_match(pattern_->code, subject, text.size(), at, 0,
                               match, nullptr);
    if (rc < 0) {  // no match in the rest (only bytes that are not UTF-8)
      piece(at, text.size());
      break;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
    if (ov[0] > at) piece(at, ov[0]);  // bytes the pattern skipped
    if (ov[1] <= ov[0]) {              // cannot happen: no empty alternative
      piece(ov[0], text.size());
      break;
    }
    piece(ov[0], ov[1]);
    at = ov[1];
  }
  pcre2_match_data_free(match);
  if (spans != nullptr) {
    spans->clear();
    int32_t begin = 0;
    for (int32_t n : lengths) {
      spans->push_back({begin, begin + n});
      begin += n;
    }
  }
  return ids;
}

std::string Gpt2BpeTokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id >= 0 && id < vocab_size()) out += bytes_[id];
  }
  return out;
}

std::string Gpt2BpeTokenizer::token_name(int32_t id) const {
  if (id == end_of_text_id_) return bytes_[id];
  static const std::vector<UChar32> to_unicode = ByteToUnicode();
  std::string out;
  for (char c : bytes_[id]) {
    uint8_t buf[U8_MAX_LENGTH];
    int32_t n = 0;
    U8_APPEND_UNSAFE(buf, n, to_unicode[static_cast<unsigned char>(c)]);
    out.append(reinterpret_cast<const char*>(buf), n);
  }
  return out;
}

int64_t ByteOffsetOfCodePoint(absl::string_view text, int64_t index) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t n = static_cast<int32_t>(text.size());
  int32_t i = 0;
  for (int64_t k = 0; k < index && i < n; ++k) U8_FWD_1(p, i, n);
  return i;
}

}  // namespace qkov::training::text
