// ChangeFeed: the coordinator's count of changes to sweeps, trials and
// leases, which watch streams (WatchSweep, the dashboard's events) wait on.
//
// Thread safety: all methods are thread-safe.
#ifndef QKOV_SERVER_CORE_CHANGE_FEED_H_
#define QKOV_SERVER_CORE_CHANGE_FEED_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace qkov::core {

class ChangeFeed {
 public:
  // Changes to sweeps, trials and leases, counted, for watch streams. A
  // watcher reads ChangeCount() before it reads the state and then waits
  // on that count: a change made while it read wakes it at once, so none
  // is missed.
  uint64_t ChangeCount();
  // Blocks until the count differs from `seen` or `deadline` passes;
  // returns the count (== `seen` when nothing changed).
  uint64_t WaitForChange(uint64_t seen, absl::Time deadline);
  // Counts a change: every watcher wakes and reads again. Called by every
  // call that changes state, and by a watcher that may have read before a
  // change whose wake it did not get (HttpService::Events).
  void NotifyChange();
  // A stopping server: every WaitForChange returns at once, and Stopping()
  // tells watch streams to end (QkovServer::Shutdown).
  void StopWatches();
  bool Stopping();

 private:
  absl::Mutex mu_;
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_CHANGE_FEED_H_
