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

}  // namespace
}  // namespace qkov
