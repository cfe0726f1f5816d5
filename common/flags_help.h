// --help for the programs that take Abseil flags (qkov-server, qkov-worker,
// qkov-data): their own flags with defaults and one line each. Abseil's
// default --help lists the flags of a file named like the program, which
// none of ours is (each is a main.cc), so it printed "No flags matched";
// --helpfull still lists every library flag too.
#ifndef QKOV_COMMON_FLAGS_HELP_H_
#define QKOV_COMMON_FLAGS_HELP_H_

#include <string>

#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace qkov {

// Makes --help (and --helpshort) list the flags defined in `main_file`
// (pass __FILE__). Call before absl::ParseCommandLine.
inline void HelpListsFlagsOf(const char* main_file) {
  static std::string file;
  file = main_file;
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view f) {
    return absl::EndsWith(file, f) || absl::EndsWith(f, file);
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
}

}  // namespace qkov

#endif  // QKOV_COMMON_FLAGS_HELP_H_
