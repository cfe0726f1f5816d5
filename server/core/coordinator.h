// Coordinator: the server's logic behind both gRPC services, in terms of
// qkov.v1 messages and absl::Status (no gRPC). It validates and expands
// sweeps, leases trials with expiring, fenced leases, stores reports through
// ResultsStore, and answers queries. The services in server/service are thin
// adapters over its subjects, one class, header and .cc each, over one
// shared core (server/core/coordinator_core.h):
//
// | subject | class | reached by |
// |---|---|---|
// | sweeps and trials, the leasing switch, watch progress | SweepControl
// (sweep_control.h) | sweeps() | | result rows, aggregates, heatmaps, curves,
// SQL | ResultReader (result_reader.h) | results() | | the worker API
// (worker.proto) | WorkerDesk (worker_desk.h) | workers() | | the count of
// changes watch streams wait on | ChangeFeed (change_feed.h) | changes() |
//
// Every call takes the Actor the service authenticated (the default, an
// anonymous actor, is what a server without tokens passes).
//
// Thread safety: all methods are thread-safe.
#ifndef QKOV_SERVER_CORE_COORDINATOR_H_
#define QKOV_SERVER_CORE_COORDINATOR_H_

#include "common/clock.h"
#include "server/core/change_feed.h"
#include "server/core/coordinator_core.h"
#include "server/core/result_reader.h"
#include "server/core/sweep_control.h"
#include "server/core/worker_desk.h"
#include "storage/results_store.h"
#include "storage/sql_console.h"

namespace qkov::core {

class Coordinator {
 public:
  // `store`, `clock` and `sql_console` (null: QuerySql is UNIMPLEMENTED)
  // must outlive the Coordinator.
  Coordinator(storage::ResultsStore* store, Clock* clock,
              CoordinatorOptions options,
              storage::SqlConsole* sql_console = nullptr);

  SweepControl& sweeps() { return sweeps_; }
  ResultReader& results() { return results_; }
  WorkerDesk& workers() { return workers_; }
  ChangeFeed& changes() { return core_.changes; }

 private:
  // Declared first: the subjects hold pointers to it.
  CoordinatorCore core_;
  SweepControl sweeps_;
  ResultReader results_;
  WorkerDesk workers_;
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_COORDINATOR_H_
