#include "common/text.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qkov {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 (Unicode 15,
// table 3-7).
size_t SequenceLength(absl::string_view s, size_t i, uint32_t* code_point) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) {
    *code_point = c;
    return 1;
  }
  size_t n;
  uint32_t cp;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = at(i + k);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  *code_point = cp;
  return n;
}

}  // namespace

bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  uint32_t cp;
  while (i < s.size()) {
    const size_t n = SequenceLength(s, i, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string TerminalSafe(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  uint32_t cp;
  while (i < s.size()) {
    const size_t n = SequenceLength(s, i, &cp);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if ((cp < 0x20 && cp != '\t') || cp == 0x7F) {
      absl::StrAppendFormat(&out, "\\x%02x", cp);
    } else if ((cp >= 0x80 && cp <= 0x9F) || cp == 0x61C || cp == 0x200E ||
               cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
               (cp >= 0x2066 && cp <= 0x2069)) {
      absl::StrAppendFormat(&out, "\\u%04x", cp);
    } else {
      out.append(s.data() + i, n);
    }
    i += n;
  }
  return out;
}

std::string CsvField(absl::string_view s, bool neutralise) {
  std::string field;
  if (neutralise && !s.empty() &&
      (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' ||
       s[0] == '\t' || s[0] == '\r'))
    field = "'";
  field.append(s.data(), s.size());
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

}  // namespace qkov
