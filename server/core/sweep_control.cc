// SweepControl (server/core/sweep_control.h): the client API's sweeps and
// trials, the leasing switch, and the progress watch streams send.
#include "server/core/sweep_control.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/aggregate.h"
#include "common/status_macros.h"
#include "common/sweep_file.h"
#include "common/text.h"
#include "server/core/convert.h"

namespace qkov::core {

namespace v1 = ::qkov::v1;

absl::StatusOr<v1::Sweep> SweepControl::ToSweep(const storage::SweepRecord& r) {
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
  if (s.spec().has_search()) {
    ASSIGN_OR_RETURN(std::vector<storage::SearchRecord> searches,
                     core_->store->searches().Searches(r.name));
    for (const storage::SearchRecord& sr : searches)
      RETURN_IF_ERROR(ParseJson(sr.outcome_json, s.add_searches()));
  }
  return s;
}

absl::StatusOr<v1::Trial> SweepControl::ToTrial(const storage::TrialRecord& r) {
  v1::Trial t;
  t.set_trial_id(r.trial_id);
  t.set_sweep_name(r.sweep_name);
  t.set_ordinal(r.ordinal);
  if (r.config_json.empty() && !r.axes_pb.empty()) {
    // The binary config (TrialsWithResults): the axes, then the sweep's
    // training part, parse as one message. Decoding JSON here, for every
    // watch view, stalled workers' reports (docs/PERFORMANCE.md, "What
    // limits each figure").
    if (!t.mutable_config()->ParseFromString(r.axes_pb + r.training_pb))
      return absl::DataLossError(
          absl::StrCat("trial ", r.trial_id, ": stored config is corrupt"));
  } else {
    RETURN_IF_ERROR(ParseJson(r.config_json, t.mutable_config()));
  }
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

absl::StatusOr<v1::SubmitSweepResponse> SweepControl::SubmitSweep(
    const v1::SubmitSweepRequest& r, const storage::Actor& actor) {
  v1::SweepSpec spec;
  if (r.sweep_file().empty() && r.preset().empty()) {
    if (r.quick() || !r.overrides().empty())
      return absl::InvalidArgumentError(
          "quick, overrides: go with a sweep file or a preset, not a spec");
    spec = r.spec();
  } else {
    if (r.has_spec())
      return absl::InvalidArgumentError(
          "spec: give a spec, a sweep file or a preset, not two");
    SweepFileSource source;
    source.text = r.sweep_file();
    source.source_name = r.sweep_file_name().empty()
                             ? "sweep file"
                             : TerminalSafe(r.sweep_file_name().substr(0, 200));
    source.preset = r.preset();
    source.quick = r.quick();
    source.overrides.assign(r.overrides().begin(), r.overrides().end());
    ASSIGN_OR_RETURN(spec, SpecFromSource(source));
  }
  ApplySpecDefaults(&spec);
  RETURN_IF_ERROR(ValidateSweepSpec(spec, core_->options.limits));
  std::vector<ExpandedTrial> expanded = ExpandSweep(spec);
  std::vector<storage::NewTrial> trials;
  trials.reserve(expanded.size());
  for (const ExpandedTrial& e : expanded) {
    trials.push_back(storage::NewTrial{
        e.config_json, e.config_hash,
        v1::Parameterization_Name(e.config.parameterization()),
        e.config.lr_ratio(), e.config.eta_ov(), e.config.seed(), e.axes_pb,
        e.training_pb});
  }
  storage::SweepRecord record;
  record.name = spec.name();
  record.description = spec.description();
  record.spec_json = CanonicalJson(spec);
  record.priority = spec.priority();
  record.max_attempts = spec.max_attempts();
  record.training_pb = TrainingPb(spec);
  record.adaptive = spec.has_search();
  ASSIGN_OR_RETURN(storage::SubmitOutcome out,
                   core_->store->sweeps().SubmitSweep(record, trials,
                                                      core_->NowMs(), actor));
  core_->ForgetStopRules();
  core_->changes.NotifyChange();
  v1::SubmitSweepResponse resp;
  ASSIGN_OR_RETURN(*resp.mutable_sweep(), ToSweep(out.sweep));
  resp.set_trials_added(out.added);
  resp.set_trials_existing(out.existing);
  resp.set_trials_requeued(out.requeued);
  return resp;
}

absl::StatusOr<v1::Sweep> SweepControl::GetSweep(const std::string& name) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(storage::SweepRecord r,
                   core_->store->sweeps().GetSweep(name));
  return ToSweep(r);
}

absl::StatusOr<v1::ListSweepsResponse> SweepControl::ListSweeps() {
  ASSIGN_OR_RETURN(std::vector<storage::SweepRecord> all,
                   core_->store->sweeps().ListSweeps());
  v1::ListSweepsResponse resp;
  for (const auto& r : all) {
    ASSIGN_OR_RETURN(*resp.add_sweeps(), ToSweep(r));
  }
  return resp;
}

absl::StatusOr<v1::CancelSweepResponse> SweepControl::CancelSweep(
    const std::string& name, const storage::Actor& actor) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(int64_t n, core_->store->sweeps().CancelSweep(
                                  name, core_->NowMs(), actor));
  core_->changes.NotifyChange();
  v1::CancelSweepResponse resp;
  ASSIGN_OR_RETURN(*resp.mutable_sweep(), GetSweep(name));
  resp.set_trials_cancelled(n);
  return resp;
}

absl::StatusOr<v1::DeleteSweepResponse> SweepControl::DeleteSweep(
    const std::string& name, const storage::Actor& actor) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(storage::DeletedSweep d, core_->store->sweeps().DeleteSweep(
                                                name, core_->NowMs(), actor));
  core_->rows_cache.Forget(name);
  {
    absl::MutexLock lock(&views_mu_);
    views_.erase(name);
  }
  core_->changes.NotifyChange();
  v1::DeleteSweepResponse resp;
  resp.set_trials_deleted(d.trials);
  resp.set_metric_points_deleted(d.metric_points);
  resp.set_bytes_freed(d.bytes_freed);
  return resp;
}

absl::StatusOr<v1::Sweep> SweepControl::PauseSweep(
    const v1::PauseSweepRequest& r, const storage::Actor& actor) {
  if (r.name().empty())
    return absl::InvalidArgumentError("name: must not be empty");
  RETURN_IF_ERROR(core_->store->sweeps().SetPaused(r.name(), r.paused(),
                                                   core_->NowMs(), actor));
  core_->changes.NotifyChange();
  return GetSweep(r.name());
}

absl::StatusOr<v1::LeasingState> SweepControl::Leasing(
    const v1::LeasingRequest& r, const storage::Actor& actor) {
  if (r.has_paused()) {
    RETURN_IF_ERROR(core_->store->leases().SetLeasing(r.paused(), r.reason(),
                                                      core_->NowMs(), actor));
    core_->changes.NotifyChange();
  }
  ASSIGN_OR_RETURN(storage::LeasingRecord l, core_->store->leases().Leasing());
  v1::LeasingState out;
  out.set_paused(l.paused);
  out.set_reason(l.reason);
  out.set_actor(l.actor);
  if (l.since_ms > 0) *out.mutable_since() = ToTimestamp(l.since_ms);
  return out;
}

absl::StatusOr<v1::RetrySweepResponse> SweepControl::RetrySweep(
    const std::string& name, const storage::Actor& actor) {
  if (name.empty())
    return absl::InvalidArgumentError("name: must not be empty");
  ASSIGN_OR_RETURN(int64_t n, core_->store->sweeps().RetryFailed(
                                  name, core_->NowMs(), actor));
  core_->changes.NotifyChange();
  v1::RetrySweepResponse resp;
  ASSIGN_OR_RETURN(*resp.mutable_sweep(), GetSweep(name));
  resp.set_trials_requeued(n);
  return resp;
}

absl::StatusOr<v1::ListTrialsResponse> SweepControl::ListTrials(
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
      core_->store->trials().ListTrials(
          r.sweep_name(), TrialStateToString(r.state()), after, page));
  v1::ListTrialsResponse resp;
  for (const auto& row : rows) {
    ASSIGN_OR_RETURN(*resp.add_trials(), ToTrial(row));
  }
  if (static_cast<int>(rows.size()) == page)
    resp.set_next_page_token(absl::StrCat(rows.back().ordinal));
  return resp;
}

absl::StatusOr<v1::Trial> SweepControl::GetTrial(const std::string& trial_id) {
  if (trial_id.empty())
    return absl::InvalidArgumentError("trial_id: must not be empty");
  ASSIGN_OR_RETURN(storage::TrialRecord r,
                   core_->store->trials().GetTrial(trial_id));
  return ToTrial(r);
}

absl::StatusOr<std::shared_ptr<const SweepControl::ProgressView>>
SweepControl::ReadProgressView(const std::string& name, int64_t from_ms) {
  auto view = std::make_shared<ProgressView>();
  view->change_count = core_->changes.ChangeCount();
  view->read_ms = core_->NowMs();
  view->from_ms = from_ms;
  ASSIGN_OR_RETURN(storage::SweepRecord sweep,
                   core_->store->sweeps().GetSweep(name));
  ASSIGN_OR_RETURN(*view->base.mutable_sweep(), ToSweep(sweep));
  int64_t active = 0;
  for (const char* s :
       {storage::kQueued, storage::kRunning, storage::kPreempted}) {
    auto it = sweep.counts.find(s);
    if (it != sweep.counts.end()) active += it->second;
  }
  view->base.set_finished(active == 0);
  // With their configs in binary; their final results are not part of it.
  ASSIGN_OR_RETURN(std::vector<storage::TrialRecord> changed,
                   core_->store->trials().TrialsWithResults(name, from_ms));
  std::vector<std::string> reporting;
  for (const auto& t : changed)
    if (t.state == storage::kRunning || t.state == storage::kDone)
      reporting.push_back(t.trial_id);
  ASSIGN_OR_RETURN(auto latest,
                   core_->store->trials().LatestMetricsOf(reporting));
  view->trials.reserve(changed.size());
  for (const auto& t : changed) {
    view->trials.emplace_back(t.updated_ms, v1::Trial());
    v1::Trial* out = &view->trials.back().second;
    ASSIGN_OR_RETURN(*out, ToTrial(t));
    out->clear_results();
    auto it = latest.find(t.trial_id);
    if (it == latest.end()) continue;
    for (const auto& [k, v] : it->second) (*out->mutable_latest())[k] = v;
  }
  return view;
}

absl::StatusOr<v1::SweepProgress> SweepControl::Progress(
    const std::string& name, absl::Time* since, bool brief,
    absl::Duration reuse) {
  const int64_t since_ms = std::max<int64_t>(0, absl::ToUnixMillis(*since));
  if (brief) {
    const int64_t now = core_->NowMs();
    ASSIGN_OR_RETURN(storage::SweepRecord sweep,
                     core_->store->sweeps().GetSweep(name));
    v1::SweepProgress p;
    ASSIGN_OR_RETURN(*p.mutable_sweep(), ToSweep(sweep));
    int64_t active = 0;
    for (const char* s :
         {storage::kQueued, storage::kRunning, storage::kPreempted}) {
      auto it = sweep.counts.find(s);
      if (it != sweep.counts.end()) active += it->second;
    }
    p.set_finished(active == 0);
    *since = absl::FromUnixMillis(now);
    ASSIGN_OR_RETURN(std::vector<storage::TrialChange> changed,
                     core_->store->trials().RecentChanges(
                         name, since_ms, kBriefProgressTrials));
    for (const auto& t : changed) {
      v1::Trial* out = p.add_updated();
      out->set_trial_id(t.trial_id);
      out->set_state(TrialStateFromString(t.state));
      out->set_last_step(t.last_step);
    }
    return p;
  }
  std::shared_ptr<const ProgressView> view;
  {
    absl::MutexLock lock(&views_mu_);
    auto it = views_.find(name);
    if (it != views_.end()) {
      const ProgressView& v = *it->second;
      // It holds what this call must see, and it is still true (nothing
      // changed since its reads), or young enough to share.
      if (v.from_ms <= since_ms && v.read_ms >= since_ms &&
          (v.change_count == core_->changes.ChangeCount() ||
           core_->NowMs() - v.read_ms < absl::ToInt64Milliseconds(reuse)))
        view = it->second;
    }
  }
  if (view == nullptr) {
    // A view from a little before `since`, so that the next watchers,
    // whose rounds began a little earlier, can share it.
    const int64_t from_ms =
        since_ms == 0 ? 0 : std::min(since_ms, core_->NowMs() - 2000);
    ASSIGN_OR_RETURN(view,
                     ReadProgressView(name, std::max<int64_t>(0, from_ms)));
    absl::MutexLock lock(&views_mu_);
    std::shared_ptr<const ProgressView>& slot = views_[name];
    if (slot == nullptr || slot->read_ms <= view->read_ms) slot = view;
    if (views_.size() > kProgressViews) {
      auto oldest = views_.begin();
      for (auto it = views_.begin(); it != views_.end(); ++it)
        if (it->second->read_ms < oldest->second->read_ms) oldest = it;
      views_.erase(oldest);
    }
  }
  v1::SweepProgress p = view->base;
  for (const auto& [updated_ms, trial] : view->trials)
    if (updated_ms >= since_ms) *p.add_updated() = trial;
  // The next round starts a little before this view's reads began: a write
  // stamps a trial with its time before it commits, so a change stamped
  // just before the view may commit just after its reads.
  *since = absl::FromUnixMillis(view->read_ms - kSinceMarginMs);
  return p;
}

}  // namespace qkov::core
