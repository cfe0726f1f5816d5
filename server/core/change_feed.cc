#include "server/core/change_feed.h"

namespace qkov::core {

void ChangeFeed::NotifyChange() {
  absl::MutexLock lock(&mu_);
  ++seq_;
}

uint64_t ChangeFeed::ChangeCount() {
  absl::MutexLock lock(&mu_);
  return seq_;
}

void ChangeFeed::StopWatches() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  ++seq_;
}

bool ChangeFeed::Stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

uint64_t ChangeFeed::WaitForChange(uint64_t seen, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto changed = [this, seen]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return seq_ != seen || stopping_;
  };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  return seq_;
}

}  // namespace qkov::core
