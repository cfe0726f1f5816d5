#include "server/core/convert.h"

#include "storage/results_store.h"

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

}  // namespace qkov::core
