// Agent: the worker's loop. Registers with the coordinator, then leases a
// trial, trains it (worker/training), streams its metrics, completes it, and
// repeats until there is no work (with exit_when_idle) or Stop() is called.
// A heartbeat thread renews the lease; when the coordinator answers STOP
// (lease lost, sweep cancelled) the trial is dropped at its next step.
// Stop() (SIGTERM) hands the running trial back as preempted; Drain()
// (SIGUSR2) lets the running trials finish, leases nothing more and ends
// Run() with OK.
#ifndef QKOV_WORKER_AGENT_AGENT_H_
#define QKOV_WORKER_AGENT_AGENT_H_

#include <torch/torch.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "qkov/v1/worker.pb.h"
#include "worker/agent/coordinator_client.h"
#include "worker/agent/worker_metrics.h"
#include "worker/training/trainer.h"

namespace qkov::agent {

class ReportingObserver;  // agent.cc: a lease's reports to the coordinator

struct AgentConfig {
  std::string server;  // host:port
  std::string name;    // shown in the database; default host:pid
  std::string device = "cpu";
  int torch_threads = 1;
  bool exit_when_idle = false;
  // Give up when the coordinator stays unreachable this long.
  absl::Duration unreachable_timeout = absl::Minutes(10);
  absl::Duration rpc_deadline = absl::Seconds(20);
  ChannelSecurity security;
  // Lease up to this many compatible trials at once and train them as one
  // batch (worker/training RunTrials).
  int batch_trials = 1;
  // The memory, in bytes, this agent can give one batch (0: unknown); sent
  // with every lease request, so the coordinator leases no more trials than
  // fit (LeaseTrialRequest.memory_budget_bytes).
  int64_t memory_budget_bytes = 0;
  // Lease as many trials as fit memory_budget_bytes, up to batch_trials,
  // when they stack, and one when they train one at a time (qkov-worker
  // --batch_trials=auto).
  bool fill_budget = false;
  // Where this agent counts its steps, completions and retries for the
  // process's metrics (worker/agent/worker_metrics.h); null: not counted.
  // Must outlive the agent.
  WorkerCounters* counters = nullptr;
};

class Agent {
 public:
  // `client`: the coordinator to talk to; null: gRPC to config.server with
  // config.security (GrpcCoordinatorClient), made in Run().
  explicit Agent(AgentConfig config,
                 std::unique_ptr<CoordinatorClient> client = nullptr);

  // Runs until idle (exit_when_idle), Stop(), or a fatal error. OK on a clean
  // exit; UNAVAILABLE when the coordinator stayed unreachable.
  absl::Status Run();

  // Thread-safe, async-signal-unsafe: call from a signal-handling thread.
  void Stop();
  // Finish the trials leased now (reported and completed as usual), ask for
  // no other, and return from Run() with OK. Thread-safe, like Stop().
  void Drain() ABSL_LOCKS_EXCLUDED(wake_mu_);

  int trials_completed() const { return trials_completed_; }
  // Trials this agent trains now.
  int trials_in_flight() ABSL_LOCKS_EXCLUDED(mu_);
  const AgentConfig& config() const { return config_; }
  // True once Stop() was called (the running trial, if any, was handed back).
  bool stopped() const { return stop_; }
  // True once Drain() was called.
  bool draining() const { return drain_; }

 private:
  struct CurrentLease {
    std::string trial_id;
    int attempt = 0;
    std::atomic<int64_t> step{0};
    std::atomic<bool> lost{false};
  };

  absl::Status Register();
  // Runs leases to their end: synthetic trials that can train together in one
  // batch, the others one by one. When the coordinator hands out the next
  // lease with a completion, it lands in *next. Returns the first error.
  absl::Status RunLeases(const std::vector<qkov::v1::Lease>& leases,
                         qkov::v1::LeaseTrialResponse* next);
  // The steps of RunLeases. Trains the leases (in one batch when their
  // trainer can batch them, else one by one); an outcome per lease, the
  // error of a lease whose settings this worker refuses.
  std::vector<absl::StatusOr<training::TrialOutcome>> TrainLeases(
      const std::vector<qkov::v1::Lease>& leases,
      const std::vector<training::TrainingObserver*>& observers);
  // A finished trial's completion: results, heatmaps, provenance (the
  // device with "(batch of N)"), the points not yet sent and the final
  // points.
  qkov::v1::CompleteTrialRequest Completion(
      const qkov::v1::Lease& lease, const training::TrialOutcome& outcome,
      std::vector<qkov::v1::MetricPoint> pending, size_t batch_size) const;
  // Completes a batch in calls of at most limits::kMaxCompletionsPerCall,
  // the last asking for the next batch (into *next); marks what went
  // through in *reported.
  void CompleteBatch(const std::vector<qkov::v1::CompleteTrialRequest>& batch,
                     std::vector<bool>* reported,
                     qkov::v1::LeaseTrialResponse* next);
  // Reports one lease on its own: a failure (permanent when out of memory),
  // a drop (lease lost: ABORTED, nothing sent), a hand-back with its
  // checkpoint after Stop(), or its completion (asking for the next lease
  // when it is the only one and this agent leases one at a time).
  absl::Status ReportAlone(
      const qkov::v1::Lease& lease,
      const absl::StatusOr<training::TrialOutcome>& outcome,
      const CurrentLease& current, ReportingObserver& observer,
      qkov::v1::CompleteTrialRequest* completion, bool single,
      qkov::v1::LeaseTrialResponse* next);
  absl::Status FailLease(const qkov::v1::Lease& lease,
                         const std::string& reason, bool preempted,
                         const std::string& checkpoint, int64_t checkpoint_step,
                         bool permanent = false);
  // Sends a report; FAILED_PRECONDITION when the coordinator answers that
  // the sweep's early-stopping rule ended the trial.
  absl::Status SendPoints(const qkov::v1::Lease& lease,
                          std::vector<qkov::v1::MetricPoint> points);
  void HeartbeatLoop();
  // Retries UNAVAILABLE/DEADLINE_EXCEEDED with backoff until
  // unreachable_timeout or Stop(); other errors return at once. `what` (the
  // call's name) goes into the log lines that open and close a stretch of
  // failures.
  template <typename Call>
  absl::Status WithRetry(const char* what, Call call);

  const AgentConfig config_;
  torch::Device device_;
  std::unique_ptr<CoordinatorClient> client_;
  qkov::v1::Provenance provenance_;
  std::string worker_id_;
  std::string worker_key_;  // proves worker_id_ on every call
  absl::Duration heartbeat_interval_ = absl::Seconds(5);

  void NotifyStopped();

  std::atomic<bool> stop_{false};
  std::atomic<bool> drain_{false};
  // Wakes the wait between lease requests (Stop or Drain).
  void Wake() ABSL_LOCKS_EXCLUDED(wake_mu_);
  absl::Mutex wake_mu_;
  bool woken_ ABSL_GUARDED_BY(wake_mu_) = false;
  absl::Notification stopped_;  // wakes waits and the heartbeat loop
  std::once_flag stopped_once_;
  absl::Mutex mu_;
  std::vector<CurrentLease*> current_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> trials_completed_{0};
};

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_AGENT_H_
