// The final results each task stores, with the range each can take, and
// the curves each reports (docs/metrics.md). The server checks a ratio
// search's metric and target, and an early-stopping rule's curve, against
// them at submit.
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

// The curves each task reports every report_every steps (docs/metrics.md),
// by the same task names. Empty for an unknown task and for theory (whose
// points are not training steps).
std::vector<std::string> ReportedCurveNames(absl::string_view task);

}  // namespace qkov

#endif  // QKOV_COMMON_RESULT_NAMES_H_
