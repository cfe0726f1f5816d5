// Text from the wire: UTF-8 validity, and safe display on a terminal.
#ifndef QKOV_COMMON_TEXT_H_
#define QKOV_COMMON_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace qkov {

// True when `s` is well-formed UTF-8 as protobuf's string fields require it:
// no overlong forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF.
bool IsValidUtf8(absl::string_view s);

// `s` made safe to print on a terminal: control characters (C0 but tab, DEL,
// C1), the bidirectional-text controls (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069: they reorder what follows, as in
// "Trojan Source") and bytes that are not UTF-8 become visible escapes
// (\n, \x1b, \u009b, \u202e), so a string from the wire cannot move the
// cursor, recolour the screen, send terminal commands or disguise itself.
// Printable text is unchanged. The dashboard's page script escapes the same
// characters the same way (server/dashboard/app.js, visible()).
std::string TerminalSafe(absl::string_view s);

// `s` as a JSON string literal (RFC 8259): in double quotes; the quote,
// backslash, newline, tab and carriage return escaped by a backslash, every
// other control character as a \u00XX escape; other bytes as they are.
std::string JsonQuote(absl::string_view s);

// One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF.
// With `neutralise`, a field that a spreadsheet would run as a formula
// (first character =, +, -, @, tab or CR) gets a leading apostrophe, as
// OWASP's CSV-injection rule asks; pass false for raw bytes.
std::string CsvField(absl::string_view s, bool neutralise);

}  // namespace qkov

#endif  // QKOV_COMMON_TEXT_H_
