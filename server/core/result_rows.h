// ResultRowsCache: each sweep's result rows (trial id, state, axes, final
// metrics) kept in memory and brought up to date from the trials changed
// since the last read, so that the dashboard's table, filters, sorts and
// aggregates over a 100,000-trial sweep cost a scan of memory, not a read of
// the whole sweep from SQLite per request. Full configs are rebuilt only for
// the rows a reply returns.
//
// Freshness: a read re-reads every trial whose updated_ms is at or after the
// previous refresh's start less kRereadMarginMs, so a write stamped just
// before a refresh but committed after it (the write queue commits within
// milliseconds) is still picked up. Reads within kMinRefreshMs of the last
// refresh share it, so any number of open pages cost at most two refreshes
// a second per sweep. The first read of a sweep reads it all.
//
// Thread safety: thread-safe. Reads of one sweep are serialized.
#ifndef QKOV_SERVER_CORE_RESULT_ROWS_H_
#define QKOV_SERVER_CORE_RESULT_ROWS_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "qkov/v1/sweep.pb.h"
#include "storage/results_store.h"

namespace qkov::core {

// One sweep's rows, in trial order. rows[i].config() carries the axes only
// (parameterization, lr_ratio, eta_ov, seed, alpha) for trials stored with a
// binary config; FullConfig(i) is the whole config.
// A row's bookkeeping beside its results (the notebook client's trials()).
struct RowFacts {
  int64_t ordinal = 0;
  int32_t attempts = 0;
  int64_t last_step = 0;
  std::string config_hash;
  int64_t started_ms = 0;  // the first attempt's start; 0: never started
  int64_t ended_ms = 0;    // the end of an ended trial's last attempt, else 0
};

class SweepRows {
 public:
  const std::vector<qkov::v1::ResultRow>& rows() const { return rows_; }
  const RowFacts& facts(size_t i) const { return facts_[i]; }
  absl::Status FullConfig(size_t i, qkov::v1::TrialConfig* out) const;
  // Row i's training, shared by the rows of one sweep (or arm): its index
  // (-1 for a row stored before schema 2, whose config holds it) and the
  // config that holds it (its `training` alone set).
  int TrainingIndex(size_t i) const { return training_of_[i]; }
  const qkov::v1::TrialConfig& Training(int index) const {
    return trainings_[index];
  }

 private:
  friend class ResultRowsCache;
  // Replaces or appends the row of `record`.
  absl::Status Apply(storage::TrialRecord& record);

  std::vector<qkov::v1::ResultRow> rows_;
  // Per row: index into trainings_ (-1: the row holds its full config).
  std::vector<int> training_of_;
  std::vector<RowFacts> facts_;
  std::vector<qkov::v1::TrialConfig> trainings_;
  absl::flat_hash_map<std::string, int> training_index_;  // by bytes
  absl::flat_hash_map<std::string, size_t> row_of_;       // by trial id
};

class ResultRowsCache {
 public:
  static constexpr int64_t kRereadMarginMs = 500;
  static constexpr int64_t kMinRefreshMs = 500;
  static constexpr int kMaxSweeps = 8;

  // `store` and `clock` must outlive the cache; it keeps at most
  // `max_sweeps` sweeps, dropping the least recently read.
  ResultRowsCache(storage::ResultsStore* store, Clock* clock,
                  int max_sweeps = kMaxSweeps);

  // Calls `fn` with the sweep's rows, up to date as of this call (NOT_FOUND
  // for an unknown sweep). `fn` must not keep references past its return.
  absl::Status WithRows(
      const std::string& sweep,
      const std::function<absl::Status(const SweepRows&)>& fn);
  // Drops the sweep's rows (a deleted sweep: its name may come back as
  // another sweep); a read in progress keeps its own copy.
  void Forget(const std::string& sweep);

 private:
  struct Entry {
    absl::Mutex mu;
    bool loaded ABSL_GUARDED_BY(mu) = false;
    int64_t read_from_ms ABSL_GUARDED_BY(mu) = 0;
    int64_t refreshed_ms ABSL_GUARDED_BY(mu) = 0;
    SweepRows rows ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<Entry> EntryFor(const std::string& sweep);

  storage::ResultsStore* store_;
  Clock* clock_;
  const int max_sweeps_;
  absl::Mutex mu_;
  // Most recently read first.
  std::list<std::pair<std::string, std::shared_ptr<Entry>>> entries_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_RESULT_ROWS_H_
