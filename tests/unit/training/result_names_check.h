// Checks a trial's results against what the server lets a ratio search name
// (common/result_names.h).
#ifndef QKOV_TESTS_UNIT_TRAINING_RESULT_NAMES_CHECK_H_
#define QKOV_TESTS_UNIT_TRAINING_RESULT_NAMES_CHECK_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/task_info.h"

namespace qkov::training {

// Every result in `results` is listed for `task` and lies in its range.
inline void ExpectResultsListed(const std::map<std::string, double>& results,
                                const std::string& task) {
  const std::vector<ResultName> listed = FinalResultNames(task);
  for (const auto& [name, value] : results) {
    auto it = std::find_if(
        listed.begin(), listed.end(),
        [&name = name](const ResultName& n) { return n.name == name; });
    ASSERT_NE(it, listed.end()) << name << " is not listed for " << task;
    EXPECT_GE(value, it->lo) << name;
    EXPECT_LE(value, it->hi) << name;
  }
}

}  // namespace qkov::training

#endif  // QKOV_TESTS_UNIT_TRAINING_RESULT_NAMES_CHECK_H_
