#include "worker/agent/agent.h"

#include <google/protobuf/stubs/common.h>
#include <google/protobuf/util/time_util.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/grpc_status.h"
#include "common/version.h"
#include "worker/agent/trial_options.h"
#include "worker/training/fixed_attention.h"
#include "worker/training/theory.h"
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

std::string BlasInfo() {
  for (absl::string_view line : absl::StrSplit(at::show_config(), '\n')) {
    for (absl::string_view part : absl::StrSplit(line, ',')) {
      part = absl::StripAsciiWhitespace(part);
      if (absl::StartsWith(part, "BLAS_INFO=")) return std::string(part.substr(10));
    }
  }
  return "unknown";
}

bool Retryable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

v1::MetricPoint ToProto(const training::MetricPoint& p) {
  v1::MetricPoint m;
  m.set_step(p.step);
  m.set_name(p.name);
  m.set_value(p.value);
  return m;
}

// The theory task as a trial outcome: the trajectory and the threshold
// crossings become metric points (docs/metrics.md), the end state results.
training::TrialOutcome TheoryOutcome(const training::TheoryResult& r, std::vector<v1::MetricPoint>* points) {
  auto add = [points](int64_t step, const char* name, double value) {
    v1::MetricPoint p;
    p.set_step(step);
    p.set_name(name);
    p.set_value(value);
    points->push_back(std::move(p));
  };
  for (size_t i = 0; i < r.trajectory.size(); ++i) {
    const auto& t = r.trajectory[i];
    add(static_cast<int64_t>(i), "theory_tau", t.tau);
    add(static_cast<int64_t>(i), "theory_mu_ov", t.mu_ov);
    add(static_cast<int64_t>(i), "theory_mu_qk", t.mu_qk);
    add(static_cast<int64_t>(i), "theory_alpha", t.alpha);
    add(static_cast<int64_t>(i), "theory_loss", t.loss);
  }
  for (size_t i = 0; i < r.at_thresholds.size(); ++i) {
    const auto& t = r.at_thresholds[i];
    add(static_cast<int64_t>(i), "threshold_loss", r.thresholds[i]);
    add(static_cast<int64_t>(i), "threshold_tau", t.tau);
    add(static_cast<int64_t>(i), "threshold_mu_ov", t.mu_ov);
    add(static_cast<int64_t>(i), "threshold_mu_qk", t.mu_qk);
    add(static_cast<int64_t>(i), "threshold_alpha", t.alpha);
  }
  training::TrialOutcome o;
  o.end = r.reached_target ? training::TrialEnd::kConverged : training::TrialEnd::kMaxSteps;
  o.steps = static_cast<int64_t>(r.trajectory.size());
  o.results["mu_ov"] = r.final_point.mu_ov;
  o.results["mu_qk"] = r.final_point.mu_qk;
  o.results["alpha"] = r.final_point.alpha;
  o.results["loss"] = r.final_point.loss;
  o.results["tau"] = r.final_point.tau;
  o.results["converged"] = r.reached_target ? 1 : 0;
  return o;
}

}  // namespace

Agent::Agent(AgentConfig config) : config_(std::move(config)), device_(torch::kCPU) {}

std::unique_ptr<grpc::ClientContext> Agent::Context() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + config_.rpc_deadline));
  secure_.Apply(ctx.get());
  return ctx;
}

template <typename Call>
grpc::Status Agent::WithRetry(Call call) {
  const absl::Time give_up = absl::Now() + config_.unreachable_timeout;
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    grpc::Status s = call();
    if (!Retryable(s) || absl::Now() > give_up) return s;
    if (stopped_.WaitForNotificationWithTimeout(backoff)) return s;
    backoff = std::min(backoff * 2, absl::Seconds(10));
  }
}

void Agent::Stop() {
  stop_ = true;
  if (!stopped_.HasBeenNotified()) stopped_.Notify();
}

absl::Status Agent::Register() {
  v1::RegisterWorkerRequest req;
  req.set_name(config_.name.empty() ? absl::StrCat(Hostname(), ":", getpid()) : config_.name);
  req.set_slots(1);
  *req.mutable_provenance() = provenance_;
  v1::RegisterWorkerResponse resp;
  grpc::Status s = WithRetry([&] { return stub_->RegisterWorker(Context().get(), req, &resp); });
  if (!s.ok()) return FromGrpcStatus(s);
  worker_id_ = resp.worker_id();
  heartbeat_interval_ = absl::Milliseconds(TimeUtil::DurationToMilliseconds(resp.heartbeat_interval()));
  return absl::OkStatus();
}

absl::Status Agent::Run() {
  // Device and threads first: a bad --device is an error before any RPC.
  try {
    device_ = torch::Device(config_.device);
  } catch (const c10::Error& e) {
    return absl::InvalidArgumentError(absl::StrCat("--device: '", config_.device, "' is not cpu or cuda[:N]"));
  }
  if (device_.is_cuda() && !torch::cuda::is_available()) {
    return absl::FailedPreconditionError(absl::StrCat("--device=", config_.device, ": CUDA is not available"));
  }
  torch::set_num_threads(config_.torch_threads);
  provenance_.set_code_version(CodeVersion());
  provenance_.set_torch_version(training::TorchVersion());
  provenance_.set_grpc_version(grpc::Version());
  provenance_.set_protobuf_version(google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION));
  provenance_.set_compiler(CompilerVersion());
  provenance_.set_device(device_.str());
  provenance_.set_hostname(Hostname());
  provenance_.set_blas(BlasInfo());
  provenance_.set_torch_threads(torch::get_num_threads());

  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetMaxReceiveMessageSize(16 << 20);
  absl::StatusOr<SecureChannel> secure = SecureChannel::Create(config_.server, config_.security, args);
  if (!secure.ok()) return secure.status();
  secure_ = *secure;
  channel_ = secure_.channel();
  stub_ = v1::WorkerService::NewStub(channel_);
  if (absl::Status s = Register(); !s.ok()) return s;

  std::thread heartbeat([this] { HeartbeatLoop(); });
  absl::Status result = absl::OkStatus();
  v1::LeaseTrialResponse next;
  while (!stop_) {
    v1::LeaseTrialResponse resp;
    if (next.outcome() == v1::LeaseTrialResponse::LEASED) {
      resp = std::move(next);
      next.Clear();
    } else {
      v1::LeaseTrialRequest req;
      req.set_worker_id(worker_id_);
      grpc::Status s = WithRetry([&] { return stub_->LeaseTrial(Context().get(), req, &resp); });
      if (stop_) break;
      if (!s.ok()) {
        result = FromGrpcStatus(s);
        break;
      }
    }
    if (resp.outcome() == v1::LeaseTrialResponse::LEASED) {
      if (absl::Status rs = RunLease(resp.lease(), &next); !rs.ok()) {
        std::fprintf(stderr, "qkov-worker: trial %s: %s\n", resp.lease().trial_id().c_str(), rs.ToString().c_str());
      }
      continue;
    }
    if (resp.outcome() == v1::LeaseTrialResponse::NO_WORK && config_.exit_when_idle) break;
    const absl::Duration wait =
        std::max(absl::Milliseconds(50), absl::Milliseconds(TimeUtil::DurationToMilliseconds(resp.retry_after())));
    stopped_.WaitForNotificationWithTimeout(wait);
  }
  const bool asked_to_stop = stop_;
  Stop();
  stop_ = asked_to_stop;  // stopped() reports a Stop() from outside only
  heartbeat.join();
  return result;
}

void Agent::HeartbeatLoop() {
  while (!stopped_.WaitForNotificationWithTimeout(heartbeat_interval_)) {
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id_);
    CurrentLease* lease = nullptr;
    {
      absl::MutexLock lock(&mu_);
      lease = current_;
      if (lease == nullptr) continue;
      v1::LeaseRef* ref = req.add_leases();
      ref->set_trial_id(lease->trial_id);
      ref->set_attempt(lease->attempt);
      ref->set_step(lease->step);
    }
    v1::HeartbeatResponse resp;
    grpc::Status s = stub_->Heartbeat(Context().get(), req, &resp);
    if (!s.ok()) continue;  // transient; the lease has slack
    absl::MutexLock lock(&mu_);
    if (current_ != lease) continue;
    for (const v1::LeaseStatus& st : resp.leases()) {
      if (st.directive() == v1::LeaseStatus::STOP) lease->lost = true;
    }
  }
}

namespace {

// Sends each report to the coordinator; keeps points whose send failed
// transiently and sends them with the next report.
class ReportingObserver : public training::TrainingObserver {
 public:
  ReportingObserver(std::function<grpc::Status(const std::vector<v1::MetricPoint>&)> send,
                    std::atomic<bool>* stop, std::atomic<bool>* lost, std::atomic<int64_t>* step)
      : send_(std::move(send)), stop_(stop), lost_(lost), step_(step) {}

  bool OnReport(int64_t step, const std::vector<training::MetricPoint>& points) override {
    step_->store(step);
    for (const auto& p : points) pending_.push_back(ToProto(p));
    grpc::Status s = send_(pending_);
    if (s.ok()) {
      pending_.clear();
    } else if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
               s.error_code() == grpc::StatusCode::NOT_FOUND) {
      lost_->store(true);
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
  std::function<grpc::Status(const std::vector<v1::MetricPoint>&)> send_;
  std::atomic<bool>* stop_;
  std::atomic<bool>* lost_;
  std::atomic<int64_t>* step_;
  std::vector<v1::MetricPoint> pending_;
};

}  // namespace

absl::Status Agent::RunLease(const v1::Lease& lease, v1::LeaseTrialResponse* next) {
  CurrentLease current;
  current.trial_id = lease.trial_id();
  current.attempt = lease.attempt();
  {
    absl::MutexLock lock(&mu_);
    current_ = &current;
  }
  struct Clear {
    Agent* agent;
    ~Clear() {
      absl::MutexLock lock(&agent->mu_);
      agent->current_ = nullptr;
    }
  } clear{this};

  int64_t checkpoint_step = 0;
  auto fail = [&](const std::string& reason, bool preempted, const std::string& checkpoint) {
    v1::FailTrialRequest req;
    req.set_worker_id(worker_id_);
    req.set_trial_id(lease.trial_id());
    req.set_attempt(lease.attempt());
    req.set_reason(reason);
    req.set_preempted(preempted);
    req.set_checkpoint(checkpoint);
    if (!checkpoint.empty()) req.set_checkpoint_step(checkpoint_step);
    v1::FailTrialResponse resp;
    return FromGrpcStatus(WithRetry([&] { return stub_->FailTrial(Context().get(), req, &resp); }));
  };

  const qkov::v1::TaskKind task = lease.config().training().task();
  absl::StatusOr<training::TrialOutcome> outcome;
  std::vector<v1::MetricPoint> extra_points;
  if (task == qkov::v1::TASK_THEORY) {
    absl::StatusOr<training::TheoryResult> theory = training::IntegrateTheory(ToTheoryOptions(lease.config()));
    if (!theory.ok()) return fail(theory.status().ToString(), false, "");
    outcome = TheoryOutcome(*theory, &extra_points);
  }
  absl::StatusOr<training::TrialOptions> options =
      task == qkov::v1::TASK_THEORY ? training::TrialOptions{} : ToTrialOptions(lease.config());
  if (!options.ok()) return fail(options.status().ToString(), false, "");

  ReportingObserver observer(
      [&](const std::vector<v1::MetricPoint>& points) {
        v1::ReportMetricsRequest req;
        req.set_worker_id(worker_id_);
        req.set_trial_id(lease.trial_id());
        req.set_attempt(lease.attempt());
        for (const auto& p : points) *req.add_points() = p;
        v1::ReportMetricsResponse resp;
        return stub_->ReportMetrics(Context().get(), req, &resp);
      },
      &stop_, &current.lost, &current.step);

  if (task == qkov::v1::TASK_FIXED_ATTENTION) {
    training::FixedAttentionOptions fo;
    fo.trial = *options;
    fo.alpha = lease.config().alpha();
    fo.factorized = training::OvFactorized(options->parameterization);
    outcome = training::RunFixedAttention(fo, &observer);
  } else if (task == qkov::v1::TASK_SYNTHETIC) {
    outcome = training::RunTrial(*options, &observer, device_, lease.checkpoint());
  }
  if (!outcome.ok()) return fail(outcome.status().ToString(), false, "");
  if (outcome->end == training::TrialEnd::kStopped) {
    if (current.lost) return absl::AbortedError("lease lost or sweep cancelled; trial dropped");
    // Stop(): hand the trial back with its checkpoint; any worker resumes it.
    // The metrics not yet sent go first, so the curve has no gap.
    std::vector<v1::MetricPoint> pending = observer.TakePending();
    if (!pending.empty()) {
      v1::ReportMetricsRequest req;
      req.set_worker_id(worker_id_);
      req.set_trial_id(lease.trial_id());
      req.set_attempt(lease.attempt());
      for (auto& p : pending) *req.add_points() = std::move(p);
      v1::ReportMetricsResponse resp;
      stub_->ReportMetrics(Context().get(), req, &resp);
    }
    checkpoint_step = outcome->steps;
    return fail(absl::StrCat("worker stopped by signal at step ", outcome->steps), true, outcome->checkpoint);
  }

  v1::CompleteTrialRequest req;
  req.set_worker_id(worker_id_);
  req.set_trial_id(lease.trial_id());
  req.set_attempt(lease.attempt());
  req.set_diverged(outcome->end == training::TrialEnd::kDiverged);
  req.set_steps(outcome->steps);
  for (const auto& [k, v] : outcome->results) (*req.mutable_results())[k] = v;
  for (const training::Heatmap& h : outcome->heatmaps) {
    v1::Heatmap* ph = req.add_heatmaps();
    ph->set_name(h.name);
    ph->set_x_label(h.x_label);
    ph->set_y_label(h.y_label);
    for (double e : h.x_edges) ph->add_x_edges(e);
    for (double e : h.y_edges) ph->add_y_edges(e);
    for (double v : h.values) ph->add_values(v);
  }
  *req.mutable_provenance() = provenance_;
  for (auto& p : observer.TakePending()) *req.add_final_points() = std::move(p);
  for (auto& p : extra_points) *req.add_final_points() = std::move(p);
  req.set_lease_next(!stop_);
  v1::CompleteTrialResponse resp;
  grpc::Status s = WithRetry([&] { return stub_->CompleteTrial(Context().get(), req, &resp); });
  if (!s.ok()) return FromGrpcStatus(s);
  ++trials_completed_;
  if (resp.has_next()) *next = std::move(*resp.mutable_next());
  return absl::OkStatus();
}

}  // namespace qkov::agent
