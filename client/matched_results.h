// A sweep's matched comparison (common/matched.h, MatchTrials) from the
// coordinator, as `qkov results --matched` prints it and `qkov plot --kind
// matched` draws it. The arms are the trials that differ only in seed (or as
// `by` says). Finished trials only (done, diverged, stopped early).
#ifndef QKOV_CLIENT_MATCHED_RESULTS_H_
#define QKOV_CLIENT_MATCHED_RESULTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/connection.h"
#include "common/matched.h"

namespace qkov::client {

struct MatchedArgs {
  std::string sweep;
  std::string spec;                  // CURVE=LEVEL[,LEVEL...]
  int window = 1;                    // reports in the reference's mean
  std::vector<std::string> metrics;  // empty: the task's curves
  std::vector<std::string> by;       // empty: the axes that vary, not seed
  std::vector<std::string> where;    // key=value filters
};

// MatchTrials' errors, and INVALID_ARGUMENT for a bad spec or --by key;
// NOT_FOUND for an unknown sweep; FAILED_PRECONDITION for a sweep with no
// finished trial.
absl::StatusOr<MatchedTable> ComputeMatched(Connection& conn,
                                            const MatchedArgs& args);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_MATCHED_RESULTS_H_
