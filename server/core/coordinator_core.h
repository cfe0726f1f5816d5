// CoordinatorCore: what the coordinator's subjects share (SweepControl,
// ResultReader, WorkerDesk: server/core/coordinator.h): the store, the
// clock, the options, the cache of result rows, the change feed and the
// sweeps' early-stopping rules. Internal to server/core; the state is public
// to the subjects, and what guards what is written on each member.
#ifndef QKOV_SERVER_CORE_COORDINATOR_CORE_H_
#define QKOV_SERVER_CORE_COORDINATOR_CORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "qkov/v1/sweep.pb.h"
#include "server/core/change_feed.h"
#include "server/core/result_rows.h"
#include "server/core/sweep_spec.h"
#include "storage/results_store.h"
#include "storage/sql_console.h"

namespace qkov::core {

struct CoordinatorOptions {
  absl::Duration lease_duration = absl::Seconds(30);
  absl::Duration heartbeat_interval = absl::Seconds(5);
  absl::Duration retry_after = absl::Milliseconds(500);
  SpecLimits limits;
  int max_points_per_report = 100000;
  // Told the worker id of every worker call that proved its identity
  // (VerifyWorker), on the call's thread; for the server's count of live
  // workers (server/service/server_metrics.h). May be empty.
  std::function<void(const std::string& worker_id)> on_worker_call;
};

// A sweep's early-stopping rule, read from its stored spec on its first
// report (WorkerDesk); cleared on every submission, which may change it.
struct StopRule {
  bool enabled = false;
  qkov::v1::EarlyStopping rule;
  int64_t max_steps = 0;
};

class CoordinatorCore {
 public:
  // `store`, `clock` and `sql_console` (null: QuerySql is UNIMPLEMENTED)
  // must outlive it.
  CoordinatorCore(storage::ResultsStore* store, Clock* clock,
                  CoordinatorOptions options, storage::SqlConsole* sql_console)
      : store(store),
        sql_console(sql_console),
        clock(clock),
        options(std::move(options)),
        rows_cache(store, clock) {}

  int64_t NowMs() { return absl::ToUnixMillis(clock->Now()); }
  // Drops every sweep's early-stopping rule (a submission may change one).
  void ForgetStopRules();

  storage::ResultsStore* const store;
  storage::SqlConsole* const sql_console;
  Clock* const clock;
  const CoordinatorOptions options;
  // Result rows of recently queried sweeps (QueryResults, AggregateResults).
  ResultRowsCache rows_cache;
  ChangeFeed changes;
  // By sweep id (the prefix of its trial ids).
  absl::Mutex stop_rules_mu;
  absl::flat_hash_map<std::string, StopRule> stop_rules
      ABSL_GUARDED_BY(stop_rules_mu);
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_COORDINATOR_CORE_H_
