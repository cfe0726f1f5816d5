#include "worker/tasks/squad/squad_eval.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace qkov::training::squad {
namespace {

// Python's str.lower(): full, context-sensitive lower-case mapping (final
// sigma included), which ICU's root-locale toLower gives.
icu::UnicodeString Lower(absl::string_view s) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(
      icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  u.toLower(icu::Locale::getRoot());
  return u;
}

// Python's str.isspace(), which str.split() splits at: bidirectional class
// WS, B or S, or general category Zs.
bool IsPythonSpace(UChar32 c) {
  if (u_charType(c) == U_SPACE_SEPARATOR) return true;
  switch (u_charDirection(c)) {
    case U_WHITE_SPACE_NEUTRAL:
    case U_BLOCK_SEPARATOR:
    case U_SEGMENT_SEPARATOR:
      return true;
    default:
      return false;
  }
}

// re.sub(r'\b(a|an|the)\b', ' ', text) with Python 3's Unicode \b.
std::string RemoveArticles(const std::string& text) {
  static pcre2_code* const kArticles = [] {
    int error = 0;
    PCRE2_SIZE at = 0;
    return pcre2_compile(reinterpret_cast<PCRE2_SPTR>(R"(\b(a|an|the)\b)"),
                         PCRE2_ZERO_TERMINATED,
                         PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
                         &error, &at, nullptr);
  }();
  std::string out(text.size() + 16, '\0');
  PCRE2_SIZE length = out.size();
  for (;;) {
    const int rc = pcre2_substitute(
        kArticles, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
        PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH, nullptr,
        nullptr, reinterpret_cast<PCRE2_SPTR>(" "), 1,
        reinterpret_cast<PCRE2_UCHAR*>(out.data()), &length);
    if (rc == PCRE2_ERROR_NOMEMORY) {
      out.assign(length, '\0');
      continue;
    }
    if (rc < 0) return text;  // cannot happen for valid UTF-8 input
    out.resize(length);
    return out;
  }
}

std::vector<std::string> Tokens(absl::string_view s) {
  std::vector<std::string> out;
  const std::string normalized = NormalizeAnswer(s);
  size_t start = 0;
  // NormalizeAnswer leaves single ASCII spaces between tokens.
  while (start < normalized.size()) {
    size_t end = normalized.find(' ', start);
    if (end == std::string::npos) end = normalized.size();
    if (end > start) out.push_back(normalized.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string NormalizeAnswer(absl::string_view s) {
  // lower, then remove_punc (string.punctuation: ASCII only).
  icu::UnicodeString lower = Lower(s);
  icu::UnicodeString kept;
  for (int32_t i = 0; i < lower.length();) {
    const UChar32 c = lower.char32At(i);
    i += U16_LENGTH(c);
    if (c < 128 && std::strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) &&
        c != 0)
      continue;
    kept.append(c);
  }
  std::string utf8;
  kept.toUTF8String(utf8);
  // remove_articles, then white_space_fix (' '.join(text.split())).
  const icu::UnicodeString spaced =
      icu::UnicodeString::fromUTF8(RemoveArticles(utf8));
  icu::UnicodeString joined;
  bool in_word = false;
  for (int32_t i = 0; i < spaced.length();) {
    const UChar32 c = spaced.char32At(i);
    i += U16_LENGTH(c);
    if (IsPythonSpace(c)) {
      in_word = false;
      continue;
    }
    if (!in_word && !joined.isEmpty()) joined.append(UChar32{' '});
    in_word = true;
    joined.append(c);
  }
  std::string out;
  joined.toUTF8String(out);
  return out;
}

double F1Score(absl::string_view prediction, absl::string_view gold) {
  const std::vector<std::string> p = Tokens(prediction), g = Tokens(gold);
  std::map<std::string, int> counts;
  for (const std::string& t : g) ++counts[t];
  int same = 0;
  for (const std::string& t : p) {
    auto it = counts.find(t);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  }
  if (same == 0) return 0;
  const double precision = static_cast<double>(same) / p.size();
  const double recall = static_cast<double>(same) / g.size();
  return 2 * precision * recall / (precision + recall);
}

double ExactMatch(absl::string_view prediction, absl::string_view gold) {
  return NormalizeAnswer(prediction) == NormalizeAnswer(gold) ? 1.0 : 0.0;
}

double MaxF1(absl::string_view prediction,
             const std::vector<std::string>& golds) {
  double best = 0;
  for (const std::string& g : golds)
    best = std::max(best, F1Score(prediction, g));
  return best;
}

double MaxExactMatch(absl::string_view prediction,
                     const std::vector<std::string>& golds) {
  double best = 0;
  for (const std::string& g : golds)
    best = std::max(best, ExactMatch(prediction, g));
  return best;
}

}  // namespace qkov::training::squad
