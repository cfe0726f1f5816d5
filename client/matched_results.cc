#include "client/matched_results.h"

#include "client/metric_defaults.h"
#include "common/grpc_status.h"

namespace qkov::client {

absl::StatusOr<MatchedTable> ComputeMatched(Connection& conn,
                                            const MatchedArgs& args) {
  SweepSource source;
  source.query = [&](const v1::QueryResultsRequest& req)
      -> absl::StatusOr<v1::QueryResultsResponse> {
    v1::QueryResultsResponse resp;
    grpc::Status s =
        conn.stub()->QueryResults(conn.Context().get(), req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    return resp;
  };
  source.curves = [&](const v1::GetTrialMetricsRequest& req) {
    return FetchCurves(conn, req.trial_id(),
                       {req.names().begin(), req.names().end()});
  };
  source.default_metrics = [](const std::vector<v1::ResultRow>& rows) {
    return MetricDefaultsFor(rows).curves;
  };
  SweepMatchedArgs a;
  a.sweep = args.sweep;
  a.spec = args.spec;
  a.window = args.window;
  a.metrics = args.metrics;
  a.by = args.by;
  a.where = args.where;
  return MatchSweep(a, source);
}

}  // namespace qkov::client
