// A sweep's matched comparison (common/matched_sweep.h, MatchSweep) from the
// coordinator over gRPC, as `qkov results --matched` prints it and `qkov plot
// --kind matched` draws it; the task's curves are the default metrics.
#ifndef QKOV_CLIENT_MATCHED_RESULTS_H_
#define QKOV_CLIENT_MATCHED_RESULTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/connection.h"
#include "common/matched_sweep.h"

namespace qkov::client {

struct MatchedArgs {
  std::string sweep;
  std::string spec;                  // CURVE=LEVEL[,LEVEL...] or CURVE
  int window = 1;                    // reports in the reference's mean
  std::vector<std::string> metrics;  // empty: the task's curves
  std::vector<std::string> by;       // empty: the axes that vary, not seed
  std::vector<std::string> where;    // key=value filters
};

// MatchSweep's errors.
absl::StatusOr<MatchedTable> ComputeMatched(Connection& conn,
                                            const MatchedArgs& args);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_MATCHED_RESULTS_H_
