// UTF-8 validity as protobuf requires it, and terminal-safe printing.
#include "common/text.h"

#include <gtest/gtest.h>

namespace qkov {
namespace {

TEST(TextTest, IsValidUtf8AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii\t\n"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
}

TEST(TextTest, IsValidUtf8RefusesWhatProtobufRefuses) {
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("a\x80z"));            // stray continuation
}

TEST(TextTest, TerminalSafeEscapesControlsAndBadBytes) {
  EXPECT_EQ(TerminalSafe("ok caf\xc3\xa9\ttab"), "ok caf\xc3\xa9\ttab");
  EXPECT_EQ(TerminalSafe("\x1b[2J\x1b]0;title\x07"),
            "\\x1b[2J\\x1b]0;title\\x07");
  EXPECT_EQ(TerminalSafe("line\nnext\r"), "line\\nnext\\r");
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(TerminalSafe("\x7f"), "\\x7f");
  // Bidirectional-text controls ("Trojan Source"): RLO, LRI..PDI, ALM,
  // LRM/RLM; other non-ASCII text stays as it is.
  EXPECT_EQ(TerminalSafe("admin\xe2\x80\xae"
                         "cod.exe"),
            "admin\\u202ecod.exe");
  EXPECT_EQ(TerminalSafe("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(TerminalSafe("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f"),
            "\\u061c\\u200e\\u200f");
  EXPECT_EQ(TerminalSafe("\xe2\x80\x94 \xe2\x80\xaf"),
            "\xe2\x80\x94 \xe2\x80\xaf");
  EXPECT_EQ(TerminalSafe("bad\xff"), "bad\\xff");
  EXPECT_EQ(TerminalSafe(std::string("nul\0x", 5)), "nul\\x00x");
  // Whatever goes in, nothing below 0x20 but tab comes out.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (char c : TerminalSafe(all)) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 || u == '\t') << static_cast<int>(u);
    EXPECT_NE(u, 0x7f);
  }
}

// OWASP's CSV-injection rule: a cell a spreadsheet would run as a formula
// starts with an apostrophe; RFC 4180 quoting around what needs it.
TEST(TextTest, CsvFieldNeutralisesFormulasAndQuotes) {
  EXPECT_EQ(CsvField("loss", true), "loss");
  EXPECT_EQ(CsvField("=HYPERLINK(\"http://x\")", true),
            "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(CsvField("+1", true), "'+1");
  EXPECT_EQ(CsvField("-2+3", true), "'-2+3");
  EXPECT_EQ(CsvField("@SUM(A1)", true), "'@SUM(A1)");
  EXPECT_EQ(CsvField("\tcmd", true), "'\tcmd");
  EXPECT_EQ(CsvField("\rcmd", true), "\"'\rcmd\"");
  EXPECT_EQ(CsvField("a,b", true), "\"a,b\"");
  EXPECT_EQ(CsvField("line\nnext", true), "\"line\nnext\"");
  EXPECT_EQ(CsvField("", true), "");
  // Raw: the bytes as stored, still quoted where CSV needs it.
  EXPECT_EQ(CsvField("=1+1", false), "=1+1");
  EXPECT_EQ(CsvField("=a,b", false), "\"=a,b\"");
}

}  // namespace
}  // namespace qkov
