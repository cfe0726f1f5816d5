// ResultReader (server/core/result_reader.h): the client API's result
// queries (sweep.proto): result rows with filters and sorting, aggregates
// over seeds, heatmaps, curves, a trial's metrics, and the read-only SQL
// console.
#include "server/core/result_reader.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/aggregate.h"
#include "common/matched_sweep.h"
#include "common/status_macros.h"
#include "common/sweep_file.h"
#include "common/text.h"
#include "server/core/convert.h"

namespace qkov::core {

namespace v1 = ::qkov::v1;

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

// A request's KEY=VALUE filters, each key a row's (axis, state, trial or
// metric).
absl::StatusOr<std::vector<Filter>> RowFilters(
    const google::protobuf::RepeatedPtrField<std::string>& where) {
  ASSIGN_OR_RETURN(std::vector<Filter> filters,
                   ParseWhere({where.begin(), where.end()}));
  for (const Filter& f : filters) {
    if (!IsRowKey(f.key))
      return absl::InvalidArgumentError(
          absl::StrCat("where: '", TerminalSafe(f.key),
                       "' is not an axis, state, trial or metric name"));
  }
  return filters;
}

// The request's checks before any row is read: offset and limit, and the
// sort key.
absl::Status CheckRowQuery(const v1::QueryResultsRequest& r) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (r.offset() < 0 || r.limit() < 0)
    return absl::InvalidArgumentError("offset, limit: must be >= 0");
  if (!r.sort_by().empty() && !IsRowKey(r.sort_by()))
    return absl::InvalidArgumentError(
        absl::StrCat("sort_by: '", TerminalSafe(r.sort_by()),
                     "' is not an axis, state, trial or metric name"));
  return absl::OkStatus();
}

// The indexes of the rows `r` selects: those matching `filters`, sorted by
// its key (trial order without one), its offset and limit applied. `total`:
// how many matched before the offset and limit.
std::vector<size_t> SelectRows(const v1::QueryResultsRequest& r,
                               const std::vector<v1::ResultRow>& rows,
                               const std::vector<Filter>& filters,
                               size_t* total) {
  std::vector<size_t> kept;
  kept.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (Matches(rows[i], filters)) kept.push_back(i);
  }
  if (!r.sort_by().empty()) SortRows(rows, r.sort_by(), r.descending(), &kept);
  *total = kept.size();
  const size_t begin = std::min(kept.size(), static_cast<size_t>(r.offset()));
  const size_t end =
      r.limit() == 0
          ? kept.size()
          : std::min(kept.size(), begin + static_cast<size_t>(r.limit()));
  return std::vector<size_t>(kept.begin() + begin, kept.begin() + end);
}

// The settings of a sweep's rows (ConfigSettings of each), each distinct
// training's part computed once: the rows of one sweep share a few.
class RowSettings {
 public:
  explicit RowSettings(const SweepRows& rows) : rows_(rows) {}

  // Calls `fn` with every setting of row i, axes first.
  template <typename Fn>
  absl::Status ForEach(size_t i, const Fn& fn) {
    const int t = rows_.TrainingIndex(i);
    if (t < 0) {  // a row whose config holds its training
      RETURN_IF_ERROR(rows_.FullConfig(i, &scratch_));
      for (const ConfigSetting& s : ConfigSettings(scratch_)) fn(s);
      return absl::OkStatus();
    }
    const v1::Training& training = rows_.Training(t).training();
    for (const ConfigSetting& s :
         AxisSettings(rows_.rows()[i].config(), training.task()))
      fn(s);
    auto it = training_.find(t);
    if (it == training_.end())
      it = training_.emplace(t, TrainingSettings(training)).first;
    for (const ConfigSetting& s : it->second) fn(s);
    return absl::OkStatus();
  }

 private:
  const SweepRows& rows_;
  absl::flat_hash_map<int, std::vector<ConfigSetting>> training_;
  v1::TrialConfig scratch_;
};

// The setting columns of one message: a column per key of `keys` (of type
// `types`) for the rows `kept[begin, end)`, text dictionary-encoded, a row
// without the setting listed in `missing`.
absl::Status AddSettingColumns(RowSettings& settings,
                               const std::vector<size_t>& kept, size_t begin,
                               size_t end, const std::vector<std::string>& keys,
                               const std::vector<ConfigSetting::Type>& types,
                               v1::ResultColumns* out) {
  using Type = ConfigSetting::Type;
  absl::flat_hash_map<std::string, size_t> column_of;
  std::vector<v1::SettingColumn*> columns;
  std::vector<absl::flat_hash_map<std::string, int32_t>> codes(keys.size());
  for (size_t j = 0; j < keys.size(); ++j) {
    columns.push_back(out->add_settings());
    columns.back()->set_name(keys[j]);
    column_of[keys[j]] = j;
  }
  std::vector<bool> seen(keys.size());
  for (size_t k = begin; k < end; ++k) {
    std::fill(seen.begin(), seen.end(), false);
    RETURN_IF_ERROR(settings.ForEach(kept[k], [&](const ConfigSetting& s) {
      const size_t j = column_of.at(s.key);
      // A key whose type differs between rows (no field has two) would
      // put a row in two lists; the first type seen holds.
      if (s.type != types[j] || seen[j]) return;
      seen[j] = true;
      v1::SettingColumn* c = columns[j];
      switch (s.type) {
        case Type::kNumber:
          c->add_numbers(s.number);
          break;
        case Type::kInteger:
          c->add_integers(s.integer);
          break;
        case Type::kText: {
          auto [at, added] = codes[j].try_emplace(
              s.text, static_cast<int32_t>(c->categories_size()));
          if (added) c->add_categories(s.text);
          c->add_codes(at->second);
          break;
        }
        case Type::kFlag:
          c->add_flags(s.flag);
          break;
      }
    }));
    for (size_t j = 0; j < keys.size(); ++j) {
      if (seen[j]) continue;
      v1::SettingColumn* c = columns[j];
      c->add_missing(static_cast<int32_t>(k - begin));
      switch (types[j]) {
        case Type::kNumber:
          c->add_numbers(0);
          break;
        case Type::kInteger:
          c->add_integers(0);
          break;
        case Type::kText:
          c->add_codes(-1);
          break;
        case Type::kFlag:
          c->add_flags(false);
          break;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::QueryResultsResponse> ResultReader::QueryResults(
    const v1::QueryResultsRequest& r) {
  RETURN_IF_ERROR(CheckRowQuery(r));
  ASSIGN_OR_RETURN(std::vector<Filter> filters, RowFilters(r.where()));
  v1::QueryResultsResponse resp;
  RETURN_IF_ERROR(core_->rows_cache.WithRows(
      r.sweep_name(), [&](const SweepRows& stored) -> absl::Status {
        const std::vector<v1::ResultRow>& rows = stored.rows();
        size_t total = 0;
        const std::vector<size_t> kept = SelectRows(r, rows, filters, &total);
        resp.set_total_rows(static_cast<int64_t>(total));
        // The metrics the request names, or all.
        const std::set<std::string> asked(r.metrics().begin(),
                                          r.metrics().end());
        for (const size_t i : kept) {
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

absl::StatusOr<v1::AggregateResultsResponse> ResultReader::AggregateResults(
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
  RETURN_IF_ERROR(core_->rows_cache.WithRows(
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

absl::StatusOr<v1::SweepHeatmapsResponse> ResultReader::SweepHeatmaps(
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
  RETURN_IF_ERROR(core_->rows_cache.WithRows(
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
  ASSIGN_OR_RETURN(auto contents,
                   core_->store->trials().ArtifactsNamed(ids, name));
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

absl::Status ResultReader::WarmResultRows(int max_sweeps,
                                          const std::function<bool()>& stop) {
  ASSIGN_OR_RETURN(std::vector<storage::SweepRecord> sweeps,
                   core_->store->sweeps().ListSweeps());
  std::sort(sweeps.begin(), sweeps.end(),
            [](const storage::SweepRecord& a, const storage::SweepRecord& b) {
              return a.created_ms > b.created_ms;
            });
  for (int i = 0; i < static_cast<int>(sweeps.size()) && i < max_sweeps; ++i) {
    if (stop && stop()) break;
    RETURN_IF_ERROR(core_->rows_cache.WithRows(
        sweeps[i].name, [](const SweepRows&) { return absl::OkStatus(); }));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SweepCurvesResponse> ResultReader::SweepCurves(
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
                   core_->store->sweeps().GetSweep(r.sweep_name()));
  // Ordinals count a sweep's trials from 0 in submission order.
  ASSIGN_OR_RETURN(
      std::vector<storage::TrialRecord> page,
      core_->store->trials().ListTrials(r.sweep_name(), "", r.offset() - 1,
                                        static_cast<int>(limit)));
  v1::SweepCurvesResponse resp;
  resp.set_total_trials(sweep.total_trials);
  for (const storage::TrialRecord& trial : page) {
    ASSIGN_OR_RETURN(
        std::vector<storage::MetricRecord> points,
        core_->store->trials().Metrics(trial.trial_id, r.metric()));
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

absl::StatusOr<v1::GetTrialMetricsResponse> ResultReader::GetTrialMetrics(
    const v1::GetTrialMetricsRequest& r) {
  if (r.trial_id().empty())
    return absl::InvalidArgumentError("trial_id: must not be empty");
  RETURN_IF_ERROR(core_->store->trials()
                      .GetTrial(r.trial_id())
                      .status());  // NOT_FOUND for an unknown trial
  // One curve asked for: read by its own key range.
  ASSIGN_OR_RETURN(std::vector<storage::MetricRecord> points,
                   core_->store->trials().Metrics(
                       r.trial_id(), r.names_size() == 1 ? r.names(0) : ""));
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

absl::StatusOr<std::vector<v1::ResultColumns>> ResultReader::ResultColumns(
    const v1::QueryResultsRequest& r, int chunk_rows) {
  RETURN_IF_ERROR(CheckRowQuery(r));
  ASSIGN_OR_RETURN(std::vector<Filter> filters, RowFilters(r.where()));
  const std::set<std::string> asked(r.metrics().begin(), r.metrics().end());
  std::vector<v1::ResultColumns> chunks;
  RETURN_IF_ERROR(core_->rows_cache.WithRows(
      r.sweep_name(), [&](const SweepRows& stored) -> absl::Status {
        const std::vector<v1::ResultRow>& rows = stored.rows();
        size_t total = 0;
        const std::vector<size_t> kept = SelectRows(r, rows, filters, &total);
        std::set<std::string> names(asked);
        // The union of the kept rows' setting keys (a first pass; each
        // chunk walks its rows' settings again rather than hold every
        // row's at once).
        RowSettings settings(stored);
        std::vector<std::string> keys;
        std::vector<ConfigSetting::Type> types;
        absl::flat_hash_map<std::string, size_t> key_index;
        for (const size_t i : kept) {
          if (asked.empty()) {
            for (const auto& [name, value] : rows[i].values())
              names.insert(name);
          }
          RETURN_IF_ERROR(settings.ForEach(i, [&](const ConfigSetting& s) {
            if (key_index.try_emplace(s.key, keys.size()).second) {
              keys.push_back(s.key);
              types.push_back(s.type);
            }
          }));
        }
        v1::TrialConfig config;
        for (size_t begin = 0; begin < kept.size() || chunks.empty();
             begin += chunk_rows) {
          const size_t end =
              std::min(kept.size(), begin + static_cast<size_t>(chunk_rows));
          v1::ResultColumns& c = chunks.emplace_back();
          c.set_total_rows(static_cast<int64_t>(total));
          std::vector<v1::MetricColumn*> columns;
          for (const std::string& name : names) {
            columns.push_back(c.add_metrics());
            columns.back()->set_name(name);
            columns.back()->mutable_values()->Reserve(end - begin);
          }
          for (size_t k = begin; k < end; ++k) {
            const v1::ResultRow& row = rows[kept[k]];
            // The axes are the row's own; the task its shared training's
            // (no copy of the training per row).
            const int t = stored.TrainingIndex(kept[k]);
            if (t < 0) RETURN_IF_ERROR(stored.FullConfig(kept[k], &config));
            const v1::TrialConfig& axes = t < 0 ? config : row.config();
            c.add_trial_ids(row.trial_id());
            c.add_parameterization(axes.parameterization());
            c.add_lr_ratio(axes.lr_ratio());
            c.add_eta_ov(axes.eta_ov());
            c.add_seed(axes.seed());
            c.add_alpha(axes.alpha());
            c.add_task(t < 0 ? config.training().task()
                             : stored.Training(t).training().task());
            c.add_state(row.state());
            c.add_arm(axes.arm());
            const RowFacts& facts = stored.facts(kept[k]);
            c.add_ordinal(facts.ordinal);
            c.add_attempts(facts.attempts);
            c.add_last_step(facts.last_step);
            c.add_config_hash(facts.config_hash);
            c.add_started_ms(facts.started_ms);
            c.add_ended_ms(facts.ended_ms);
            size_t j = 0;
            for (const std::string& name : names) {
              auto it = row.values().find(name);
              columns[j++]->add_values(
                  it == row.values().end()
                      ? std::numeric_limits<double>::quiet_NaN()
                      : it->second);
            }
          }
          RETURN_IF_ERROR(
              AddSettingColumns(settings, kept, begin, end, keys, types, &c));
          if (end >= kept.size()) break;
        }
        return absl::OkStatus();
      }));
  return chunks;
}

absl::Status ResultReader::StreamCurves(
    const v1::StreamCurvesRequest& r,
    const std::function<bool(const v1::StreamCurvesChunk&)>& emit) {
  constexpr int64_t kDefaultMaxPoints = 50'000'000;
  constexpr int64_t kMostPoints = 200'000'000;
  constexpr size_t kChunkBytes = 1 << 20;
  constexpr int kPage = 5000;
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (r.max_points() < 0 || r.max_points() > kMostPoints) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_points: must be in [0, ", kMostPoints, "]"));
  }
  for (const std::string& name : r.names()) {
    if (!IsRowKey(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "names: '", TerminalSafe(name), "' is not a metric name"));
    }
  }
  const int64_t max_points =
      r.max_points() == 0 ? kDefaultMaxPoints : r.max_points();
  RETURN_IF_ERROR(core_->store->sweeps().GetSweep(r.sweep_name()).status());
  v1::GetTrialMetricsRequest one;
  *one.mutable_names() = r.names();
  std::set<std::string> seen;
  int64_t points = 0;
  v1::StreamCurvesChunk chunk;
  auto add = [&](const std::string& trial_id) -> absl::Status {
    one.set_trial_id(trial_id);
    ASSIGN_OR_RETURN(v1::GetTrialMetricsResponse curves, GetTrialMetrics(one));
    v1::TrialSeries* t = chunk.add_trials();
    t->set_trial_id(trial_id);
    for (v1::MetricSeries& series : *curves.mutable_series()) {
      points += series.steps_size();
      seen.insert(series.name());
      *t->add_series() = std::move(series);
    }
    if (points > max_points) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "sweep '", r.sweep_name(), "' has more than ", max_points,
          " points in the curves asked for; ask for fewer names or trials, "
          "or raise max_points"));
    }
    if (chunk.ByteSizeLong() >= kChunkBytes) {
      if (!emit(chunk))
        return absl::CancelledError("the client stopped reading");
      chunk.Clear();
    }
    return absl::OkStatus();
  };
  if (r.trial_ids_size() > 0) {
    for (const std::string& id : r.trial_ids()) {
      ASSIGN_OR_RETURN(storage::TrialRecord trial,
                       core_->store->trials().GetTrial(id));
      if (trial.sweep_name != r.sweep_name()) {
        return absl::NotFoundError(absl::StrCat("trial ", TerminalSafe(id),
                                                " is not in sweep '",
                                                r.sweep_name(), "'"));
      }
      RETURN_IF_ERROR(add(id));
    }
  } else {
    for (int64_t after = -1;;) {
      ASSIGN_OR_RETURN(
          std::vector<storage::TrialRecord> page,
          core_->store->trials().ListTrials(r.sweep_name(), "", after, kPage));
      for (const storage::TrialRecord& trial : page)
        RETURN_IF_ERROR(add(trial.trial_id));
      if (page.size() < static_cast<size_t>(kPage)) break;
      after = page.back().ordinal;
    }
  }
  for (const std::string& name : r.names()) {
    if (!seen.count(name)) {
      return absl::NotFoundError(
          absl::StrCat("no trial of sweep '", r.sweep_name(),
                       "' reports a curve named '", name, "'"));
    }
  }
  if (chunk.trials_size() > 0 && !emit(chunk))
    return absl::CancelledError("the client stopped reading");
  return absl::OkStatus();
}

absl::StatusOr<v1::MatchedResponse> ResultReader::MatchSweep(
    const v1::MatchSweepRequest& r, int max_trials) {
  if (r.sweep_name().empty())
    return absl::InvalidArgumentError("sweep_name: must not be empty");
  if (r.metrics_size() == 0)
    return absl::InvalidArgumentError("metrics: at least one is required");
  if (r.num_levels() < 0 || r.num_levels() > 50)
    return absl::InvalidArgumentError("num_levels: must be in [0, 50]");
  if (r.window() < 0) return absl::InvalidArgumentError("window: must be >= 1");
  SweepMatchedArgs args;
  args.sweep = r.sweep_name();
  args.spec = r.curve();
  if (r.levels_size() > 0) {
    absl::StrAppend(
        &args.spec, "=",
        absl::StrJoin(r.levels(), ",", [](std::string* out, double level) {
          absl::StrAppendFormat(out, "%.17g", level);
        }));
  }
  args.window = r.window() == 0 ? 1 : r.window();
  args.default_levels = r.num_levels() == 0 ? 5 : r.num_levels();
  args.metrics.assign(r.metrics().begin(), r.metrics().end());
  args.by.assign(r.by().begin(), r.by().end());
  args.where.assign(r.where().begin(), r.where().end());
  args.max_trials = max_trials;
  SweepSource source;
  source.query = [this](const v1::QueryResultsRequest& q) {
    return QueryResults(q);
  };
  source.curves = [this](const v1::GetTrialMetricsRequest& q) {
    return GetTrialMetrics(q);
  };
  absl::StatusOr<MatchedTable> matched = qkov::MatchSweep(args, source);
  if (!matched.ok()) {
    // MatchSweep names the CLI's flags; here they are the request's fields.
    const std::string message =
        absl::StrReplaceAll(matched.status().message(),
                            {{"--matched: ", "curve: "},
                             {"--window: ", "window: "},
                             {"--by: ", "by: "},
                             {" matching --where", " matching where "}});
    return absl::Status(matched.status().code(), message);
  }
  return MatchedToProto(*matched);
}

absl::StatusOr<v1::QuerySqlResponse> ResultReader::QuerySql(
    const v1::QuerySqlRequest& r, const std::function<bool()>& cancelled) {
  if (core_->sql_console == nullptr)
    return absl::UnimplementedError("sql: this server has no SQL console");
  if (r.max_rows() < 0)
    return absl::InvalidArgumentError("max_rows: must be >= 0");
  ASSIGN_OR_RETURN(storage::SqlConsole::Result result,
                   core_->sql_console->Query(
                       r.sql(), std::min(r.max_rows(), 1000000), cancelled));
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

}  // namespace qkov::core
