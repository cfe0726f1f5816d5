#include "worker/tasks/text/wordpiece.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"

namespace qkov::training::text {
namespace {

using CodePoints = std::vector<UChar32>;

CodePoints Decode(absl::string_view s) {
  CodePoints out;
  out.reserve(s.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(s.data());
  const int32_t n = static_cast<int32_t>(s.size());
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(bytes, i, n, c);
    out.push_back(c < 0 ? 0xFFFD : c);
  }
  return out;
}

void AppendUtf8(UChar32 c, std::string* out) {
  char buf[U8_MAX_LENGTH];
  int32_t n = 0;
  UBool error = false;
  U8_APPEND(reinterpret_cast<uint8_t*>(buf), n, U8_MAX_LENGTH, c, error);
  if (!error) out->append(buf, n);
}

// Hugging Face's definitions (tokenizers/src/normalizers/bert.rs and
// pre_tokenizers/bert.rs).
bool IsWhitespace(UChar32 c) {
  return c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(c);
}

bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (u_charType(c)) {
    case U_CONTROL_CHAR:      // Cc
    case U_FORMAT_CHAR:       // Cf
    case U_UNASSIGNED:        // Cn
    case U_PRIVATE_USE_CHAR:  // Co
      return true;
    default:
      return false;
  }
}

bool IsPunctuation(UChar32 c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126))
    return true;
  switch (u_charType(c)) {
    case U_CONNECTOR_PUNCTUATION:  // Pc
    case U_DASH_PUNCTUATION:       // Pd
    case U_START_PUNCTUATION:      // Ps
    case U_END_PUNCTUATION:        // Pe
    case U_INITIAL_PUNCTUATION:    // Pi
    case U_FINAL_PUNCTUATION:      // Pf
    case U_OTHER_PUNCTUATION:      // Po
      return true;
    default:
      return false;
  }
}

bool IsChineseChar(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

CodePoints Nfd(const CodePoints& in) {
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(err);
  icu::UnicodeString s;
  for (UChar32 c : in) s.append(c);
  icu::UnicodeString out = nfd->normalize(s, err);
  if (U_FAILURE(err)) return in;
  CodePoints cps;
  for (int32_t i = 0; i < out.length();) {
    const UChar32 c = out.char32At(i);
    cps.push_back(c);
    i += U16_LENGTH(c);
  }
  return cps;
}

// Each code point's full lower-case mapping on its own (no context, as
// Rust's char::to_lowercase, which Hugging Face applies per character).
void AppendLower(UChar32 c, CodePoints* out) {
  UChar src[2];
  int32_t n = 0;
  U16_APPEND_UNSAFE(src, n, c);
  UChar dst[8];
  UErrorCode err = U_ZERO_ERROR;
  const int32_t m = u_strToLower(dst, 8, src, n, "", &err);
  if (U_FAILURE(err)) {
    out->push_back(c);
    return;
  }
  for (int32_t i = 0; i < m;) {
    UChar32 d;
    U16_NEXT(dst, i, m, d);
    out->push_back(d);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Load(
    const WordPieceOptions& options) {
  const std::string& path = options.vocab_path;
  absl::StatusOr<std::string> sha = Sha256HexOfFile(path);
  if (!sha.ok()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the vocabulary file"));
  }
  if (!options.vocab_sha256.empty() && *sha != options.vocab_sha256) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": sha256 ", *sha, " is not the expected ", options.vocab_sha256,
        " (another vocabulary, or a damaged file)"));
  }
  std::unique_ptr<WordPieceTokenizer> t(new WordPieceTokenizer());
  t->options_ = options;
  t->sha256_ = *sha;
  std::ifstream in(path);
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    // Hugging Face trims the end of each line.
    while (!line.empty() &&
           (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    const int32_t id = static_cast<int32_t>(t->tokens_.size());
    if (!t->ids_.emplace(line, id).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", number, ": token '", line, "' appears twice"));
    }
    t->tokens_.push_back(line);
  }
  if (t->tokens_.empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": no tokens"));
  auto unk = t->ids_.find("[UNK]");
  auto pad = t->ids_.find("[PAD]");
  if (unk == t->ids_.end() || pad == t->ids_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a WordPiece vocabulary needs [UNK] and [PAD]"));
  }
  t->unk_id_ = unk->second;
  t->pad_id_ = pad->second;
  return t;
}

void WordPieceTokenizer::Pieces(const std::string& word, int64_t chars,
                                std::vector<int32_t>* ids) const {
  if (chars > options_.max_chars_per_word) {
    ids->push_back(unk_id_);
    return;
  }
  std::vector<int32_t> pieces;
  size_t start = 0;
  std::string candidate;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (end > start) {
      candidate.assign(start > 0 ? "##" : "");
      candidate.append(word, start, end - start);
      auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
      // Back off one code point (UTF-8 continuation bytes are 10xxxxxx).
      do {
        --end;
      } while (end > start &&
               (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
    }
    if (found < 0) {
      ids->push_back(unk_id_);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  ids->insert(ids->end(), pieces.begin(), pieces.end());
}

std::vector<int32_t> WordPieceTokenizer::Encode(
    absl::string_view text, std::vector<std::string>* tokens) const {
  CodePoints cps = Decode(text);
  if (options_.clean_text) {
    CodePoints clean;
    for (UChar32 c : cps) {
      if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
      clean.push_back(IsWhitespace(c) ? ' ' : c);
    }
    cps = std::move(clean);
  }
  if (options_.chinese_chars) {
    CodePoints spaced;
    for (UChar32 c : cps) {
      if (IsChineseChar(c)) {
        spaced.insert(spaced.end(), {' ', c, ' '});
      } else {
        spaced.push_back(c);
      }
    }
    cps = std::move(spaced);
  }
  if (options_.strip_accents) {
    CodePoints stripped;
    for (UChar32 c : Nfd(cps)) {
      if (u_charType(c) != U_NON_SPACING_MARK) stripped.push_back(c);
    }
    cps = std::move(stripped);
  }
  if (options_.lowercase) {
    CodePoints lower;
    for (UChar32 c : cps) AppendLower(c, &lower);
    cps = std::move(lower);
  }
  // Words: runs between whitespace, each punctuation character alone.
  std::vector<int32_t> ids;
  std::string word;
  int64_t chars = 0;
  auto flush = [&] {
    if (chars > 0) Pieces(word, chars, &ids);
    word.clear();
    chars = 0;
  };
  for (UChar32 c : cps) {
    if (IsWhitespace(c)) {
      flush();
    } else if (IsPunctuation(c)) {
      flush();
      AppendUtf8(c, &word);
      chars = 1;
      flush();
    } else {
      AppendUtf8(c, &word);
      ++chars;
    }
  }
  flush();
  if (tokens != nullptr) {
    for (int32_t id : ids) tokens->push_back(tokens_[id]);
  }
  return ids;
}

std::vector<int32_t> WordPieceTokenizer::EncodeWords(
    const std::vector<std::string>& words,
    std::vector<int32_t>* piece_word) const {
  std::vector<int32_t> ids;
  for (size_t w = 0; w < words.size(); ++w) {
    const std::vector<int32_t> pieces = Encode(words[w]);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    if (piece_word != nullptr)
      piece_word->insert(piece_word->end(), pieces.size(),
                         static_cast<int32_t>(w));
  }
  return ids;
}

}  // namespace qkov::training::text
