// The final results each task stores (docs/metrics.md), with the range each
// can take. The server checks a ratio search's metric and target against
// them at submit; worker tests check that trials store exactly these.
#ifndef QKOV_COMMON_RESULT_NAMES_H_
#define QKOV_COMMON_RESULT_NAMES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace qkov {

struct ResultName {
  std::string name;
  double lo;  // the closed range of its values (+-infinity: unbounded)
  double hi;
};

// `task` as sweep files spell it: synthetic, theory, fixed_attention, text,
// hatexplain, sva, squad. Empty for an unknown task.
std::vector<ResultName> FinalResultNames(absl::string_view task);

}  // namespace qkov

#endif  // QKOV_COMMON_RESULT_NAMES_H_
