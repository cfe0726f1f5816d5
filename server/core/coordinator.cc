#include "server/core/coordinator.h"

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
#include "common/text.h"
#include "server/core/adaptive_sweep.h"
#include "server/core/convert.h"

namespace qkov::core {

namespace v1 = ::qkov::v1;

v1::TrialState TrialStateFromString(const std::string& s) {
  if (s == storage::kQueued) return v1::QUEUED;
  if (s == storage::kRunning) return v1::RUNNING;
  if (s == storage::kDone) return v1::DONE;
  if (s == storage::kFailed) return v1::FAILED;
  if (s == storage::kDiverged) return v1::DIVERGED;
  if (s == storage::kPreempted) return v1::PREEMPTED;
  if (s == storage::kCancelled) return v1::CANCELLED;
  if (s == storage::kStoppedEarly) return v1::STOPPED_EARLY;
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
    case v1::STOPPED_EARLY:
      return storage::kStoppedEarly;
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
      options_(options),
      rows_cache_(store, clock) {
  store_->SetFollowUp(GrowSearch);
}

void Coordinator::NotifyChange() {
  absl::MutexLock lock(&change_mu_);
  ++change_seq_;
}

bool Coordinator::WaitForChange(absl::Time deadline) {
  absl::MutexLock lock(&change_mu_);
  const uint64_t seen = change_seq_;
  auto changed = [this, seen]() ABSL_SHARED_LOCKS_REQUIRED(change_mu_) {
    return change_seq_ != seen;
  };
  return change_mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
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
  if (s.spec().has_search()) {
    ASSIGN_OR_RETURN(std::vector<storage::SearchRecord> searches,
                     store_->Searches(r.name));
    for (const storage::SearchRecord& sr : searches)
      RETURN_IF_ERROR(ParseJson(sr.outcome_json, s.add_searches()));
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
  record.adaptive = spec.has_search();
  ASSIGN_OR_RETURN(storage::SubmitOutcome out,
                   store_->SubmitSweep(record, trials, NowMs(), actor));
  {
    absl::MutexLock lock(&stop_rules_mu_);
    stop_rules_.clear();
  }
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

namespace {

// A key QueryResults may sort or filter by: an axis, the state, the trial id,
// or a metric of the sweep.
bool IsRowKey(const std::string& key) {
  if (IsAxisKey(key)) return true;
  return !key.empty() && key.size() <= 128 &&
         std::all_of(key.begin(), key.end(), [](char c) {
           return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
         });
}

// Sorts the row indices `kept` by `key`: numbers first, then text, then
// rows without the key, numbers and text in the asked order; stable.
void SortRows(const std::vector<v1::ResultRow>& rows, const std::string& key,
              bool desc, std::vector<size_t>* kept) {
  struct SortKey {
    double number;
    std::string text;
  };
  std::vector<SortKey> keys(rows.size());
  for (size_t i : *kept) {
    keys[i].number = NumberOf(rows[i], key);
    if (std::isnan(keys[i].number)) keys[i].text = KeyOf(rows[i], key);
  }
  auto before = [&](size_t a, size_t b) {
    const SortKey &x = keys[a], &y = keys[b];
    const int cx = !std::isnan(x.number) ? 0 : x.text.empty() ? 2 : 1;
    const int cy = !std::isnan(y.number) ? 0 : y.text.empty() ? 2 : 1;
    if (cx != cy) return cx < cy;
    if (cx == 0 && x.number != y.number)
      return desc ? x.number > y.number : x.number < y.number;
    if (cx == 1 && x.text != y.text)
      return desc ? x.text > y.text : x.text < y.text;
    return false;
  };
  std::stable_sort(kept->begin(), kept->end(), before);
}

}  // namespace

absl::StatusOr<v1::QueryResultsResponse> Coordinator::QueryResults(
    const v1::QueryResultsRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (r.offset() < 0 || r.limit() < 0)
    return absl::InvalidArgumentError("offset, limit: must be >= 0");
  if (!r.sort_by().empty() && !IsRowKey(r.sort_by()))
    return absl::InvalidArgumentError(
        absl::StrCat("sort_by: '", TerminalSafe(r.sort_by()),
                     "' is not an axis, state, trial or metric name"));
  std::vector<std::string> metrics(r.metrics().begin(), r.metrics().end());
  std::vector<std::string> where(r.where().begin(), r.where().end());
  ASSIGN_OR_RETURN(std::vector<Filter> filters, ParseWhere(where));
  for (const Filter& f : filters) {
    if (!IsRowKey(f.key))
      return absl::InvalidArgumentError(
          absl::StrCat("where: '", TerminalSafe(f.key),
                       "' is not an axis, state, trial or metric name"));
  }
  v1::QueryResultsResponse resp;
  RETURN_IF_ERROR(rows_cache_.WithRows(
      r.sweep_name(), [&](const SweepRows& stored) -> absl::Status {
        const std::vector<v1::ResultRow>& rows = stored.rows();
        std::vector<size_t> kept;
        kept.reserve(rows.size());
        for (size_t i = 0; i < rows.size(); ++i) {
          if (Matches(rows[i], filters)) kept.push_back(i);
        }
        if (!r.sort_by().empty())
          SortRows(rows, r.sort_by(), r.descending(), &kept);
        resp.set_total_rows(static_cast<int64_t>(kept.size()));
        const size_t begin =
            std::min(kept.size(), static_cast<size_t>(r.offset()));
        const size_t end =
            r.limit() == 0
                ? kept.size()
                : std::min(kept.size(), begin + static_cast<size_t>(r.limit()));
        // The metrics the request names, or all.
        const std::set<std::string> asked(r.metrics().begin(),
                                          r.metrics().end());
        for (size_t k = begin; k < end; ++k) {
          const size_t i = kept[k];
          v1::ResultRow* out = resp.add_rows();
          out->set_trial_id(rows[i].trial_id());
          out->set_state(rows[i].state());
          RETURN_IF_ERROR(stored.FullConfig(i, out->mutable_config()));
          for (const auto& [name, value] : rows[i].values()) {
            if (asked.empty() || asked.count(name))
              (*out->mutable_values())[name] = value;
          }
        }
        return absl::OkStatus();
      }));
  return resp;
}

absl::StatusOr<v1::AggregateResultsResponse> Coordinator::AggregateResults(
    const v1::AggregateResultsRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (r.metrics().empty())
    return absl::InvalidArgumentError("metrics: name at least one");
  std::vector<std::string> by(r.by().begin(), r.by().end());
  std::vector<std::string> metrics(r.metrics().begin(), r.metrics().end());
  std::vector<std::string> where(r.where().begin(), r.where().end());
  for (const std::string& m : metrics) {
    if (!IsRowKey(m))
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics: '", TerminalSafe(m), "' is not a metric name"));
  }
  ASSIGN_OR_RETURN(std::vector<Filter> filters, ParseWhere(where));
  v1::AggregateResultsResponse resp;
  std::vector<Group> groups;
  RETURN_IF_ERROR(rows_cache_.WithRows(
      r.sweep_name(), [&](const SweepRows& stored) -> absl::Status {
        ASSIGN_OR_RETURN(groups, Aggregate(stored.rows(), by, metrics, where));
        int64_t matched = 0;
        for (const v1::ResultRow& row : stored.rows())
          matched += Matches(row, filters);
        resp.set_rows(matched);
        return absl::OkStatus();
      }));
  for (const Group& g : groups) {
    v1::ResultGroup* out = resp.add_groups();
    for (const std::string& k : g.keys) out->add_keys(k);
    for (const auto& [name, summary] : g.metrics) {
      v1::MetricSummary& m = (*out->mutable_metrics())[name];
      m.set_n(summary.n);
      m.set_mean(summary.mean);
      m.set_std(summary.std);
      m.set_ci95(summary.ci95);
    }
  }
  return resp;
}

absl::StatusOr<v1::SweepHeatmapsResponse> Coordinator::SweepHeatmaps(
    const v1::SweepHeatmapsRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  const std::string name = r.name().empty() ? "dtap" : r.name();
  if (!IsRowKey(name))
    return absl::InvalidArgumentError(
        absl::StrCat("name: '", TerminalSafe(name), "' is not a heatmap name"));
  if (r.per_group() < 0 || r.per_group() > 1000)
    return absl::InvalidArgumentError("per_group: must be in [0, 1000]");
  // The first per_group done trials of each (parameterization, ratio), from
  // the cached rows; then only their heatmaps are read.
  const size_t per_group = r.per_group() == 0 ? 50 : r.per_group();
  std::vector<std::string> ids;
  std::map<std::string, std::pair<v1::Parameterization, double>> key_of;
  RETURN_IF_ERROR(rows_cache_.WithRows(
      r.sweep_name(), [&](const SweepRows& stored) -> absl::Status {
        std::map<std::pair<int, double>, size_t> taken;
        for (const v1::ResultRow& row : stored.rows()) {
          if (row.state() != v1::DONE) continue;
          const auto key =
              std::make_pair(static_cast<int>(row.config().parameterization()),
                             row.config().lr_ratio());
          if (taken[key]++ >= per_group) continue;
          ids.push_back(row.trial_id());
          key_of[row.trial_id()] = {row.config().parameterization(),
                                    row.config().lr_ratio()};
        }
        return absl::OkStatus();
      }));
  // A done trial's heatmaps never change: the same trials give the same
  // grid, without reading them again.
  const std::string memo_key =
      absl::StrCat(r.sweep_name(), "\n", name, "\n", per_group);
  {
    absl::MutexLock lock(&heatmaps_mu_);
    auto it = heatmaps_memo_.find(memo_key);
    if (it != heatmaps_memo_.end() && it->second.first == ids)
      return it->second.second;
  }
  ASSIGN_OR_RETURN(auto contents, store_->ArtifactsNamed(ids, name));
  struct Map {
    std::string trial_id;
    v1::Parameterization parameterization;
    double lr_ratio;
    std::string content;
  };
  std::vector<Map> maps;
  for (const std::string& id : ids) {
    auto it = contents.find(id);
    if (it == contents.end()) continue;
    maps.push_back(
        Map{id, key_of[id].first, key_of[id].second, std::move(it->second)});
  }
  std::map<std::pair<int, double>, v1::HeatmapGroup> groups;
  for (const auto& m : maps) {
    v1::Heatmap h;
    RETURN_IF_ERROR(ParseJson(m.content, &h));
    const v1::Parameterization p = m.parameterization;
    v1::HeatmapGroup& g = groups[{p, m.lr_ratio}];
    if (g.n() == 0) {
      g.set_parameterization(p);
      g.set_lr_ratio(m.lr_ratio);
      *g.mutable_mean() = h;
    } else if (h.values_size() == g.mean().values_size()) {
      for (int i = 0; i < h.values_size(); ++i)
        g.mutable_mean()->set_values(i, g.mean().values(i) + h.values(i));
    } else {
      return absl::DataLossError(
          absl::StrCat("trial ", m.trial_id, ": heatmap '", name,
                       "' has a different shape from its group's"));
    }
    g.set_n(g.n() + 1);
  }
  v1::SweepHeatmapsResponse resp;
  for (auto& [key, g] : groups) {
    for (int i = 0; i < g.mean().values_size(); ++i)
      g.mutable_mean()->set_values(i, g.mean().values(i) / g.n());
    *resp.add_groups() = std::move(g);
  }
  absl::MutexLock lock(&heatmaps_mu_);
  if (heatmaps_memo_.size() >= kHeatmapsMemo) heatmaps_memo_.clear();
  heatmaps_memo_[memo_key] = {std::move(ids), resp};
  return resp;
}

absl::Status Coordinator::WarmResultRows(int max_sweeps,
                                         const std::function<bool()>& stop) {
  ASSIGN_OR_RETURN(std::vector<storage::SweepRecord> sweeps,
                   store_->ListSweeps());
  std::sort(sweeps.begin(), sweeps.end(),
            [](const storage::SweepRecord& a, const storage::SweepRecord& b) {
              return a.created_ms > b.created_ms;
            });
  for (int i = 0; i < static_cast<int>(sweeps.size()) && i < max_sweeps; ++i) {
    if (stop && stop()) break;
    RETURN_IF_ERROR(rows_cache_.WithRows(
        sweeps[i].name, [](const SweepRows&) { return absl::OkStatus(); }));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SweepCurvesResponse> Coordinator::SweepCurves(
    const v1::SweepCurvesRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (!IsRowKey(r.metric()))
    return absl::InvalidArgumentError(absl::StrCat(
        "metric: '", TerminalSafe(r.metric()), "' is not a metric name"));
  if (r.offset() < 0 || r.limit() < 0 || r.limit() > 500)
    return absl::InvalidArgumentError(
        "offset: must be >= 0; limit: must be in [0, 500]");
  if (r.max_points() < 0 || r.max_points() > 10000)
    return absl::InvalidArgumentError("max_points: must be in [0, 10000]");
  const int64_t limit = r.limit() == 0 ? 50 : r.limit();
  const size_t max_points = r.max_points() == 0 ? 200 : r.max_points();
  ASSIGN_OR_RETURN(storage::SweepRecord sweep,
                   store_->GetSweep(r.sweep_name()));
  // Ordinals count a sweep's trials from 0 in submission order.
  ASSIGN_OR_RETURN(std::vector<storage::TrialRecord> page,
                   store_->ListTrials(r.sweep_name(), "", r.offset() - 1,
                                      static_cast<int>(limit)));
  v1::SweepCurvesResponse resp;
  resp.set_total_trials(sweep.total_trials);
  for (const storage::TrialRecord& trial : page) {
    ASSIGN_OR_RETURN(std::vector<storage::MetricRecord> points,
                     store_->Metrics(trial.trial_id));
    std::vector<const storage::MetricRecord*> curve;
    for (const storage::MetricRecord& p : points) {
      if (p.name == r.metric()) curve.push_back(&p);
    }
    v1::TrialCurve* out = resp.add_curves();
    out->set_trial_id(trial.trial_id);
    RETURN_IF_ERROR(ParseJson(trial.config_json, out->mutable_config()));
    out->set_state(TrialStateFromString(trial.state));
    v1::MetricSeries* series = out->mutable_series();
    series->set_name(r.metric());
    // Every stride-th point, and the last.
    const size_t stride = (curve.size() + max_points - 1) / max_points;
    for (size_t j = 0; j < curve.size(); ++j) {
      if (j % std::max<size_t>(stride, 1) != 0 && j + 1 != curve.size())
        continue;
      series->add_steps(curve[j]->step);
      series->add_values(curve[j]->value);
    }
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
                                                        absl::Time* since,
                                                        bool brief) {
  const int64_t now = NowMs();
  ASSIGN_OR_RETURN(storage::SweepRecord sweep, store_->GetSweep(name));
  v1::SweepProgress p;
  ASSIGN_OR_RETURN(*p.mutable_sweep(), ToSweep(sweep));
  int64_t active = 0;
  for (const char* s :
       {storage::kQueued, storage::kRunning, storage::kPreempted}) {
    auto it = sweep.counts.find(s);
    if (it != sweep.counts.end()) active += it->second;
  }
  p.set_finished(active == 0);
  const int64_t since_ms = absl::ToUnixMillis(*since);
  *since = absl::FromUnixMillis(now);
  if (brief) {
    ASSIGN_OR_RETURN(
        std::vector<storage::TrialChange> changed,
        store_->RecentChanges(name, since_ms, kBriefProgressTrials));
    for (const auto& t : changed) {
      v1::Trial* out = p.add_updated();
      out->set_trial_id(t.trial_id);
      out->set_state(TrialStateFromString(t.state));
      out->set_last_step(t.last_step);
    }
    return p;
  }
  ASSIGN_OR_RETURN(std::vector<storage::TrialRecord> changed,
                   store_->TrialsUpdatedSince(name, since_ms));
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

}  // namespace qkov::core
