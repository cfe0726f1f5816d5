#include "worker/training/config.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "common/trial_rules.h"

namespace qkov::training {

namespace {

// The parameterizations by name, in the paper's order (one table for both
// directions and the refusal's list).
constexpr std::pair<Parameterization, const char*> kParameterizations[] = {
    {Parameterization::kFafo, "FAFO"},
    {Parameterization::kFaco, "FACO"},
    {Parameterization::kCafo, "CAFO"},
    {Parameterization::kCaco, "CACO"}};

}  // namespace

const char* ParameterizationName(Parameterization p) {
  for (const auto& [value, name] : kParameterizations) {
    if (value == p) return name;
  }
  return "?";
}

absl::StatusOr<Parameterization> ParseParameterization(
    const std::string& name) {
  std::string expected;
  const size_t n = std::size(kParameterizations);
  for (size_t i = 0; i < n; ++i) {
    if (name == kParameterizations[i].second)
      return kParameterizations[i].first;
    if (i > 0) expected += i + 1 == n ? " or " : ", ";
    expected += kParameterizations[i].second;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown parameterization '", name, "' (expected ", expected, ")"));
}

const std::string& TrialOptions::TaskName() const {
  return task.empty() ? DefaultTask().name : task;
}

absl::Status SyntheticTaskOptions::Validate() const {
  return rules::CheckSyntheticShape("", vocab_size, num_common, num_classes,
                                    distinct_per_class, seq_len);
}

}  // namespace qkov::training
