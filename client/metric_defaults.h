// The metrics and figures the CLI shows when the user names none, by task
// kind. The
// synthetic-style tasks show the paper's §3 numbers; the text tasks show
// their test split's, SQuAD its evaluation questions' (docs/metrics.md).
#ifndef QKOV_CLIENT_METRIC_DEFAULTS_H_
#define QKOV_CLIENT_METRIC_DEFAULTS_H_

#include <string>
#include <vector>

#include "qkov/v1/sweep.pb.h"

namespace qkov::client {

struct MetricDefaults {
  std::vector<std::string> results;  // qkov results: one column each
  std::vector<std::string> summary;  // qkov results --by: mean, std, ci95
  std::vector<std::string> ratio;    // qkov plot: one ratio figure each
  std::vector<std::string> curves;   // qkov plot: learning curves
  std::vector<std::string> latest;   // qkov watch: the latest report
  std::vector<std::string> figures;  // qkov plot --kind all (figures.h)
};

const MetricDefaults& MetricDefaultsFor(v1::TaskKind task);

// The defaults for a sweep's rows: its first row's task (a sweep has one
// training config); the synthetic ones for an empty sweep.
const MetricDefaults& MetricDefaultsFor(const std::vector<v1::ResultRow>& rows);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_METRIC_DEFAULTS_H_
