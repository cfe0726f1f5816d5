// Percent-decoding of paths, queries and form bodies, the front's one piece
// that needs no socket. (tests/integration/http_attack_test.cc attacks the
// real server.)
#include "http/http_message.h"

#include <gtest/gtest.h>

namespace qkov::http {
namespace {

TEST(PercentDecodeTest, PathsQueriesAndRefusals) {
  std::string out;
  EXPECT_TRUE(PercentDecode("/sweeps/a%20b", false, &out));
  EXPECT_EQ(out, "/sweeps/a b");
  EXPECT_TRUE(PercentDecode("a+b%2Bc", true, &out));
  EXPECT_EQ(out, "a b+c");
  EXPECT_TRUE(PercentDecode("a+b", false, &out));
  EXPECT_EQ(out, "a+b") << "'+' is a space only in queries and forms";
  EXPECT_TRUE(PercentDecode("caf%C3%A9", false, &out));
  EXPECT_EQ(out, "caf\xc3\xa9");
  for (const char* bad :
       {"app.js%00.html", "%ff", "%c0%af", "%", "%4", "%zz", "%ed%a0%80"}) {
    EXPECT_FALSE(PercentDecode(bad, false, &out)) << bad;
  }
}

}  // namespace
}  // namespace qkov::http
