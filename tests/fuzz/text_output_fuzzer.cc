// The writers of untrusted text: TerminalSafe (CLI and logs), CsvField
// (exports) and ErrorReply's JSON (the dashboard), on any bytes.
// Properties: no crash, no leak;
//  - TerminalSafe's output is valid UTF-8 with no control byte and no
//    bidirectional control, and leaves valid printable text unchanged;
//  - CsvField round-trips: an RFC 4180 reader gets the bytes back (with the
//    apostrophe in front where `neutralise` asks for it), and a quoted field
//    is the only way a comma, quote or line break appears;
//  - ErrorReply's body parses as JSON holding the message.
#include <fuzzer/FuzzedDataProvider.h>

#include <nlohmann/json.hpp>

#include "common/text.h"
#include "http/http_message.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

bool HasControl(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if ((c < 0x20 && c != '\t') || c == 0x7F) return true;
    // C1 (U+0080..U+009F) is C2 80..C2 9F.
    if (c == 0xC2 && i + 1 < s.size() &&
        static_cast<unsigned char>(s[i + 1]) < 0xA0)
      return true;
  }
  for (const char* bidi :
       {"\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d",
        "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"})
    if (s.find(bidi) != std::string::npos) return true;
  return false;
}

// One RFC 4180 field back to its bytes; false if `field` is not one.
bool ReadCsvField(const std::string& field, std::string* out) {
  out->clear();
  if (field.empty() || field[0] != '"') {
    if (field.find_first_of(",\"\r\n") != std::string::npos) return false;
    *out = field;
    return true;
  }
  if (field.size() < 2 || field.back() != '"') return false;
  for (size_t i = 1; i + 1 < field.size(); ++i) {
    if (field[i] == '"') {
      if (i + 2 >= field.size() || field[i + 1] != '"') return false;
      ++i;
    }
    out->push_back(field[i]);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The writers read libFuzzer's own buffer (exactly `size` bytes, no
  // terminating NUL), so a read one byte past the input is caught.
  const absl::string_view view(reinterpret_cast<const char*>(data), size);
  const std::string in(view);

  const std::string safe = qkov::TerminalSafe(view);
  QKOV_FUZZ_CHECK(qkov::IsValidUtf8(safe), "TerminalSafe gave bad UTF-8");
  QKOV_FUZZ_CHECK(!HasControl(safe), "TerminalSafe let a control through");
  if (qkov::IsValidUtf8(in) && !HasControl(in))
    QKOV_FUZZ_CHECK(safe == in, "printable text changed");

  for (bool neutralise : {false, true}) {
    const std::string field = qkov::CsvField(view, neutralise);
    std::string back;
    QKOV_FUZZ_CHECK(ReadCsvField(field, &back), field);
    const bool formula =
        !in.empty() && (in[0] == '=' || in[0] == '+' || in[0] == '-' ||
                        in[0] == '@' || in[0] == '\t' || in[0] == '\r');
    QKOV_FUZZ_CHECK(back == (neutralise && formula ? "'" + in : in), field);
  }

  const qkov::http::HttpReply reply =
      qkov::http::ErrorReply(absl::InvalidArgumentError(in));
  const nlohmann::json body =
      nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  QKOV_FUZZ_CHECK(!body.is_discarded(), "ErrorReply body is not JSON");
  QKOV_FUZZ_CHECK(body["error"]["message"].is_string(), reply.body);
  QKOV_FUZZ_CHECK(!HasControl(body["error"]["message"].get<std::string>()),
                  reply.body);
  return 0;
}
