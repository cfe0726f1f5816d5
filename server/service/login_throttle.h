// LoginThrottle: token buckets that pace the dashboard's logins, keyed by a
// client address or a token's holder (docs/security.md, "Logins").
//
// Each key holds up to `burst` attempts; one comes back every `refill`. An
// attempt with none left is refused with the time until one is back (the
// reply's Retry-After). The table is bounded: past max_keys, keys whose
// bucket is full again go first, then the ones touched longest ago, so a
// flood of new addresses cannot grow memory or lock anyone else out.
//
// Thread safety: thread-safe.
#ifndef QKOV_SERVER_SERVICE_LOGIN_THROTTLE_H_
#define QKOV_SERVER_SERVICE_LOGIN_THROTTLE_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace qkov::service {

class LoginThrottle {
 public:
  struct Options {
    int burst = 10;
    absl::Duration refill = absl::Seconds(6);
    int max_keys = 10000;
  };
  // `clock` must outlive the throttle.
  LoginThrottle(Options options, Clock* clock)
      : options_(options), clock_(clock) {}

  // Zero when `key` has an attempt left; otherwise how long until it has.
  // Takes nothing.
  absl::Duration Wait(absl::string_view key);
  // Takes one attempt from `key` (none left: stays empty).
  void Take(absl::string_view key);
  int size() const;

 private:
  struct Bucket {
    double tokens;
    absl::Time updated;
  };
  // `b` refilled up to now.
  void Refill(Bucket& b, absl::Time now) const;
  void Shrink(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_LOGIN_THROTTLE_H_
