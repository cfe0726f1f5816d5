#include "server/core/coordinator.h"

#include <utility>

#include "server/core/adaptive_sweep.h"

namespace qkov::core {

Coordinator::Coordinator(storage::ResultsStore* store, Clock* clock,
                         CoordinatorOptions options,
                         storage::SqlConsole* sql_console)
    : core_(store, clock, std::move(options), sql_console),
      sweeps_(&core_),
      results_(&core_),
      workers_(&core_) {
  store->searches().SetFollowUp(GrowSearch);
}

}  // namespace qkov::core
