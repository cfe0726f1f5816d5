// Manual pages of the programs that take Abseil flags (qkov-server,
// qkov-worker, qkov-data), written by the program itself (`--man_page`) so
// that their OPTIONS are the flags it has: each flag's help and default
// from Abseil's registry, grouped by purpose as the page says, and the
// other sections (FILES, ENVIRONMENT, EXIT STATUS, EXAMPLES, SEE ALSO) from
// the program's own text. A flag of the program that no group lists, or a
// listed flag the program lacks, is an error, so pages cannot drift from
// the flags (deploy/CMakeLists.txt builds the pages; the test suite renders
// them with groff's warnings on).
#ifndef QKOV_COMMON_MAN_PAGE_H_
#define QKOV_COMMON_MAN_PAGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qkov {

struct ManPage {
  std::string program;  // "qkov-server"
  std::string summary;  // the NAME line's text after the dash
  // Sections as man(7) source (paragraphs separated by .PP, .TP lists...).
  std::string synopsis;
  std::string description;
  struct Group {
    std::string title;               // "Leases and limits"
    std::string intro;               // optional roff paragraph
    std::vector<std::string> flags;  // names without dashes
  };
  std::vector<Group> groups;
  struct Section {
    std::string title;  // "FILES", "ENVIRONMENT", "EXIT STATUS", ...
    std::string roff;
  };
  std::vector<Section> sections;
};

// The page as man(7) source, for the program's flags: those whose file
// Abseil reports as page.program, as it does once HelpListsFlagsOf
// (common/flags_help.h) named the main file so. INTERNAL naming the flag
// when one is in no group, or a group names one that does not exist.
absl::StatusOr<std::string> RenderManPage(const ManPage& page,
                                          const char* version);

// Text for a roff line: backslashes as \e, a leading . or ' guarded, and
// hyphens as \- (so that man renders them as minus signs, copyable).
std::string RoffText(const std::string& text);

// If argv holds --man_page: prints RenderManPage to stdout and exits (0, or
// 1 with the error on stderr). Call after HelpListsFlagsOf and before
// absl::ParseCommandLine.
void PrintManPageIfAsked(int argc, char** argv, const ManPage& page,
                         const char* version);

}  // namespace qkov

#endif  // QKOV_COMMON_MAN_PAGE_H_
