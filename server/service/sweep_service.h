// qkov.v1.SweepService over core::Coordinator: each method converts the
// Coordinator's absl::Status once (common/grpc_status.h) and copies the reply.
//
// SweepServiceImpl has 18 public methods: one override per rpc of
// sweep.proto's SweepService, whose generated base class declares them all;
// each is a few lines over one of the Coordinator's subjects.
#ifndef QKOV_SERVER_SERVICE_SWEEP_SERVICE_H_
#define QKOV_SERVER_SERVICE_SWEEP_SERVICE_H_

#include "qkov/v1/sweep.grpc.pb.h"
#include "server/core/coordinator.h"
#include "server/service/auth.h"

namespace qkov::service {

class SweepServiceImpl final : public qkov::v1::SweepService::Service {
 public:
  // `auth` may be null (no authentication: local use only).
  SweepServiceImpl(core::Coordinator* core, const Authenticator* auth)
      : core_(core), auth_(auth) {}

  grpc::Status SubmitSweep(grpc::ServerContext*,
                           const qkov::v1::SubmitSweepRequest*,
                           qkov::v1::SubmitSweepResponse*) override;
  grpc::Status GetSweep(grpc::ServerContext*, const qkov::v1::GetSweepRequest*,
                        qkov::v1::Sweep*) override;
  grpc::Status ListSweeps(grpc::ServerContext*,
                          const qkov::v1::ListSweepsRequest*,
                          qkov::v1::ListSweepsResponse*) override;
  grpc::Status CancelSweep(grpc::ServerContext*,
                           const qkov::v1::CancelSweepRequest*,
                           qkov::v1::CancelSweepResponse*) override;
  grpc::Status DeleteSweep(grpc::ServerContext*,
                           const qkov::v1::DeleteSweepRequest*,
                           qkov::v1::DeleteSweepResponse*) override;
  grpc::Status PauseSweep(grpc::ServerContext*,
                          const qkov::v1::PauseSweepRequest*,
                          qkov::v1::Sweep*) override;
  grpc::Status RetrySweep(grpc::ServerContext*,
                          const qkov::v1::RetrySweepRequest*,
                          qkov::v1::RetrySweepResponse*) override;
  grpc::Status ListTrials(grpc::ServerContext*,
                          const qkov::v1::ListTrialsRequest*,
                          qkov::v1::ListTrialsResponse*) override;
  grpc::Status GetTrial(grpc::ServerContext*, const qkov::v1::GetTrialRequest*,
                        qkov::v1::Trial*) override;
  grpc::Status QueryResults(grpc::ServerContext*,
                            const qkov::v1::QueryResultsRequest*,
                            qkov::v1::QueryResultsResponse*) override;
  grpc::Status AggregateResults(grpc::ServerContext*,
                                const qkov::v1::AggregateResultsRequest*,
                                qkov::v1::AggregateResultsResponse*) override;
  grpc::Status GetTrialMetrics(grpc::ServerContext*,
                               const qkov::v1::GetTrialMetricsRequest*,
                               qkov::v1::GetTrialMetricsResponse*) override;
  grpc::Status QuerySql(grpc::ServerContext*, const qkov::v1::QuerySqlRequest*,
                        qkov::v1::QuerySqlResponse*) override;
  grpc::Status StreamResults(
      grpc::ServerContext*, const qkov::v1::QueryResultsRequest*,
      grpc::ServerWriter<qkov::v1::ResultColumns>*) override;
  grpc::Status StreamCurves(
      grpc::ServerContext*, const qkov::v1::StreamCurvesRequest*,
      grpc::ServerWriter<qkov::v1::StreamCurvesChunk>*) override;
  // Finished trials one MatchSweep compares at most.
  static constexpr int kMatchedMaxTrials = 20000;
  grpc::Status MatchSweep(grpc::ServerContext*,
                          const qkov::v1::MatchSweepRequest*,
                          qkov::v1::MatchedResponse*) override;
  // Reading is any reader's; setting needs a write token whose holder is
  // an admin (checked by the store).
  grpc::Status Leasing(grpc::ServerContext*, const qkov::v1::LeasingRequest*,
                       qkov::v1::LeasingState*) override;
  // Streams progress: one message at once, then one per change (at most
  // every 200 ms, at least every 5 s), and a last one with finished = true.
  grpc::Status WatchSweep(
      grpc::ServerContext*, const qkov::v1::WatchSweepRequest*,
      grpc::ServerWriter<qkov::v1::SweepProgress>*) override;

 private:
  core::Coordinator* core_;
  const Authenticator* auth_;
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_SWEEP_SERVICE_H_
