// common/man_page.h: a page lists every flag of its program, each in a
// group, and refuses to render when one is left out or made up.
#include "common/man_page.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/flags/flag.h"
#include "common/flags_help.h"

ABSL_FLAG(int, man_test_alpha, 3, "the alpha setting");
ABSL_FLAG(std::string, man_test_beta, "", "a path\n.dots and back\\slash");

namespace qkov {
namespace {

ManPage Page() {
  ManPage p;
  p.program = "man-test";
  p.summary = "a test page";
  p.synopsis = ".B man-test";
  p.description = "Tests.";
  p.groups = {{"First", "", {"man_test_alpha"}},
              {"Second", "", {"man_test_beta"}}};
  p.sections = {{"EXIT STATUS", ".TP\n.B 0\nAlways."}};
  return p;
}

class ManPageTest : public ::testing::Test {
 protected:
  void SetUp() override { HelpListsFlagsOf(__FILE__, "man-test", "9.9"); }
};

TEST_F(ManPageTest, EveryFlagUnderItsGroupWithHelpAndDefault) {
  absl::StatusOr<std::string> page = RenderManPage(Page(), "9.9");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find(".TH man-test 1 \"\" \"man-test 9.9\""),
            std::string::npos);
  const size_t first = page->find(".SS First");
  const size_t alpha = page->find(
      ".B \\-\\-man_test_alpha\nthe alpha setting "
      "(default: 3).");
  const size_t second = page->find(".SS Second");
  const size_t beta = page->find(".B \\-\\-man_test_beta");
  ASSERT_NE(alpha, std::string::npos) << *page;
  EXPECT_LT(first, alpha);
  EXPECT_LT(alpha, second);
  EXPECT_LT(second, beta);
  // A help text's line that starts with a dot, and a backslash, cannot
  // become roff requests.
  EXPECT_NE(page->find("a path\n\\&.dots"), std::string::npos) << *page;
  EXPECT_EQ(page->find("back\\slash"), std::string::npos);
  EXPECT_NE(page->find("back\\eslash"), std::string::npos);
  EXPECT_NE(page->find(".SH EXIT STATUS\n.TP\n.B 0\nAlways."),
            std::string::npos);
}

TEST_F(ManPageTest, AFlagInNoGroupOrAMadeUpOneIsRefused) {
  ManPage missing = Page();
  missing.groups.pop_back();
  absl::StatusOr<std::string> page = RenderManPage(missing, "9.9");
  EXPECT_EQ(page.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(page.status().message().find("--man_test_beta is in no group"),
            std::string::npos)
      << page.status();
  ManPage made_up = Page();
  made_up.groups[0].flags.push_back("man_test_gamma");
  page = RenderManPage(made_up, "9.9");
  EXPECT_EQ(page.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(page.status().message().find("lists --man_test_gamma"),
            std::string::npos)
      << page.status();
}

}  // namespace
}  // namespace qkov
