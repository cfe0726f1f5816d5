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
// C1), and bytes that are not UTF-8, become visible escapes (\n, \x1b,
// \u009b), so a string from the wire cannot move the cursor, recolour the
// screen or send terminal commands. Printable text is unchanged.
std::string TerminalSafe(absl::string_view s);

}  // namespace qkov

#endif  // QKOV_COMMON_TEXT_H_
