// --help for the programs that take Abseil flags (qkov-server, qkov-worker,
// qkov-data): their own flags with defaults and one line each, under the
// program's name; --version prints the code version. Abseil's default
// --help lists the flags of a file named like the program, which none of
// ours is (each is a main.cc), so it printed "No flags matched"; --helpfull
// still lists every library flag too.
#ifndef QKOV_COMMON_FLAGS_HELP_H_
#define QKOV_COMMON_FLAGS_HELP_H_

#include <string>

#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace qkov {

// Makes --help (and --helpshort) list the flags defined in `main_file`
// (pass __FILE__) as `program`'s, and --version print `program version`.
// Call once, before absl::ParseCommandLine.
inline void HelpListsFlagsOf(const char* main_file, const char* program,
                             const char* version) {
  static std::string file, name, version_line;
  file = main_file;
  name = program;
  version_line = absl::StrCat(program, " ", version, "\n");
  absl::FlagsUsageConfig config;
  config.normalize_filename = [](absl::string_view f) {
    return f == file ? name : std::string(f);
  };
  config.contains_help_flags = [](absl::string_view f) { return f == name; };
  config.contains_helpshort_flags = config.contains_help_flags;
  config.version_string = [] { return version_line; };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace qkov

#endif  // QKOV_COMMON_FLAGS_HELP_H_
