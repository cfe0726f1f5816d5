// The text data formats (docs/text-tasks.md) by name, as sweep files spell
// them: the server checks a sweep's `text.format` against them
// (text_settings.cc), and the worker maps them to its text::TextFormat
// (datasets.cc). Header-only, so both parts of the package use it.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_FORMATS_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_FORMATS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/trial_rules.h"

namespace qkov::rules {

// In the order of the worker's text::TextFormat.
inline constexpr const char* kTextFormats[] = {
    "jsonl", "hatexplain", "hatexplain_official", "linzen_tsv", "sva_filtered"};

// The index of `name` in kTextFormats, or INVALID_ARGUMENT
// "PREFIXfield: unknown format 'x' (jsonl, ... or sva_filtered)".
inline absl::StatusOr<int> TextFormatIndex(absl::string_view prefix,
                                           absl::string_view field,
                                           absl::string_view name) {
  constexpr int n = sizeof(kTextFormats) / sizeof(kTextFormats[0]);
  for (int i = 0; i < n; ++i) {
    if (name == kTextFormats[i]) return i;
  }
  std::string known;
  for (int i = 0; i < n; ++i)
    absl::StrAppend(&known,
                    i == 0       ? ""
                    : i + 1 == n ? " or "
                                 : ", ",
                    kTextFormats[i]);
  return Invalid(prefix, field,
                 absl::StrCat("unknown format '", name, "' (", known, ")"));
}

}  // namespace qkov::rules

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_FORMATS_H_
