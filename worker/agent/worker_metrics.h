// qkov-worker's Prometheus metrics (docs/operations.md, "Worker metrics"),
// for nodes where it runs as a service: what every agent of the process
// counts (WorkerCounters), and the /metrics listener that serves them with
// the state read at each scrape (trials in flight, memory in use).
//
// Thread safety: WorkerCounters are atomics; WorkerMetrics is thread-safe.
#ifndef QKOV_WORKER_AGENT_WORKER_METRICS_H_
#define QKOV_WORKER_AGENT_WORKER_METRICS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "http/http_server.h"

namespace qkov::agent {

// Counted by the agents (AgentConfig::counters) as they work.
struct WorkerCounters {
  // Training steps done: the steps between a lease's reports, summed.
  std::atomic<int64_t> training_steps{0};
  // Trials whose completion the coordinator accepted.
  std::atomic<int64_t> trials_completed{0};
  // Calls to the coordinator sent again after a retryable failure.
  std::atomic<int64_t> rpc_retries{0};
};

class WorkerMetrics {
 public:
  struct Options {
    std::string listen;                        // HOST:PORT; port 0 picks one
    std::string token;                         // empty: no token asked for
    std::vector<std::string> devices;          // "cpu", "cuda:0", ... (memory)
    const WorkerCounters* counters = nullptr;  // must outlive this
    // The trials the process trains now (its agents' leases, summed).
    std::function<int64_t()> trials_in_flight;
  };
  // UNAVAILABLE or INVALID_ARGUMENT naming --metrics_listen when the
  // address cannot be bound or parsed.
  static absl::StatusOr<std::unique_ptr<WorkerMetrics>> Start(Options options);

  int port() const { return http_->port(); }
  void Stop() { http_->Stop(); }

  // The metrics in Prometheus's text format (0.0.4).
  std::string Scrape() const;

 private:
  explicit WorkerMetrics(Options options) : options_(std::move(options)) {}
  http::HttpReply Serve(const http::HttpRequest& request);

  const Options options_;
  std::atomic<int64_t> refused_{0};
  std::unique_ptr<http::HttpServer> http_;
};

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_WORKER_METRICS_H_
