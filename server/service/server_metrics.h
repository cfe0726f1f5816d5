// ServerMetrics: what qkov-server tells Prometheus (docs/operations.md has
// every name, its type, labels and meaning). Three kinds of source:
//   - events, counted as they happen: trial events from the store
//     (storage::TrialEvent, only what committed), every gRPC call (the
//     interceptor below), worker calls (CoordinatorOptions::on_worker_call);
//   - state, read at each scrape: trials by state and the queue from the
//     database's counts (TrialQueries::ReadQueueState), the database and
//     WAL files' sizes and their volume's free space, the writer's
//     transaction times, HTTP replies by code;
//   - qkov_build_info, the code version every result's provenance carries.
// Labels never hold a trial, sweep or worker id: a series per trial would
// grow without bound. The text format is prometheus-cpp's
// (docs/dependencies.md).
//
// Thread safety: all methods are thread-safe.
#ifndef QKOV_SERVER_SERVICE_SERVER_METRICS_H_
#define QKOV_SERVER_SERVICE_SERVER_METRICS_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "http/http_message.h"
#include "server/service/auth.h"
#include "storage/results_store.h"

namespace qkov::service {

class ServerMetrics {
 public:
  struct Options {
    storage::ResultsStore* store = nullptr;  // must outlive this
    std::string db_path;                     // for the files' sizes
    // A worker with no call for this long is silent (qkov_workers).
    absl::Duration lease_duration = absl::Seconds(30);
    // Where qkov-backup writes its verified copies (results-*.db); empty:
    // no backup metrics.
    std::string backup_dir;
  };
  explicit ServerMetrics(Options options);

  // The store's event sink (ResultsStore::SetEventSink).
  void OnTrialEvents(const std::vector<storage::TrialEvent>& events);
  // CoordinatorOptions::on_worker_call.
  void WorkerSeen(const std::string& worker_id);
  // One gRPC call answered: its full method name ("/qkov.v1.WorkerService/
  // LeaseTrial"; a name outside the server's services counts as "other"),
  // status code and time from its metadata to its status.
  void RpcDone(const std::string& method, grpc::StatusCode code,
               absl::Duration latency);
  // A /metrics request refused for its token.
  void ScrapeRefused();

  // Every metric in Prometheus's text exposition format (version 0.0.4).
  // The state metrics are read now: one snapshot read of the database
  // (ReadQueueState), three stat calls.
  std::string Scrape();

  // Buckets of qkov_trial_duration_seconds: 1 s to one day.
  static const std::vector<double>& TrialDurationBuckets();
  // Buckets of qkov_rpc_duration_seconds: 0.1 ms to 10 s.
  static const std::vector<double>& RpcDurationBuckets();

 private:
  // The state metrics (the second kind above), as metric families.
  std::vector<prometheus::MetricFamily> CollectState();
  // CollectState's parts: the workers (active, silent, and of those in
  // `holders` the quietest), and the database's files, volume and writes.
  void AddWorkerFamilies(const absl::flat_hash_map<std::string, bool>& holders,
                         absl::Time now,
                         std::vector<prometheus::MetricFamily>* out);
  void AddDatabaseFamilies(std::vector<prometheus::MetricFamily>* out);
  void AddBackupFamilies(std::vector<prometheus::MetricFamily>* out);

  const Options options_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* lease_grants_;
  prometheus::Counter* lease_expirations_;
  prometheus::Counter* trial_retries_;
  prometheus::Counter* scrapes_refused_;
  prometheus::Family<prometheus::Counter>* finished_;
  prometheus::Family<prometheus::Histogram>* trial_duration_;
  prometheus::Family<prometheus::Counter>* rpcs_;
  // One latency histogram per method, made at start (the set is fixed).
  absl::flat_hash_map<std::string, prometheus::Histogram*> rpc_latency_;

  absl::Mutex workers_mu_;
  // worker id -> its last call; entries silent for a day are dropped at
  // scrape.
  absl::flat_hash_map<std::string, absl::Time> last_call_
      ABSL_GUARDED_BY(workers_mu_);
  const absl::Time started_ = absl::Now();
};

// The metrics listener's handler: GET /metrics answers Scrape() as
// text/plain; version=0.0.4. With `auth`, the request needs
// `Authorization: Bearer TOKEN` with a token of the read-only, user or
// admin role: 401 without a known token, 403 for a worker token (both
// counted in qkov_metrics_scrapes_refused_total). Any other path is 404,
// any other method 405.
http::HttpReply ServeMetrics(const http::HttpRequest& request,
                             ServerMetrics& metrics, const Authenticator* auth);

// Counts every gRPC call of the server in `metrics` (must outlive the
// server).
class RpcMetricsFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcMetricsFactory(ServerMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  ServerMetrics* metrics_;
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_SERVER_METRICS_H_
