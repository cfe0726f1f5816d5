#include "worker/agent/agent.h"

#include <google/protobuf/stubs/common.h>
#include <google/protobuf/util/time_util.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/lease_limits.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "common/version.h"
#include "worker/agent/trial_options.h"
#include "worker/training/cpu_runtime.h"
#include "worker/training/torch_status.h"
#include "worker/training/trainer.h"

namespace qkov::agent {
namespace {

namespace v1 = ::qkov::v1;
using google::protobuf::util::TimeUtil;

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// A failure reason as the coordinator takes it (at most 8192 bytes): cut to
// 8000 at a UTF-8 boundary, with a marker.
std::string TruncatedReason(std::string reason) {
  constexpr size_t kMax = 8000;
  if (reason.size() <= kMax) return reason;
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80)
    --cut;
  reason.resize(cut);
  return reason + " [truncated]";
}

bool Retryable(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

v1::MetricPoint ToProto(const training::MetricPoint& p) {
  v1::MetricPoint m;
  m.set_step(p.step);
  m.set_name(p.name);
  m.set_value(p.value);
  return m;
}

}  // namespace

Agent::Agent(AgentConfig config, std::unique_ptr<CoordinatorClient> client)
    : config_(std::move(config)),
      device_(torch::kCPU),
      client_(std::move(client)) {}

template <typename Call>
absl::Status Agent::WithRetry(const char* what, Call call) {
  const absl::Time give_up = absl::Now() + config_.unreachable_timeout;
  absl::Duration backoff = absl::Milliseconds(100);
  int tries = 0;
  while (true) {
    absl::Status s = call();
    ++tries;
    if (tries > 1 && !Retryable(s)) {
      // The end of a stretch of failures; a repeated call that the
      // coordinator had applied is answered as the first (docs/protocol.md).
      log::Info("rpc_answered_after_retries",
                {{"call", what}, {"tries", tries}, {"error", s}});
    }
    if (!Retryable(s) || absl::Now() > give_up) return s;
    if (tries == 1) {
      // Once per stretch of failures: the coordinator is restarting, busy,
      // unreachable, or its disk is full; the worker waits it out.
      log::Warning("rpc_retrying",
                   {{"call", what},
                    {"error", s},
                    {"give_up_after_s", config_.unreachable_timeout}});
    }
    if (stopped_.WaitForNotificationWithTimeout(backoff)) return s;
    if (config_.counters != nullptr) ++config_.counters->rpc_retries;
    backoff = std::min(backoff * 2, absl::Seconds(10));
  }
}

int Agent::trials_in_flight() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(current_.size());
}

void Agent::Stop() {
  stop_ = true;
  Wake();
  NotifyStopped();
}

void Agent::Drain() {
  drain_ = true;
  Wake();
}

void Agent::Wake() {
  absl::MutexLock lock(&wake_mu_);
  woken_ = true;
}

void Agent::NotifyStopped() {
  // Stop() may come from the signal thread while Run() ends: notify once.
  std::call_once(stopped_once_, [this] { stopped_.Notify(); });
}

absl::Status Agent::Register() {
  v1::RegisterWorkerRequest req;
  req.set_name(config_.name.empty() ? absl::StrCat(Hostname(), ":", getpid())
                                    : config_.name);
  req.set_slots(1);
  *req.mutable_provenance() = provenance_;
  v1::RegisterWorkerResponse resp;
  absl::Status s = WithRetry(
      "RegisterWorker", [&] { return client_->RegisterWorker(req, &resp); });
  if (!s.ok()) return s;
  worker_id_ = resp.worker_id();
  worker_key_ = resp.worker_key();
  heartbeat_interval_ = absl::Milliseconds(
      TimeUtil::DurationToMilliseconds(resp.heartbeat_interval()));
  return absl::OkStatus();
}

absl::Status Agent::Run() {
  // Device and threads first: a bad --device is an error before any RPC.
  absl::StatusOr<torch::Device> device =
      training::ParseDevice(config_.device, "--device");
  if (!device.ok()) return device.status();
  device_ = *device;
  if (device_.is_cuda() && !torch::cuda::is_available()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--device=", config_.device, ": CUDA is not available"));
  }
  training::SetTrainingThreads(config_.torch_threads);
  provenance_.set_code_version(CodeVersion());
  provenance_.set_torch_version(training::TorchVersion());
  provenance_.set_grpc_version(grpc::Version());
  provenance_.set_protobuf_version(
      google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION));
  provenance_.set_compiler(CompilerVersion());
  provenance_.set_device(device_.str());
  provenance_.set_hostname(Hostname());
  provenance_.set_blas(training::BlasDescription());
  provenance_.set_torch_threads(torch::get_num_threads());
  provenance_.set_flush_denormals(training::FlushDenormalActive());

  if (client_ == nullptr) {
    absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> grpc_client =
        GrpcCoordinatorClient::Create(config_.server, config_.security,
                                      config_.rpc_deadline);
    if (!grpc_client.ok()) return grpc_client.status();
    client_ = *std::move(grpc_client);
  }
  if (absl::Status s = Register(); !s.ok()) return s;

  std::thread heartbeat([this] { HeartbeatLoop(); });
  absl::Status result = absl::OkStatus();
  v1::LeaseTrialResponse next;
  while (!stop_) {
    v1::LeaseTrialResponse resp;
    if (next.outcome() == v1::LeaseTrialResponse::LEASED) {
      // Leased with the last completion (even when Drain() came since):
      // it is this worker's to train.
      resp = std::move(next);
      next.Clear();
    } else {
      if (drain_) {
        log::Info("worker_drained",
                  {{"trials_completed", trials_completed_.load()}});
        break;
      }
      v1::LeaseTrialRequest req;
      req.set_worker_id(worker_id_);
      req.set_worker_key(worker_key_);
      req.set_max_trials(config_.batch_trials);
      req.set_memory_budget_bytes(config_.memory_budget_bytes);
      req.set_fill_budget(config_.fill_budget);
      req.set_resend_held(true);  // every earlier lease is reported
      absl::Status s = WithRetry(
          "LeaseTrial", [&] { return client_->LeaseTrial(req, &resp); });
      if (stop_) break;
      if (!s.ok()) {
        result = s;
        break;
      }
    }
    if (resp.outcome() == v1::LeaseTrialResponse::LEASED) {
      std::vector<v1::Lease> leases = {resp.lease()};
      for (const auto& more : resp.more()) leases.push_back(more);
      RunLeases(leases, &next)
          .IgnoreError();  // each trial's error is logged and reported
      continue;
    }
    if (resp.outcome() == v1::LeaseTrialResponse::NO_WORK &&
        config_.exit_when_idle)
      break;
    const absl::Duration wait =
        std::max(absl::Milliseconds(50),
                 absl::Milliseconds(
                     TimeUtil::DurationToMilliseconds(resp.retry_after())));
    absl::MutexLock lock(&wake_mu_);
    wake_mu_.AwaitWithTimeout(absl::Condition(&woken_), wait);
  }
  NotifyStopped();  // ends the heartbeat loop; stopped() still reports Stop()
                    // only
  heartbeat.join();
  return result;
}

void Agent::HeartbeatLoop() {
  while (!stopped_.WaitForNotificationWithTimeout(heartbeat_interval_)) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id_);
    req.set_worker_key(worker_key_);
    {
      absl::MutexLock lock(&mu_);
      if (current_.empty()) continue;
      for (CurrentLease* lease : current_) {
        v1::LeaseRef* ref = req.add_leases();
        ref->set_trial_id(lease->trial_id);
        ref->set_attempt(lease->attempt);
        ref->set_step(lease->step);
      }
    }
    v1::HeartbeatResponse resp;
    absl::Status s = client_->Heartbeat(req, &resp);
    if (!s.ok()) continue;  // transient; the lease has slack
    absl::MutexLock lock(&mu_);
    for (const v1::LeaseStatus& st : resp.leases()) {
      if (st.directive() != v1::LeaseStatus::STOP &&
          st.directive() != v1::LeaseStatus::STOP_EARLY)
        continue;
      for (CurrentLease* lease : current_) {
        if (lease->trial_id != st.trial_id() ||
            lease->attempt != st.attempt() || lease->lost.exchange(true))
          continue;
        log::Warning("lease_lost", {{"trial", lease->trial_id},
                                    {"attempt", lease->attempt},
                                    {"error", "a heartbeat was answered STOP"},
                                    {"action", "dropped"}});
      }
    }
  }
}

// Sends each report to the coordinator; keeps points whose send failed
// transiently and sends them with the next report. The report of
// `final_step` (the trial's max_steps) is not sent: its points ride with the
// completion that follows at once (one call and one write fewer a trial).
class ReportingObserver : public training::TrainingObserver {
 public:
  // `trial_id` and `attempt` name the lease in the log.
  ReportingObserver(
      std::string trial_id, int attempt, int64_t final_step,
      std::function<absl::Status(const std::vector<v1::MetricPoint>&)> send,
      std::atomic<bool>* stop, std::atomic<bool>* lost,
      std::atomic<int64_t>* step, int64_t start_step,
      std::atomic<int64_t>* steps_total)
      : trial_id_(std::move(trial_id)),
        attempt_(attempt),
        final_step_(final_step),
        send_(std::move(send)),
        stop_(stop),
        lost_(lost),
        step_(step),
        counted_to_(start_step),
        steps_total_(steps_total) {}

  bool OnReport(int64_t step,
                const std::vector<training::MetricPoint>& points) override {
    step_->store(step);
    if (steps_total_ != nullptr && step > counted_to_) {
      *steps_total_ += step - counted_to_;
      counted_to_ = step;
    }
    for (const auto& p : points) pending_.push_back(ToProto(p));
    if (step == final_step_) return !lost_->load();
    absl::Status s = send_(pending_);
    if (s.ok()) {
      pending_.clear();
    } else if (absl::IsFailedPrecondition(s) || absl::IsNotFound(s) ||
               absl::IsPermissionDenied(s)) {
      if (!lost_->exchange(true)) {
        log::Warning("lease_lost", {{"trial", trial_id_},
                                    {"attempt", attempt_},
                                    {"error", s},
                                    {"action", "dropped"}});
      }
      return false;
    }
    return !lost_->load();
  }
  training::StopRequest PollStop() override {
    if (lost_->load()) return training::StopRequest::kDrop;
    if (stop_->load()) return training::StopRequest::kHandBack;
    return training::StopRequest::kNone;
  }

  std::vector<v1::MetricPoint> TakePending() { return std::move(pending_); }

 private:
  const std::string trial_id_;
  const int attempt_;
  const int64_t final_step_;
  std::function<absl::Status(const std::vector<v1::MetricPoint>&)> send_;
  std::atomic<bool>* stop_;
  std::atomic<bool>* lost_;
  std::atomic<int64_t>* step_;
  int64_t counted_to_;  // the step the steps counted so far reach
  std::atomic<int64_t>* steps_total_;  // WorkerCounters; may be null
  std::vector<v1::MetricPoint> pending_;
};

absl::Status Agent::FailLease(const v1::Lease& lease, const std::string& reason,
                              bool preempted, const std::string& checkpoint,
                              int64_t checkpoint_step, bool permanent) {
  v1::FailTrialRequest req;
  req.set_worker_id(worker_id_);
  req.set_worker_key(worker_key_);
  req.set_trial_id(lease.trial_id());
  req.set_attempt(lease.attempt());
  req.set_reason(reason);
  req.set_preempted(preempted);
  req.set_permanent(permanent);
  req.set_checkpoint(checkpoint);
  if (!checkpoint.empty()) req.set_checkpoint_step(checkpoint_step);
  v1::FailTrialResponse resp;
  return WithRetry("FailTrial", [&] { return client_->FailTrial(req, &resp); });
}

absl::Status Agent::SendPoints(const v1::Lease& lease,
                               std::vector<v1::MetricPoint> points) {
  v1::ReportMetricsRequest req;
  req.set_worker_id(worker_id_);
  req.set_worker_key(worker_key_);
  req.set_trial_id(lease.trial_id());
  req.set_attempt(lease.attempt());
  for (auto& p : points) *req.add_points() = std::move(p);
  v1::ReportMetricsResponse resp;
  RETURN_IF_ERROR(client_->ReportMetrics(req, &resp));
  if (resp.lease().directive() == v1::LeaseStatus::STOP_EARLY) {
    // The sweep's early-stopping rule ended the trial: drop it, as a lost
    // lease (the observer stops on this status).
    return absl::FailedPreconditionError(
        "stopped early by the sweep's early-stopping rule");
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<training::TrialOutcome>> Agent::TrainLeases(
    const std::vector<v1::Lease>& leases,
    const std::vector<training::TrainingObserver*>& observers) {
  const size_t n = leases.size();
  std::vector<absl::StatusOr<training::TrialOutcome>> outcomes(
      n, absl::UnknownError("not run"));
  std::vector<size_t> runnable;
  std::vector<training::TrialOptions> options;
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<training::TrialOptions> o =
        ToTrialOptions(leases[i].config());
    if (!o.ok()) {
      outcomes[i] = o.status();
      continue;
    }
    runnable.push_back(i);
    options.push_back(*std::move(o));
  }
  // One batch when their trainer can batch them, else one group each.
  std::vector<std::vector<size_t>> groups;  // positions in `runnable`
  if (!runnable.empty() && training::CheckBatchable(options).ok()) {
    groups.emplace_back();
    for (size_t k = 0; k < runnable.size(); ++k) groups.back().push_back(k);
  } else {
    for (size_t k = 0; k < runnable.size(); ++k) groups.push_back({k});
  }
  for (const auto& group : groups) {
    std::vector<training::TrialOptions> opts;
    std::vector<training::TrainingObserver*> obs;
    std::vector<std::string> resume;
    for (size_t k : group) {
      opts.push_back(options[k]);
      obs.push_back(observers[runnable[k]]);
      resume.push_back(leases[runnable[k]].checkpoint());
    }
    absl::StatusOr<std::vector<training::TrialOutcome>> run =
        training::RunTrials(opts, obs, device_, resume);
    for (size_t j = 0; j < group.size(); ++j) {
      outcomes[runnable[group[j]]] =
          run.ok()
              ? absl::StatusOr<training::TrialOutcome>(std::move((*run)[j]))
              : absl::StatusOr<training::TrialOutcome>(run.status());
    }
  }
  return outcomes;
}

v1::CompleteTrialRequest Agent::Completion(
    const v1::Lease& lease, const training::TrialOutcome& outcome,
    std::vector<v1::MetricPoint> pending, size_t batch_size) const {
  v1::CompleteTrialRequest req;
  req.set_worker_id(worker_id_);
  req.set_worker_key(worker_key_);
  req.set_trial_id(lease.trial_id());
  req.set_attempt(lease.attempt());
  req.set_diverged(outcome.end == training::TrialEnd::kDiverged);
  req.set_steps(outcome.steps);
  for (const auto& [k, v] : outcome.results) (*req.mutable_results())[k] = v;
  for (const training::Heatmap& h : outcome.heatmaps) {
    v1::Heatmap* ph = req.add_heatmaps();
    ph->set_name(h.name);
    ph->set_x_label(h.x_label);
    ph->set_y_label(h.y_label);
    for (double e : h.x_edges) ph->add_x_edges(e);
    for (double e : h.y_edges) ph->add_y_edges(e);
    for (double v : h.values) ph->add_values(v);
  }
  *req.mutable_provenance() = provenance_;
  req.mutable_provenance()->set_device(
      batch_size > 1
          ? absl::StrCat(device_.str(), " (batch of ", batch_size, ")")
          : device_.str());
  for (const auto& [setting, sha] : outcome.input_sha256)
    (*req.mutable_provenance()->mutable_input_sha256())[setting] = sha;
  for (auto& p : pending) *req.add_final_points() = std::move(p);
  for (const training::MetricPoint& p : outcome.final_points)
    *req.add_final_points() = ToProto(p);
  return req;
}

void Agent::CompleteBatch(const std::vector<v1::CompleteTrialRequest>& batch,
                          std::vector<bool>* reported,
                          v1::LeaseTrialResponse* next) {
  const size_t n = batch.size();
  const size_t per_call = limits::kMaxCompletionsPerCall;
  for (size_t begin = 0; begin < n; begin += per_call) {
    const size_t end = std::min(n, begin + per_call);
    v1::CompleteTrialsRequest req;
    req.set_worker_id(worker_id_);
    req.set_worker_key(worker_key_);
    for (size_t i = begin; i < end; ++i) *req.add_trials() = batch[i];
    if (end == n && !stop_ && !drain_) {
      req.set_lease_next(config_.batch_trials);
      req.set_memory_budget_bytes(config_.memory_budget_bytes);
      req.set_fill_budget(config_.fill_budget);
      // Holds nothing else once these are done: every earlier call of the
      // batch went through.
      req.set_resend_held(std::all_of(reported->begin(),
                                      reported->begin() + begin,
                                      [](bool r) { return r; }));
    }
    v1::CompleteTrialsResponse resp;
    absl::Status g = WithRetry(
        "CompleteTrials", [&] { return client_->CompleteTrials(req, &resp); });
    if (!g.ok()) {
      // Its trials then complete one by one.
      log::Warning("batch_completion_refused",
                   {{"trials", end - begin}, {"error", g}});
      continue;
    }
    trials_completed_ += static_cast<int>(end - begin);
    if (config_.counters != nullptr)
      config_.counters->trials_completed += static_cast<int64_t>(end - begin);
    std::fill(reported->begin() + begin, reported->begin() + end, true);
    if (resp.has_next()) *next = std::move(*resp.mutable_next());
  }
}

absl::Status Agent::ReportAlone(
    const v1::Lease& lease,
    const absl::StatusOr<training::TrialOutcome>& outcome,
    const CurrentLease& current, ReportingObserver& observer,
    v1::CompleteTrialRequest* completion, bool single,
    v1::LeaseTrialResponse* next) {
  if (!outcome.ok()) {
    // Out of memory: the config does not fit, on this worker or (as the
    // coordinator's estimate let it through) likely on any; retrying would
    // only repeat the allocation.
    const bool oom = absl::IsResourceExhausted(outcome.status());
    return FailLease(
        lease,
        TruncatedReason(
            oom ? absl::StrCat("out of memory: ", outcome.status().message())
                : outcome.status().ToString()),
        false, "", 0, /*permanent=*/oom);
  }
  if (outcome->end == training::TrialEnd::kStopped) {
    if (current.lost) {
      return absl::AbortedError(absl::StrCat(
          "trial ", lease.trial_id(),
          ": lease lost, sweep cancelled or trial stopped early; dropped"));
    }
    // Stop(): hand the trial back with its checkpoint; any worker resumes
    // it. The metrics not yet sent go first, so the curve has no gap; best
    // effort: the hand-back goes ahead if they do not arrive (the curve then
    // has a gap before the checkpoint step).
    std::vector<v1::MetricPoint> pending = observer.TakePending();
    if (!pending.empty()) SendPoints(lease, std::move(pending)).IgnoreError();
    return FailLease(
        lease,
        absl::StrCat("worker stopped by signal at step ", outcome->steps), true,
        outcome->checkpoint, outcome->steps);
  }
  // The last completion brings the next lease (a single trial; a batch
  // worker asks for its next batch itself).
  completion->set_lease_next(!stop_ && !drain_ && single &&
                             config_.batch_trials <= 1 && !config_.fill_budget);
  completion->set_resend_held(completion->lease_next());  // its only lease
  v1::CompleteTrialResponse resp;
  RETURN_IF_ERROR(WithRetry("CompleteTrial", [&] {
    return client_->CompleteTrial(*completion, &resp);
  }));
  ++trials_completed_;
  if (config_.counters != nullptr) ++config_.counters->trials_completed;
  if (resp.has_next()) *next = std::move(*resp.mutable_next());
  return absl::OkStatus();
}

absl::Status Agent::RunLeases(const std::vector<v1::Lease>& leases,
                              v1::LeaseTrialResponse* next) {
  const size_t n = leases.size();
  std::vector<std::unique_ptr<CurrentLease>> current;
  std::vector<std::unique_ptr<ReportingObserver>> observers;
  std::vector<training::TrainingObserver*> observer_ptrs;
  for (const v1::Lease& lease : leases) {
    auto c = std::make_unique<CurrentLease>();
    c->trial_id = lease.trial_id();
    c->attempt = lease.attempt();
    observers.push_back(std::make_unique<ReportingObserver>(
        lease.trial_id(), lease.attempt(),
        lease.config().training().max_steps(),
        [this, &lease](const std::vector<v1::MetricPoint>& points) {
          return SendPoints(lease, points);
        },
        &stop_, &c->lost, &c->step, lease.checkpoint_step(),
        config_.counters != nullptr ? &config_.counters->training_steps
                                    : nullptr));
    observer_ptrs.push_back(observers.back().get());
    current.push_back(std::move(c));
  }
  {
    absl::MutexLock lock(&mu_);
    for (auto& c : current) current_.push_back(c.get());
  }
  struct Clear {
    Agent* agent;
    ~Clear() {
      absl::MutexLock lock(&agent->mu_);
      agent->current_.clear();
    }
  } clear{this};

  std::vector<absl::StatusOr<training::TrialOutcome>> outcomes =
      TrainLeases(leases, observer_ptrs);

  // The completions, built once: building one takes the observer's pending
  // points.
  std::vector<std::optional<v1::CompleteTrialRequest>> completions(n);
  for (size_t i = 0; i < n; ++i) {
    if (!outcomes[i].ok() || outcomes[i]->end == training::TrialEnd::kStopped)
      continue;
    completions[i] =
        Completion(leases[i], *outcomes[i], observers[i]->TakePending(), n);
  }

  // A batch that ended well reports in one RPC (one transaction) per 256
  // trials, the last of which also brings the next batch. If the coordinator
  // refuses a call as a whole (a lease lost meanwhile, or a server without
  // CompleteTrials), each of its trials reports alone below and gets its own
  // verdict.
  std::vector<bool> reported(n, false);
  if (n > 1 && std::all_of(completions.begin(), completions.end(),
                           [](const auto& c) { return c.has_value(); })) {
    std::vector<v1::CompleteTrialRequest> batch;
    for (const auto& c : completions) batch.push_back(*c);
    CompleteBatch(batch, &reported, next);
  }
  absl::Status result = absl::OkStatus();
  for (size_t i = 0; i < n; ++i) {
    if (reported[i]) continue;
    absl::Status s = ReportAlone(
        leases[i], outcomes[i], *current[i], *observers[i],
        completions[i].has_value() ? &*completions[i] : nullptr, n == 1, next);
    if (!s.ok()) {
      log::Error("trial_report_failed", {{"trial", leases[i].trial_id()},
                                         {"attempt", leases[i].attempt()},
                                         {"error", s}});
      if (result.ok()) result = s;
    }
  }
  return result;
}

}  // namespace qkov::agent
