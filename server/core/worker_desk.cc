// WorkerDesk (server/core/worker_desk.h): the worker API (worker.proto):
// registration and identity, leases, heartbeats, reports, completions,
// failures, expiry.
#include "server/core/worker_desk.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/lease_limits.h"
#include "common/status_macros.h"
#include "server/core/adaptive_sweep.h"
#include "server/core/convert.h"
#include "server/core/trial_memory.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;

absl::Status CheckTrialRef(const std::string& trial_id, int attempt) {
  if (trial_id.empty())
    return absl::InvalidArgumentError("trial_id: must not be empty");
  if (trial_id.size() > 64 || !IsValidUtf8(trial_id))
    return absl::InvalidArgumentError("trial_id: longer than 64 or not UTF-8");
  if (attempt < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("attempt: must be >= 1 (got ", attempt, ")"));
  return absl::OkStatus();
}

// The lease size a worker asks for: up to max_trials (0 meaning 1, or with
// fill limits::kMaxLeaseTrials); the store asks `sizer` how many trials of
// the first trial's sweep fit the memory budget, if any, and whether they
// stack at all (TrialsThatFit).
struct LeaseSize {
  int max_trials = 1;
  storage::LeaseSizer sizer;
};

absl::StatusOr<LeaseSize> ToLeaseSize(int max_trials, int64_t budget, bool fill,
                                      absl::string_view field) {
  if (max_trials < 0 || max_trials > limits::kMaxLeaseTrials) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": must be in [0, ",
                                                   limits::kMaxLeaseTrials,
                                                   "] (got ", max_trials, ")"));
  }
  if (budget < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory_budget_bytes: must be >= 0 (got ", budget, ")"));
  }
  if (fill && budget == 0) {
    return absl::InvalidArgumentError(
        "fill_budget: needs memory_budget_bytes > 0");
  }
  LeaseSize size;
  size.max_trials = max_trials > 0 ? max_trials
                    : fill         ? limits::kMaxLeaseTrials
                                   : 1;
  size.sizer = [budget, fill](const storage::LeaseRecord& first) {
    v1::TrialConfig c;
    const bool parsed = first.config_pb.empty()
                            ? ParseJson(first.config_json, &c).ok()
                            : c.ParseFromString(first.config_pb);
    if (!parsed) return 1;  // ToLeaseResponse reports the stored config
    return TrialsThatFit(c.training(), budget, limits::kMaxLeaseTrials, fill);
  };
  return size;
}

absl::Status CheckWorker(const std::string& worker_id) {
  if (!IsValidUtf8(worker_id))
    return absl::InvalidArgumentError("worker_id: not UTF-8");
  if (worker_id.empty())
    return absl::InvalidArgumentError(
        "worker_id: must not be empty; call RegisterWorker first");
  if (worker_id.size() > 256)
    return absl::InvalidArgumentError("worker_id: longer than 256");
  return absl::OkStatus();
}

// Provenance is shown and stored as it came: each field bounded.
absl::Status CheckProvenance(const v1::Provenance& p, const char* field) {
  const google::protobuf::Descriptor* d = p.GetDescriptor();
  const google::protobuf::Reflection* reflection = p.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->type() != google::protobuf::FieldDescriptor::TYPE_STRING) continue;
    if (reflection->GetString(p, f).size() > 256) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".", f->name(), ": longer than 256 bytes"));
    }
  }
  if (p.input_sha256_size() > 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".input_sha256: ", p.input_sha256_size(), " files; at most 16"));
  }
  for (const auto& [setting, sha] : p.input_sha256()) {
    if (setting.empty() || setting.size() > 64 || sha.size() > 64) {
      return absl::InvalidArgumentError(absl::StrCat(
          field,
          ".input_sha256: a setting of 1-64 bytes and a checksum of at "
          "most 64 bytes each"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<storage::MetricRecord>> ToPoints(
    const google::protobuf::RepeatedPtrField<v1::MetricPoint>& points,
    int limit) {
  if (points.size() > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("points: ", points.size(),
                     " points in one batch; the limit is ", limit));
  }
  std::vector<storage::MetricRecord> out;
  out.reserve(points.size());
  for (int i = 0; i < points.size(); ++i) {
    const v1::MetricPoint& p = points[i];
    if (p.name().empty() || p.name().size() > 128 || !IsValidUtf8(p.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("points[", i, "].name: must be 1..128 characters"));
    }
    if (p.step() < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("points[", i, "].step: must be >= 0"));
    out.push_back({p.step(), p.name(), p.value()});
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::RegisterWorkerResponse> WorkerDesk::RegisterWorker(
    const v1::RegisterWorkerRequest& r, const storage::Actor& actor) {
  if (r.name().empty() || r.name().size() > 200 || !IsValidUtf8(r.name()))
    return absl::InvalidArgumentError(
        "name: must be 1..200 characters of UTF-8");
  if (r.slots() < 0 || r.slots() > 1024)
    return absl::InvalidArgumentError("slots: must be in [0, 1024]");
  RETURN_IF_ERROR(CheckProvenance(r.provenance(), "provenance"));
  // 32 random bytes for the key, 4 more for the id's suffix (the id is
  // public: nothing of the key may show in it).
  unsigned char random[36];
  if (RAND_bytes(random, sizeof(random)) != 1)
    return absl::UnavailableError("cannot draw a worker key (OpenSSL RAND)");
  const absl::string_view bytes(reinterpret_cast<const char*>(random),
                                sizeof(random));
  const std::string key = absl::BytesToHexString(bytes.substr(0, 32));
  const std::string worker_id =
      absl::StrCat(r.name(), "/", absl::BytesToHexString(bytes.substr(32)));
  const storage::WorkerIdentity identity{Sha256Hex(key), actor.name};
  RETURN_IF_ERROR(core_->store->leases().RegisterWorker(
      worker_id, r.name(), std::max(1, r.slots()),
      CanonicalJson(r.provenance()), identity, core_->NowMs()));
  {
    absl::MutexLock lock(&workers_mu_);
    workers_[worker_id] = identity;
  }
  if (core_->options.on_worker_call) core_->options.on_worker_call(worker_id);
  v1::RegisterWorkerResponse resp;
  resp.set_worker_id(worker_id);
  resp.set_worker_key(key);
  *resp.mutable_heartbeat_interval() =
      ToDuration(core_->options.heartbeat_interval);
  *resp.mutable_lease_duration() = ToDuration(core_->options.lease_duration);
  return resp;
}

absl::Status WorkerDesk::VerifyWorker(const std::string& worker_id,
                                      const std::string& key,
                                      const storage::Actor& actor) {
  RETURN_IF_ERROR(CheckWorker(worker_id));
  storage::WorkerIdentity identity;
  bool cached = false;
  {
    absl::MutexLock lock(&workers_mu_);
    auto it = workers_.find(worker_id);
    if (it != workers_.end()) {
      identity = it->second;
      cached = true;
    }
  }
  if (!cached) {
    absl::StatusOr<storage::WorkerIdentity> stored =
        core_->store->leases().GetWorkerIdentity(worker_id);
    if (absl::IsNotFound(stored.status()))
      return absl::PermissionDeniedError(stored.status().message());
    RETURN_IF_ERROR(stored.status());
    identity = *std::move(stored);
    absl::MutexLock lock(&workers_mu_);
    workers_[worker_id] = identity;
  }
  if (identity.key_sha256.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "worker_id: ", worker_id,
        " was registered without a key (by an older server); register again"));
  }
  const std::string digest = Sha256Hex(key);
  if (key.empty() || digest.size() != identity.key_sha256.size() ||
      CRYPTO_memcmp(digest.data(), identity.key_sha256.data(), digest.size()) !=
          0) {
    return absl::PermissionDeniedError(
        absl::StrCat("worker_key: does not match worker ", worker_id,
                     " (a worker may act only as the worker it registered)"));
  }
  if (identity.principal != actor.name) {
    return absl::PermissionDeniedError(absl::StrCat(
        "worker_id: ", worker_id, " was registered with another token"));
  }
  if (core_->options.on_worker_call) core_->options.on_worker_call(worker_id);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> WorkerDesk::ReapExpiredLeases() {
  ASSIGN_OR_RETURN(int64_t n,
                   core_->store->leases().ExpireLeases(core_->NowMs()));
  if (n > 0) core_->changes.NotifyChange();
  return n;
}

absl::StatusOr<int64_t> WorkerDesk::ResumeLeases() {
  return core_->store->leases().ExtendRunningLeases(
      core_->NowMs() +
      absl::ToInt64Milliseconds(core_->options.lease_duration));
}

absl::StatusOr<v1::LeaseTrialResponse> WorkerDesk::LeaseTrial(
    const v1::LeaseTrialRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  ASSIGN_OR_RETURN(LeaseSize size,
                   ToLeaseSize(r.max_trials(), r.memory_budget_bytes(),
                               r.fill_budget(), "max_trials"));
  std::vector<storage::LeaseRecord> leases;
  ASSIGN_OR_RETURN(storage::LeaseAvailability a,
                   core_->store->leases().LeaseBatch(
                       r.worker_id(), core_->NowMs(),
                       absl::ToInt64Milliseconds(core_->options.lease_duration),
                       size.max_trials, &leases, size.sizer, r.resend_held()));
  return ToLeaseResponse(a, leases);
}

absl::StatusOr<v1::LeaseTrialResponse> WorkerDesk::ToLeaseResponse(
    storage::LeaseAvailability availability,
    const std::vector<storage::LeaseRecord>& leases) {
  v1::LeaseTrialResponse resp;
  switch (availability) {
    case storage::LeaseAvailability::kLeased: {
      resp.set_outcome(v1::LeaseTrialResponse::LEASED);
      for (size_t i = 0; i < leases.size(); ++i) {
        const storage::LeaseRecord& lease = leases[i];
        v1::Lease* l = i == 0 ? resp.mutable_lease() : resp.add_more();
        l->set_trial_id(lease.trial_id);
        l->set_sweep_name(lease.sweep_name);
        l->set_attempt(lease.attempt);
        if (lease.config_pb.empty()) {  // stored before schema 2
          RETURN_IF_ERROR(ParseJson(lease.config_json, l->mutable_config()));
        } else if (!l->mutable_config()->ParseFromString(lease.config_pb)) {
          return absl::DataLossError(
              absl::StrCat("trial ", lease.trial_id,
                           ": stored binary config does not parse"));
        }
        *l->mutable_expires_at() = ToTimestamp(lease.expires_ms);
        l->set_checkpoint(lease.checkpoint);
        l->set_checkpoint_step(lease.checkpoint_step);
      }
      core_->changes.NotifyChange();
      break;
    }
    case storage::LeaseAvailability::kNoWorkNow:
      resp.set_outcome(v1::LeaseTrialResponse::NO_WORK_NOW);
      *resp.mutable_retry_after() = ToDuration(core_->options.retry_after);
      break;
    case storage::LeaseAvailability::kNoWork:
      resp.set_outcome(v1::LeaseTrialResponse::NO_WORK);
      *resp.mutable_retry_after() = ToDuration(core_->options.retry_after);
      break;
  }
  return resp;
}

absl::StatusOr<v1::HeartbeatResponse> WorkerDesk::Heartbeat(
    const v1::HeartbeatRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  if (r.leases_size() > limits::kMaxLeaseTrials) {
    return absl::InvalidArgumentError(
        absl::StrCat("leases: more than ", limits::kMaxLeaseTrials));
  }
  v1::HeartbeatResponse resp;
  for (const v1::LeaseRef& ref : r.leases()) {
    RETURN_IF_ERROR(CheckTrialRef(ref.trial_id(), ref.attempt()));
    int64_t expires = 0;
    ASSIGN_OR_RETURN(
        bool renewed,
        core_->store->leases().Heartbeat(
            r.worker_id(), ref.trial_id(), ref.attempt(), ref.step(),
            core_->NowMs(),
            absl::ToInt64Milliseconds(core_->options.lease_duration),
            &expires));
    v1::LeaseStatus* st = resp.add_leases();
    st->set_trial_id(ref.trial_id());
    st->set_attempt(ref.attempt());
    st->set_directive(renewed ? v1::LeaseStatus::CONTINUE
                              : v1::LeaseStatus::STOP);
    if (renewed) *st->mutable_expires_at() = ToTimestamp(expires);
  }
  core_->changes.NotifyChange();
  return resp;
}

absl::StatusOr<v1::ReportMetricsResponse> WorkerDesk::ReportMetrics(
    const v1::ReportMetricsRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(CheckTrialRef(r.trial_id(), r.attempt()));
  ASSIGN_OR_RETURN(std::vector<storage::MetricRecord> points,
                   ToPoints(r.points(), core_->options.max_points_per_report));
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  RETURN_IF_ERROR(core_->store->results().AddMetrics(
      r.worker_id(), r.trial_id(), r.attempt(), points, core_->NowMs()));
  v1::ReportMetricsResponse resp;
  resp.set_points_stored(static_cast<int64_t>(points.size()));
  RETURN_IF_ERROR(ApplyEarlyStopping(r, resp.mutable_lease()));
  core_->changes.NotifyChange();
  return resp;
}

absl::StatusOr<StopRule> WorkerDesk::StopRuleOf(const std::string& trial_id) {
  // Trial ids are "<sweep_id>-<ordinal>"; an id of the older form is its
  // own key.
  const std::string key = trial_id.substr(0, trial_id.find('-'));
  {
    absl::MutexLock lock(&core_->stop_rules_mu);
    auto it = core_->stop_rules.find(key);
    if (it != core_->stop_rules.end()) return it->second;
  }
  ASSIGN_OR_RETURN(auto sweep,
                   core_->store->searches().SweepSpecOfTrial(trial_id));
  v1::SweepSpec spec;
  RETURN_IF_ERROR(ParseJson(sweep.second, &spec));
  StopRule rule;
  rule.enabled = spec.has_early_stopping();
  rule.rule = spec.early_stopping();
  rule.max_steps = spec.training().max_steps();
  absl::MutexLock lock(&core_->stop_rules_mu);
  core_->stop_rules[key] = rule;
  return rule;
}

absl::Status WorkerDesk::ApplyEarlyStopping(const v1::ReportMetricsRequest& r,
                                            v1::LeaseStatus* lease) {
  ASSIGN_OR_RETURN(const StopRule rule, StopRuleOf(r.trial_id()));
  if (!rule.enabled) return absl::OkStatus();
  std::vector<std::pair<int64_t, double>> judged;  // points the rule judges
  for (const v1::MetricPoint& p : r.points()) {
    if (p.name() == rule.rule.metric() &&
        JudgedAt(rule.rule, rule.max_steps, p.step()))
      judged.emplace_back(p.step(), p.value());
  }
  if (judged.empty()) return absl::OkStatus();
  std::sort(judged.begin(), judged.end());
  const bool higher = rule.rule.mode() == "max";
  for (const auto& [step, value] : judged) {
    ASSIGN_OR_RETURN(const double best,
                     core_->store->searches().BestSoFar(
                         r.trial_id(), rule.rule.metric(), step, higher));
    ASSIGN_OR_RETURN(std::vector<double> peers,
                     core_->store->searches().PeerValuesAt(
                         r.trial_id(), rule.rule.metric(), step));
    const std::string reason =
        EarlyStopReason(rule.rule, rule.max_steps, step, value, best, peers);
    if (reason.empty()) continue;
    absl::Status stopped = core_->store->searches().StopEarly(
        r.worker_id(), r.trial_id(), r.attempt(), reason, core_->NowMs());
    // A lease lost meanwhile: the trial is someone else's now (or over);
    // the next report is judged again.
    if (absl::IsFailedPrecondition(stopped)) return absl::OkStatus();
    RETURN_IF_ERROR(stopped);
    lease->set_trial_id(r.trial_id());
    lease->set_attempt(r.attempt());
    lease->set_directive(v1::LeaseStatus::STOP_EARLY);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<storage::Completion> WorkerDesk::ToCompletion(
    const v1::CompleteTrialRequest& r, const std::string& path) {
  auto field = [&path](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(path, s.message()));
  };
  if (absl::Status s = CheckTrialRef(r.trial_id(), r.attempt()); !s.ok())
    return field(s);
  absl::StatusOr<std::vector<storage::MetricRecord>> points =
      ToPoints(r.final_points(), core_->options.max_points_per_report);
  if (!points.ok()) return field(points.status());
  if (r.results_size() > 10000)
    return field(absl::InvalidArgumentError("results: more than 10000 values"));
  if (r.results().empty())
    return field(absl::InvalidArgumentError(
        "results: a completed trial needs its final results"));
  if (r.steps() < 0)
    return field(absl::InvalidArgumentError(
        absl::StrCat("steps: must be >= 0 (got ", r.steps(), ")")));
  if (absl::Status s = CheckProvenance(r.provenance(), "provenance"); !s.ok())
    return field(s);
  storage::Completion c;
  c.trial_id = r.trial_id();
  c.attempt = r.attempt();
  c.diverged = r.diverged();
  c.steps = r.steps();
  c.final_points = *std::move(points);
  for (const auto& [k, v] : r.results()) {
    if (k.empty() || k.size() > 128 || !IsValidUtf8(k))
      return field(absl::InvalidArgumentError(
          "results: names must be 1..128 characters of UTF-8"));
    if (!std::isfinite(v) && !r.diverged()) {
      return field(absl::InvalidArgumentError(absl::StrCat(
          "results[", k, "]: ", v,
          " in a trial that did not diverge (a NaN or infinite loss is "
          "reported with diverged = true)")));
    }
    c.results[k] = v;
  }
  for (int i = 0; i < r.heatmaps_size(); ++i) {
    const v1::Heatmap& h = r.heatmaps(i);
    const size_t cells =
        static_cast<size_t>(std::max(0, h.x_edges_size() - 1)) *
        static_cast<size_t>(std::max(0, h.y_edges_size() - 1));
    if (h.name().empty() || h.name().size() > 128 || !IsValidUtf8(h.name()) ||
        !IsValidUtf8(h.x_label()) || !IsValidUtf8(h.y_label()) || cells == 0 ||
        static_cast<size_t>(h.values_size()) != cells) {
      return field(absl::InvalidArgumentError(absl::StrCat(
          "heatmaps[", i, "]: needs a name and (|x_edges|-1)*(|y_edges|-1) = ",
          cells, " values (got ", h.values_size(), ")")));
    }
    c.artifacts.push_back({h.name(), "heatmap", CanonicalJson(h)});
  }
  c.provenance_json = CanonicalJson(r.provenance());
  return c;
}

absl::StatusOr<v1::CompleteTrialResponse> WorkerDesk::CompleteTrial(
    const v1::CompleteTrialRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  ASSIGN_OR_RETURN(storage::Completion c, ToCompletion(r, ""));
  c.worker_id = r.worker_id();
  v1::CompleteTrialResponse resp;
  if (!r.lease_next()) {
    RETURN_IF_ERROR(core_->store->results().CompleteTrial(c, core_->NowMs()));
    core_->changes.NotifyChange();
    return resp;
  }
  // The next lease commits with the result, so the worker's one RPC costs
  // one write (docs/protocol.md).
  std::vector<storage::LeaseRecord> leases;
  ASSIGN_OR_RETURN(storage::LeaseAvailability a,
                   core_->store->results().CompleteAndLease(
                       {c}, r.worker_id(), core_->NowMs(),
                       absl::ToInt64Milliseconds(core_->options.lease_duration),
                       1, &leases, nullptr, r.resend_held()));
  core_->changes.NotifyChange();
  ASSIGN_OR_RETURN(*resp.mutable_next(), ToLeaseResponse(a, leases));
  return resp;
}

absl::StatusOr<v1::CompleteTrialsResponse> WorkerDesk::CompleteTrials(
    const v1::CompleteTrialsRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  if (r.trials().empty() || r.trials_size() > limits::kMaxCompletionsPerCall) {
    return absl::InvalidArgumentError(
        absl::StrCat("trials: must hold 1..", limits::kMaxCompletionsPerCall,
                     " completions (got ", r.trials_size(), ")"));
  }
  ASSIGN_OR_RETURN(LeaseSize size,
                   ToLeaseSize(r.lease_next(), r.memory_budget_bytes(),
                               r.fill_budget(), "lease_next"));
  const bool lease_next = r.lease_next() > 0;  // 0 leases nothing
  std::vector<storage::Completion> completions;
  completions.reserve(r.trials_size());
  for (int i = 0; i < r.trials_size(); ++i) {
    ASSIGN_OR_RETURN(
        storage::Completion c,
        ToCompletion(r.trials(i), absl::StrCat("trials[", i, "].")));
    c.worker_id = r.worker_id();
    for (const storage::Completion& earlier : completions) {
      if (earlier.trial_id == c.trial_id) {
        return absl::InvalidArgumentError(absl::StrCat(
            "trials[", i, "].trial_id: ", c.trial_id, " appears twice"));
      }
    }
    completions.push_back(std::move(c));
  }
  std::vector<storage::LeaseRecord> leases;
  ASSIGN_OR_RETURN(storage::LeaseAvailability a,
                   core_->store->results().CompleteAndLease(
                       completions, r.worker_id(), core_->NowMs(),
                       absl::ToInt64Milliseconds(core_->options.lease_duration),
                       lease_next ? size.max_trials : 0, &leases, size.sizer,
                       r.resend_held()));
  core_->changes.NotifyChange();
  v1::CompleteTrialsResponse resp;
  if (lease_next) {
    ASSIGN_OR_RETURN(*resp.mutable_next(), ToLeaseResponse(a, leases));
  }
  return resp;
}

absl::StatusOr<v1::FailTrialResponse> WorkerDesk::FailTrial(
    const v1::FailTrialRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  RETURN_IF_ERROR(CheckTrialRef(r.trial_id(), r.attempt()));
  if (r.reason().size() > 8192 || !IsValidUtf8(r.reason()))
    return absl::InvalidArgumentError(
        "reason: must be UTF-8, at most 8192 bytes");
  if (r.checkpoint_step() < 0)
    return absl::InvalidArgumentError("checkpoint_step: must be >= 0");
  if (!r.checkpoint().empty() && !r.preempted())
    return absl::InvalidArgumentError(
        "checkpoint: only a preempted hand-back carries a checkpoint");
  if (r.permanent() && r.preempted())
    return absl::InvalidArgumentError(
        "permanent: a preempted hand-back is not a permanent failure");
  ASSIGN_OR_RETURN(
      std::string state,
      core_->store->leases().FailTrial(
          r.worker_id(), r.trial_id(), r.attempt(), r.reason(), r.preempted(),
          r.checkpoint(), r.checkpoint_step(), core_->NowMs(), r.permanent()));
  core_->changes.NotifyChange();
  v1::FailTrialResponse resp;
  resp.set_new_state(TrialStateFromString(state));
  return resp;
}

}  // namespace qkov::core
