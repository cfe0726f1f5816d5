#include "server/core/coordinator_core.h"

namespace qkov::core {

void CoordinatorCore::ForgetStopRules() {
  absl::MutexLock lock(&stop_rules_mu);
  stop_rules.clear();
}

}  // namespace qkov::core
