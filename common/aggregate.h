// Aggregation over seeds (or any grouping): n, mean, sample standard
// deviation and the 95% confidence interval of the mean (Student t). The
// definitions are in docs/cli.md; the server aggregates with it (qkov results
// --by, the dashboard); tests/unit/common/aggregate_test.cc pins them to the
// last digit.
#ifndef QKOV_COMMON_AGGREGATE_H_
#define QKOV_COMMON_AGGREGATE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov {

struct Summary {
  int n = 0;        // finite values aggregated
  double mean = 0;  // arithmetic mean
  double std = 0;   // sample standard deviation (n - 1); NaN for n < 2
  double ci95 =
      0;  // half width: t(0.975, n - 1) * std / sqrt(n); NaN for n < 2
};

// NaN values (diverged or missing) are left out and not counted.
Summary Summarize(const std::vector<double>& values);

// The p-quantile of Student's t with `df` degrees of freedom (df > 0).
double StudentTQuantile(double p, double df);

// "FAFO" etc.; "-" for a trial without one (the theory task).
std::string ParameterizationLabel(qkov::v1::Parameterization p);

// Value of a grouping key for a row: parameterization, lr_ratio, eta_ov,
// seed, state, or any final metric name. "" when the row lacks it.
std::string KeyOf(const qkov::v1::ResultRow& row, const std::string& key);
// The same keys as numbers (NaN when not numeric).
double NumberOf(const qkov::v1::ResultRow& row, const std::string& key);

// The keys rows group and filter by besides metric names: parameterization,
// lr_ratio, eta_ov, seed, alpha, state, trial.
bool IsAxisKey(const std::string& key);

// One `where` condition: KEY=VALUE. A row matches when its KeyOf equals
// VALUE as text, as a number, or ignoring case.
struct Filter {
  std::string key;
  std::string value;
};
// INVALID_ARGUMENT naming the condition without '=' or a key.
absl::StatusOr<std::vector<Filter>> ParseWhere(
    const std::vector<std::string>& where);
// Whether `row` matches every filter.
bool Matches(const qkov::v1::ResultRow& row,
             const std::vector<Filter>& filters);

struct Group {
  std::vector<std::string> keys;           // one per `by` key
  std::map<std::string, Summary> metrics;  // metric -> summary
};

// Groups rows by `by` (keys sorted by number when numeric), keeps rows
// matching every `where` (key=value), and summarizes each metric. Unknown
// keys are INVALID_ARGUMENT.
absl::StatusOr<std::vector<Group>> Aggregate(
    const std::vector<qkov::v1::ResultRow>& rows,
    const std::vector<std::string>& by, const std::vector<std::string>& metrics,
    const std::vector<std::string>& where);
absl::StatusOr<std::vector<Group>> Aggregate(
    const google::protobuf::RepeatedPtrField<qkov::v1::ResultRow>& rows,
    const std::vector<std::string>& by, const std::vector<std::string>& metrics,
    const std::vector<std::string>& where);

}  // namespace qkov

#endif  // QKOV_COMMON_AGGREGATE_H_
