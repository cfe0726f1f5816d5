// The metrics and figures the CLI shows when the user names none: the
// task's views (common/task_info.h). The synthetic-style tasks show the
// paper's §3 numbers; the text tasks show their test split's, SQuAD its
// evaluation questions' (docs/metrics.md).
#ifndef QKOV_CLIENT_METRIC_DEFAULTS_H_
#define QKOV_CLIENT_METRIC_DEFAULTS_H_

#include <vector>

#include "common/task_info.h"
#include "common/task_kind.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::client {

using ::qkov::MetricDefaults;

inline const MetricDefaults& MetricDefaultsFor(v1::TaskKind task) {
  return TaskOrDefault(task).views;
}

// The defaults for a sweep's rows (a vector or a proto's repeated field):
// its first row's task (a sweep has one training config); the synthetic
// task's for an empty sweep.
template <typename Rows>
const MetricDefaults& MetricDefaultsFor(const Rows& rows) {
  return TaskOrDefault(rows.empty() ? v1::TASK_KIND_UNSPECIFIED
                                    : rows.begin()->config().training().task())
      .views;
}

}  // namespace qkov::client

#endif  // QKOV_CLIENT_METRIC_DEFAULTS_H_
