#include "server/core/coordinator.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <atomic>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::core {
namespace {

using google::protobuf::util::TimeUtil;
namespace v1 = ::qkov::v1;

google::protobuf::Timestamp ToTimestamp(int64_t ms) {
  return TimeUtil::MillisecondsToTimestamp(ms);
}
google::protobuf::Duration ToDuration(absl::Duration d) {
  return TimeUtil::MillisecondsToDuration(absl::ToInt64Milliseconds(d));
}

absl::Status ParseJson(const std::string& json, google::protobuf::Message* m) {
  auto s = google::protobuf::util::JsonStringToMessage(json, m);
  if (!s.ok())
    return absl::DataLossError(
        absl::StrCat("stored JSON does not parse: ", s.ToString()));
  return absl::OkStatus();
}

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

v1::TrialState TrialStateFromString(const std::string& s) {
  if (s == storage::kQueued) return v1::QUEUED;
  if (s == storage::kRunning) return v1::RUNNING;
  if (s == storage::kDone) return v1::DONE;
  if (s == storage::kFailed) return v1::FAILED;
  if (s == storage::kDiverged) return v1::DIVERGED;
  if (s == storage::kPreempted) return v1::PREEMPTED;
  if (s == storage::kCancelled) return v1::CANCELLED;
  return v1::TRIAL_STATE_UNSPECIFIED;
}

std::string TrialStateToString(v1::TrialState s) {
  switch (s) {
    case v1::QUEUED:
      return storage::kQueued;
    case v1::RUNNING:
      return storage::kRunning;
    case v1::DONE:
      return storage::kDone;
    case v1::FAILED:
      return storage::kFailed;
    case v1::DIVERGED:
      return storage::kDiverged;
    case v1::PREEMPTED:
      return storage::kPreempted;
    case v1::CANCELLED:
      return storage::kCancelled;
    default:
      return "";
  }
}

Coordinator::Coordinator(storage::ResultsStore* store, Clock* clock,
                         CoordinatorOptions options,
                         storage::SqlConsole* sql_console)
    : store_(store),
      sql_console_(sql_console),
      clock_(clock),
      options_(options) {}

void Coordinator::NotifyChange() {
  absl::MutexLock lock(&change_mu_);
  ++change_seq_;
}

void Coordinator::WaitForChange(absl::Time deadline) {
  absl::MutexLock lock(&change_mu_);
  const uint64_t seen = change_seq_;
  auto changed = [this, seen]() ABSL_SHARED_LOCKS_REQUIRED(change_mu_) {
    return change_seq_ != seen;
  };
  change_mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
}

absl::StatusOr<v1::Sweep> Coordinator::ToSweep(const storage::SweepRecord& r) {
  v1::Sweep s;
  s.set_name(r.name);
  s.set_owner(r.owner);
  s.set_description(r.description);
  RETURN_IF_ERROR(ParseJson(r.spec_json, s.mutable_spec()));
  *s.mutable_created_at() = ToTimestamp(r.created_ms);
  s.set_total_trials(r.total_trials);
  s.set_cancelled(r.cancelled);
  s.set_paused(r.paused);
  s.set_ended_last_10min(r.ended_last_10min);
  if (r.first_started_ms > 0)
    *s.mutable_first_started_at() = ToTimestamp(r.first_started_ms);
  s.set_priority(r.priority);
  for (const auto& [state, count] : r.counts) {
    v1::StateCount* c = s.add_counts();
    c->set_state(TrialStateFromString(state));
    c->set_count(count);
  }
  return s;
}

absl::StatusOr<v1::Trial> Coordinator::ToTrial(const storage::TrialRecord& r) {
  v1::Trial t;
  t.set_trial_id(r.trial_id);
  t.set_sweep_name(r.sweep_name);
  t.set_ordinal(r.ordinal);
  RETURN_IF_ERROR(ParseJson(r.config_json, t.mutable_config()));
  t.set_config_hash(r.config_hash);
  t.set_state(TrialStateFromString(r.state));
  t.set_attempts(r.attempts);
  t.set_last_step(r.last_step);
  for (const auto& [k, v] : r.results) (*t.mutable_results())[k] = v;
  for (const storage::AttemptRecord& a : r.attempt_history) {
    v1::Attempt* pa = t.add_attempt_history();
    pa->set_attempt(a.attempt);
    pa->set_worker_id(a.worker_id);
    pa->set_state(a.state);
    *pa->mutable_started_at() = ToTimestamp(a.started_ms);
    if (a.ended_ms > 0) *pa->mutable_ended_at() = ToTimestamp(a.ended_ms);
    pa->set_error(a.error);
    pa->set_provenance_json(a.provenance_json);
  }
  for (const storage::ArtifactRecord& a : r.artifacts) {
    if (a.kind != "heatmap") continue;
    RETURN_IF_ERROR(ParseJson(a.content, t.add_heatmaps()));
  }
  return t;
}

absl::StatusOr<v1::SubmitSweepResponse> Coordinator::SubmitSweep(
    const v1::SubmitSweepRequest& r, const storage::Actor& actor) {
  v1::SweepSpec spec = r.spec();
  ApplySpecDefaults(&spec);
  RETURN_IF_ERROR(ValidateSweepSpec(spec, options_.limits));
  std::vector<ExpandedTrial> expanded = ExpandSweep(spec);
  std::vector<storage::NewTrial> trials;
  trials.reserve(expanded.size());
  for (const ExpandedTrial& e : expanded) {
    trials.push_back(storage::NewTrial{
        e.config_json, e.config_hash,
        v1::Parameterization_Name(e.config.parameterization()),
        e.config.lr_ratio(), e.config.eta_ov(), e.config.seed(), e.axes_pb});
  }
  storage::SweepRecord record;
  record.name = spec.name();
  record.description = spec.description();
  record.spec_json = CanonicalJson(spec);
  record.priority = spec.priority();
  record.max_attempts = spec.max_attempts();
  record.training_pb = TrainingPb(spec);
  ASSIGN_OR_RETURN(storage::SubmitOutcome out,
                   store_->SubmitSweep(record, trials, NowMs(), actor));
  NotifyChange();
  v1::SubmitSweepResponse resp;
  ASSIGN_OR_RETURN(*resp.mutable_sweep(), ToSweep(out.sweep));
  resp.set_trials_added(out.added);
  resp.set_trials_existing(out.existing);
  resp.set_trials_requeued(out.requeued);
  return resp;
}

absl::StatusOr<v1::Sweep> Coordinator::GetSweep(const std::string& name) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(storage::SweepRecord r, store_->GetSweep(name));
  return ToSweep(r);
}

absl::StatusOr<v1::ListSweepsResponse> Coordinator::ListSweeps() {
  ASSIGN_OR_RETURN(std::vector<storage::SweepRecord> all, store_->ListSweeps());
  v1::ListSweepsResponse resp;
  for (const auto& r : all) {
    ASSIGN_OR_RETURN(*resp.add_sweeps(), ToSweep(r));
  }
  return resp;
}

absl::StatusOr<v1::CancelSweepResponse> Coordinator::CancelSweep(
    const std::string& name, const storage::Actor& actor) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(int64_t n, store_->CancelSweep(name, NowMs(), actor));
  NotifyChange();
  v1::CancelSweepResponse resp;
  ASSIGN_OR_RETURN(*resp.mutable_sweep(), GetSweep(name));
  resp.set_trials_cancelled(n);
  return resp;
}

absl::StatusOr<v1::Sweep> Coordinator::PauseSweep(
    const v1::PauseSweepRequest& r, const storage::Actor& actor) {
  if (r.name().empty())
    return absl::InvalidArgumentError("name: must not be empty");
  RETURN_IF_ERROR(store_->SetPaused(r.name(), r.paused(), NowMs(), actor));
  NotifyChange();
  return GetSweep(r.name());
}

absl::StatusOr<v1::RetrySweepResponse> Coordinator::RetrySweep(
    const std::string& name, const storage::Actor& actor) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(int64_t n, store_->RetryFailed(name, NowMs(), actor));
  NotifyChange();
  v1::RetrySweepResponse resp;
  ASSIGN_OR_RETURN(*resp.mutable_sweep(), GetSweep(name));
  resp.set_trials_requeued(n);
  return resp;
}

absl::StatusOr<v1::ListTrialsResponse> Coordinator::ListTrials(
    const v1::ListTrialsRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (!v1::TrialState_IsValid(r.state()))
    return absl::InvalidArgumentError(
        absl::StrCat("state: unknown trial state ", r.state()));
  int64_t after = -1;
  if (!r.page_token().empty() && !absl::SimpleAtoi(r.page_token(), &after)) {
    return absl::InvalidArgumentError(
        "page_token: not a token this server issued");
  }
  const int page = r.page_size() <= 0 ? 1000 : std::min(r.page_size(), 10000);
  ASSIGN_OR_RETURN(
      std::vector<storage::TrialRecord> rows,
      store_->ListTrials(r.sweep_name(), TrialStateToString(r.state()), after,
                         page));
  v1::ListTrialsResponse resp;
  for (const auto& row : rows) {
    ASSIGN_OR_RETURN(*resp.add_trials(), ToTrial(row));
  }
  if (static_cast<int>(rows.size()) == page)
    resp.set_next_page_token(absl::StrCat(rows.back().ordinal));
  return resp;
}

absl::StatusOr<v1::Trial> Coordinator::GetTrial(const std::string& trial_id) {
  if (trial_id.empty())
    return absl::InvalidArgumentError("trial_id: must not be empty");
  ASSIGN_OR_RETURN(storage::TrialRecord r, store_->GetTrial(trial_id));
  return ToTrial(r);
}

absl::StatusOr<v1::QueryResultsResponse> Coordinator::QueryResults(
    const v1::QueryResultsRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  std::vector<std::string> metrics(r.metrics().begin(), r.metrics().end());
  ASSIGN_OR_RETURN(std::vector<storage::TrialRecord> rows,
                   store_->TrialsWithResults(r.sweep_name(), metrics));
  v1::QueryResultsResponse resp;
  for (const auto& row : rows) {
    v1::ResultRow* out = resp.add_rows();
    out->set_trial_id(row.trial_id);
    RETURN_IF_ERROR(ParseJson(row.config_json, out->mutable_config()));
    out->set_state(TrialStateFromString(row.state));
    for (const auto& [k, v] : row.results) (*out->mutable_values())[k] = v;
  }
  return resp;
}

absl::StatusOr<v1::GetTrialMetricsResponse> Coordinator::GetTrialMetrics(
    const v1::GetTrialMetricsRequest& r) {
  if (r.trial_id().empty())
    return absl::InvalidArgumentError("trial_id: must not be empty");
  RETURN_IF_ERROR(store_->GetTrial(r.trial_id())
                      .status());  // NOT_FOUND for an unknown trial
  ASSIGN_OR_RETURN(std::vector<storage::MetricRecord> points,
                   store_->Metrics(r.trial_id()));
  std::set<std::string> wanted(r.names().begin(), r.names().end());
  v1::GetTrialMetricsResponse resp;
  std::map<std::string, v1::MetricSeries*> by_name;
  for (const auto& p : points) {
    if (!wanted.empty() && !wanted.count(p.name)) continue;
    v1::MetricSeries*& series = by_name[p.name];
    if (series == nullptr) {
      series = resp.add_series();
      series->set_name(p.name);
    }
    series->add_steps(p.step);
    series->add_values(p.value);
  }
  return resp;
}

absl::StatusOr<v1::QuerySqlResponse> Coordinator::QuerySql(
    const v1::QuerySqlRequest& r, const std::function<bool()>& cancelled) {
  if (sql_console_ == nullptr)
    return absl::UnimplementedError("sql: this server has no SQL console");
  if (r.max_rows() < 0)
    return absl::InvalidArgumentError("max_rows: must be >= 0");
  ASSIGN_OR_RETURN(
      storage::SqlConsole::Result result,
      sql_console_->Query(r.sql(), std::min(r.max_rows(), 1000000), cancelled));
  v1::QuerySqlResponse resp;
  for (const auto& c : result.columns) resp.add_columns(c);
  for (const auto& row : result.rows) {
    v1::SqlRow* out = resp.add_rows();
    for (const auto& v : row) {
      v1::SqlValue* value = out->add_values();
      if (const auto* i = std::get_if<int64_t>(&v)) {
        value->set_int_value(*i);
      } else if (const auto* d = std::get_if<double>(&v)) {
        value->set_double_value(*d);
      } else if (const auto* t = std::get_if<std::string>(&v)) {
        value->set_text_value(*t);
      } else if (const auto* b = std::get_if<storage::SqlConsole::Blob>(&v)) {
        value->set_blob_value(b->bytes);
      } else {
        value->set_is_null(true);
      }
    }
  }
  resp.set_truncated(!result.truncated_by.empty());
  resp.set_truncated_by(result.truncated_by);
  return resp;
}

absl::StatusOr<v1::SweepProgress> Coordinator::Progress(const std::string& name,
                                                        absl::Time* since) {
  const int64_t now = NowMs();
  ASSIGN_OR_RETURN(storage::SweepRecord sweep, store_->GetSweep(name));
  ASSIGN_OR_RETURN(
      std::vector<storage::TrialRecord> changed,
      store_->TrialsUpdatedSince(name, absl::ToUnixMillis(*since)));
  *since = absl::FromUnixMillis(now);
  v1::SweepProgress p;
  ASSIGN_OR_RETURN(*p.mutable_sweep(), ToSweep(sweep));
  int64_t active = 0;
  for (const char* s :
       {storage::kQueued, storage::kRunning, storage::kPreempted}) {
    auto it = sweep.counts.find(s);
    if (it != sweep.counts.end()) active += it->second;
  }
  p.set_finished(active == 0);
  for (const auto& t : changed) {
    v1::Trial* out = p.add_updated();
    ASSIGN_OR_RETURN(*out, ToTrial(t));
    if (t.state == storage::kRunning || t.state == storage::kDone) {
      ASSIGN_OR_RETURN(auto latest, store_->LatestMetrics(t.trial_id));
      for (const auto& [k, v] : latest) (*out->mutable_latest())[k] = v;
    }
  }
  return p;
}

absl::StatusOr<v1::RegisterWorkerResponse> Coordinator::RegisterWorker(
    const v1::RegisterWorkerRequest& r, const storage::Actor& actor) {
  if (r.name().empty() || r.name().size() > 200 || !IsValidUtf8(r.name()))
    return absl::InvalidArgumentError(
        "name: must be 1..200 characters of UTF-8");
  if (r.slots() < 0 || r.slots() > 1024)
    return absl::InvalidArgumentError("slots: must be in [0, 1024]");
  RETURN_IF_ERROR(CheckProvenance(r.provenance(), "provenance"));
  unsigned char random[32];
  if (RAND_bytes(random, sizeof(random)) != 1)
    return absl::UnavailableError("cannot draw a worker key (OpenSSL RAND)");
  const std::string key = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(random), sizeof(random)));
  const std::string worker_id =
      absl::StrCat(r.name(), "/", Sha256Hex(key).substr(0, 8));
  const storage::ResultsStore::WorkerIdentity identity{Sha256Hex(key),
                                                       actor.name};
  RETURN_IF_ERROR(
      store_->RegisterWorker(worker_id, r.name(), std::max(1, r.slots()),
                             CanonicalJson(r.provenance()), identity, NowMs()));
  {
    absl::MutexLock lock(&workers_mu_);
    workers_[worker_id] = identity;
  }
  v1::RegisterWorkerResponse resp;
  resp.set_worker_id(worker_id);
  resp.set_worker_key(key);
  *resp.mutable_heartbeat_interval() = ToDuration(options_.heartbeat_interval);
  *resp.mutable_lease_duration() = ToDuration(options_.lease_duration);
  return resp;
}

absl::Status Coordinator::VerifyWorker(const std::string& worker_id,
                                       const std::string& key,
                                       const storage::Actor& actor) {
  RETURN_IF_ERROR(CheckWorker(worker_id));
  storage::ResultsStore::WorkerIdentity identity;
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
    absl::StatusOr<storage::ResultsStore::WorkerIdentity> stored =
        store_->GetWorkerIdentity(worker_id);
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
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Coordinator::ReapExpiredLeases() {
  ASSIGN_OR_RETURN(int64_t n, store_->ExpireLeases(NowMs()));
  if (n > 0) NotifyChange();
  return n;
}

absl::StatusOr<v1::LeaseTrialResponse> Coordinator::LeaseTrial(
    const v1::LeaseTrialRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  if (r.max_trials() < 0 || r.max_trials() > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_trials: must be in [0, 256] (got ", r.max_trials(), ")"));
  }
  std::vector<storage::LeaseRecord> leases;
  ASSIGN_OR_RETURN(
      storage::LeaseAvailability a,
      store_->LeaseBatch(r.worker_id(), NowMs(),
                         absl::ToInt64Milliseconds(options_.lease_duration),
                         std::max(1, r.max_trials()), &leases));
  return ToLeaseResponse(a, leases);
}

absl::StatusOr<v1::LeaseTrialResponse> Coordinator::ToLeaseResponse(
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
      NotifyChange();
      break;
    }
    case storage::LeaseAvailability::kNoWorkNow:
      resp.set_outcome(v1::LeaseTrialResponse::NO_WORK_NOW);
      *resp.mutable_retry_after() = ToDuration(options_.retry_after);
      break;
    case storage::LeaseAvailability::kNoWork:
      resp.set_outcome(v1::LeaseTrialResponse::NO_WORK);
      *resp.mutable_retry_after() = ToDuration(options_.retry_after);
      break;
  }
  return resp;
}

absl::StatusOr<v1::HeartbeatResponse> Coordinator::Heartbeat(
    const v1::HeartbeatRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  if (r.leases_size() > 1024)
    return absl::InvalidArgumentError("leases: more than 1024");
  v1::HeartbeatResponse resp;
  for (const v1::LeaseRef& ref : r.leases()) {
    RETURN_IF_ERROR(CheckTrialRef(ref.trial_id(), ref.attempt()));
    int64_t expires = 0;
    ASSIGN_OR_RETURN(
        bool renewed,
        store_->Heartbeat(
            r.worker_id(), ref.trial_id(), ref.attempt(), ref.step(), NowMs(),
            absl::ToInt64Milliseconds(options_.lease_duration), &expires));
    v1::LeaseStatus* st = resp.add_leases();
    st->set_trial_id(ref.trial_id());
    st->set_attempt(ref.attempt());
    st->set_directive(renewed ? v1::LeaseStatus::CONTINUE
                              : v1::LeaseStatus::STOP);
    if (renewed) *st->mutable_expires_at() = ToTimestamp(expires);
  }
  NotifyChange();
  return resp;
}

absl::StatusOr<v1::ReportMetricsResponse> Coordinator::ReportMetrics(
    const v1::ReportMetricsRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(CheckTrialRef(r.trial_id(), r.attempt()));
  ASSIGN_OR_RETURN(std::vector<storage::MetricRecord> points,
                   ToPoints(r.points(), options_.max_points_per_report));
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  RETURN_IF_ERROR(store_->AddMetrics(r.worker_id(), r.trial_id(), r.attempt(),
                                     points, NowMs()));
  NotifyChange();
  v1::ReportMetricsResponse resp;
  resp.set_points_stored(static_cast<int64_t>(points.size()));
  return resp;
}

absl::StatusOr<storage::Completion> Coordinator::ToCompletion(
    const v1::CompleteTrialRequest& r, const std::string& path) {
  auto field = [&path](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(path, s.message()));
  };
  if (absl::Status s = CheckTrialRef(r.trial_id(), r.attempt()); !s.ok())
    return field(s);
  absl::StatusOr<std::vector<storage::MetricRecord>> points =
      ToPoints(r.final_points(), options_.max_points_per_report);
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

absl::StatusOr<v1::CompleteTrialResponse> Coordinator::CompleteTrial(
    const v1::CompleteTrialRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  ASSIGN_OR_RETURN(storage::Completion c, ToCompletion(r, ""));
  c.worker_id = r.worker_id();
  v1::CompleteTrialResponse resp;
  if (!r.lease_next()) {
    RETURN_IF_ERROR(store_->CompleteTrial(c, NowMs()));
    NotifyChange();
    return resp;
  }
  // The next lease commits with the result, so the worker's one RPC costs
  // one write (docs/protocol.md).
  std::vector<storage::LeaseRecord> leases;
  ASSIGN_OR_RETURN(
      storage::LeaseAvailability a,
      store_->CompleteAndLease(
          {c}, r.worker_id(), NowMs(),
          absl::ToInt64Milliseconds(options_.lease_duration), 1, &leases));
  NotifyChange();
  ASSIGN_OR_RETURN(*resp.mutable_next(), ToLeaseResponse(a, leases));
  return resp;
}

absl::StatusOr<v1::CompleteTrialsResponse> Coordinator::CompleteTrials(
    const v1::CompleteTrialsRequest& r, const storage::Actor& actor) {
  RETURN_IF_ERROR(VerifyWorker(r.worker_id(), r.worker_key(), actor));
  if (r.trials().empty() || r.trials_size() > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trials: must hold 1..256 completions (got ", r.trials_size(), ")"));
  }
  if (r.lease_next() < 0 || r.lease_next() > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lease_next: must be in [0, 256] (got ", r.lease_next(), ")"));
  }
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
                   store_->CompleteAndLease(
                       completions, r.worker_id(), NowMs(),
                       absl::ToInt64Milliseconds(options_.lease_duration),
                       r.lease_next(), &leases));
  NotifyChange();
  v1::CompleteTrialsResponse resp;
  if (r.lease_next() > 0) {
    ASSIGN_OR_RETURN(*resp.mutable_next(), ToLeaseResponse(a, leases));
  }
  return resp;
}

absl::StatusOr<v1::FailTrialResponse> Coordinator::FailTrial(
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
      store_->FailTrial(r.worker_id(), r.trial_id(), r.attempt(), r.reason(),
                        r.preempted(), r.checkpoint(), r.checkpoint_step(),
                        NowMs(), r.permanent()));
  NotifyChange();
  v1::FailTrialResponse resp;
  resp.set_new_state(TrialStateFromString(state));
  return resp;
}

}  // namespace qkov::core
