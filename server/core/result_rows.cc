#include "server/core/result_rows.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/core/convert.h"

namespace qkov::core {

namespace v1 = ::qkov::v1;

namespace {

// A state no trial leaves without being queued again.
bool IsEnded(v1::TrialState state) {
  switch (state) {
    case v1::DONE:
    case v1::FAILED:
    case v1::DIVERGED:
    case v1::CANCELLED:
    case v1::STOPPED_EARLY:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::Status SweepRows::Apply(storage::TrialRecord& record) {
  v1::ResultRow row;
  row.set_trial_id(record.trial_id);
  int training = -1;
  if (record.config_json.empty()) {
    if (!row.mutable_config()->ParseFromString(record.axes_pb))
      return absl::DataLossError(
          absl::StrCat("trial ", record.trial_id, ": stored axes are corrupt"));
    auto [it, fresh] = training_index_.try_emplace(
        record.training_pb, static_cast<int>(trainings_.size()));
    if (fresh) {
      v1::TrialConfig parsed;
      if (!parsed.ParseFromString(record.training_pb)) {
        training_index_.erase(it);
        return absl::DataLossError(absl::StrCat(
            "trial ", record.trial_id, ": stored training config is corrupt"));
      }
      trainings_.push_back(std::move(parsed));
    }
    training = it->second;
  } else {
    RETURN_IF_ERROR(ParseJson(record.config_json, row.mutable_config()));
  }
  row.set_state(TrialStateFromString(record.state));
  auto* values = row.mutable_values();
  for (const auto& [k, v] : record.results) (*values)[k] = v;
  RowFacts facts{record.ordinal,    record.attempts,
                 record.last_step,  std::move(record.config_hash),
                 record.started_ms, 0};
  if (IsEnded(row.state())) facts.ended_ms = record.last_ended_ms;
  auto [at, added] = row_of_.try_emplace(record.trial_id, rows_.size());
  if (added) {
    rows_.push_back(std::move(row));
    training_of_.push_back(training);
    facts_.push_back(std::move(facts));
  } else {
    rows_[at->second] = std::move(row);
    training_of_[at->second] = training;
    facts_[at->second] = std::move(facts);
  }
  return absl::OkStatus();
}

absl::Status SweepRows::FullConfig(size_t i, v1::TrialConfig* out) const {
  if (training_of_[i] < 0) {
    *out = rows_[i].config();
    return absl::OkStatus();
  }
  *out = trainings_[training_of_[i]];
  out->MergeFrom(rows_[i].config());
  return absl::OkStatus();
}

ResultRowsCache::ResultRowsCache(storage::ResultsStore* store, Clock* clock,
                                 int max_sweeps)
    : store_(store), clock_(clock), max_sweeps_(max_sweeps) {}

std::shared_ptr<ResultRowsCache::Entry> ResultRowsCache::EntryFor(
    const std::string& sweep) {
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == sweep) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
  }
  entries_.emplace_front(sweep, std::make_shared<Entry>());
  while (static_cast<int>(entries_.size()) > max_sweeps_) entries_.pop_back();
  return entries_.front().second;
}

void ResultRowsCache::Forget(const std::string& sweep) {
  absl::MutexLock lock(&mu_);
  entries_.remove_if([&](const auto& e) { return e.first == sweep; });
}

absl::Status ResultRowsCache::WithRows(
    const std::string& sweep,
    const std::function<absl::Status(const SweepRows&)>& fn) {
  std::shared_ptr<Entry> entry = EntryFor(sweep);
  absl::MutexLock lock(&entry->mu);
  const int64_t now = absl::ToUnixMillis(clock_->Now());
  if (entry->loaded && now - entry->refreshed_ms < kMinRefreshMs)
    return fn(entry->rows);
  absl::StatusOr<std::vector<storage::TrialRecord>> changed =
      store_->trials().TrialsWithResults(
          sweep, entry->loaded ? entry->read_from_ms : 0);
  if (!changed.ok()) {
    // An unknown sweep is not kept.
    absl::MutexLock l(&mu_);
    entries_.remove_if([&](const auto& e) { return e.second == entry; });
    return changed.status();
  }
  for (storage::TrialRecord& record : *changed) {
    absl::Status s = entry->rows.Apply(record);
    if (!s.ok()) {
      entry->loaded = false;
      entry->rows = SweepRows();
      return s;
    }
  }
  entry->loaded = true;
  entry->refreshed_ms = now;
  entry->read_from_ms = now - kRereadMarginMs;
  return fn(entry->rows);
}

}  // namespace qkov::core
