#include "server/core/trial_memory.h"

#include <algorithm>
#include <string>

#include "common/task_kind.h"
#include "common/task_settings.h"

namespace qkov::core {

int64_t EstimateTrialMemoryBytes(const qkov::v1::Training& t) {
  const TaskSettings& s = TaskSettingsOf(t);
  return s.memory_bytes == nullptr ? 0 : s.memory_bytes(t);
}

std::string TrialMemorySizes(const qkov::v1::Training& t) {
  const TaskSettings& s = TaskSettingsOf(t);
  return s.memory_sizes == nullptr ? "" : s.memory_sizes(t);
}

int64_t EstimateStackedTrialBytes(const qkov::v1::Training& t) {
  if (!TaskOrDefault(t.task()).stacks) return 0;
  const TaskSettings& s = TaskSettingsOf(t);
  return s.stacked_trial_bytes == nullptr ? 0 : s.stacked_trial_bytes(t);
}

int TrialsThatFit(const qkov::v1::Training& t, int64_t budget_bytes,
                  int max_trials, bool fill) {
  max_trials = std::max(1, max_trials);
  const int64_t each = EstimateStackedTrialBytes(t);
  if (each == 0) return 1;
  if (budget_bytes <= 0) return max_trials;
  const int64_t first = EstimateTrialMemoryBytes(t);
  if (budget_bytes <= first) return 1;
  const int64_t more = (budget_bytes - first) / each;
  return static_cast<int>(
      std::min<int64_t>(max_trials, 1 + std::min<int64_t>(more, 1 << 20)));
}

}  // namespace qkov::core
