// Clock: injected wherever time decides behaviour (lease expiry), so tests
// move time by hand instead of sleeping.
#ifndef QKOV_COMMON_CLOCK_H_
#define QKOV_COMMON_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace qkov {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // The process-wide real clock; never deleted. Thread-safe.
  static Clock* Real();
};

// A clock that moves only when told. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1800000000))
      : now_(start) {}
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov

#endif  // QKOV_COMMON_CLOCK_H_
