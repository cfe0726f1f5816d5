// SQuAD's answer scores, exactly as the official evaluate-v1.1.py defines
// them: an answer is normalised (lower-cased, ASCII punctuation removed, the
// words "a", "an", "the" removed, whitespace collapsed), split at
// whitespace; F1 is the harmonic mean of token precision and recall (the
// multiset intersection), exact match compares the normalised strings; a
// prediction's score is its maximum over the gold answers.
// Unicode follows Python 3's str: full lower-case mapping (ICU), \b at
// Unicode word characters (PCRE2 with UCP), str.split()'s whitespace.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_EVAL_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_EVAL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace qkov::training::squad {

std::string NormalizeAnswer(absl::string_view s);

// Against one gold answer, in [0, 1].
double F1Score(absl::string_view prediction, absl::string_view gold);
double ExactMatch(absl::string_view prediction, absl::string_view gold);

// The maximum over `golds` (0 for none).
double MaxF1(absl::string_view prediction,
             const std::vector<std::string>& golds);
double MaxExactMatch(absl::string_view prediction,
                     const std::vector<std::string>& golds);

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_EVAL_H_
