// Tests that read the real datasets skip, naming the command that gets them,
// where the data folder lacks them (docs/data.md). The folder is the one
// the build was configured with: QKOV_SHARED_DATA_DIR, by default the first
// folder of the data search path ($QKOV_DATA, ~/.cache/qkov/data,
// ../shared/data beside the checkout) that holds tokenizers/.
//
//   TEST(TextDatasetsTest, ...) {
//     QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
//     ...
#ifndef QKOV_TESTS_DATA_AVAILABLE_H_
#define QKOV_TESTS_DATA_AVAILABLE_H_

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <initializer_list>
#include <string>

namespace qkov::testing {

// "" when every dataset's folder is in `dir`; else one line naming what is
// missing and the fetch command.
inline std::string MissingData(const std::string& dir,
                               std::initializer_list<const char*> datasets) {
  std::string missing;
  for (const char* d : datasets) {
    struct stat st;
    const std::string folder = dir + "/" + d;
    if (stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      missing += (missing.empty() ? "" : " ") + std::string(d);
  }
  if (missing.empty()) return "";
  return "no " + missing + " data in " + dir + ": qkov-data fetch " + missing +
         " (--from a copy of qkov's data folder for the derived files), then "
         "configure again (docs/data.md)";
}

}  // namespace qkov::testing

#define QKOV_SKIP_WITHOUT_DATA(...)                                          \
  if (const std::string qkov_missing_data =                                  \
          ::qkov::testing::MissingData(QKOV_SHARED_DATA_DIR, {__VA_ARGS__}); \
      !qkov_missing_data.empty())                                            \
  GTEST_SKIP() << qkov_missing_data

#endif  // QKOV_TESTS_DATA_AVAILABLE_H_
