// ReplyCache: the dashboard's replies to identical reads, shared by every
// open page and reused for a time proportional to the CPU they cost to
// compute. A reply that took c of CPU is reused for kReuseFactor * c (at most
// kMaxReuse), so a view costs at most 1 / kReuseFactor of one core however
// many tabs show it, and a cheap view (a small sweep: microseconds) is
// recomputed on every request that comes more than a few milliseconds after
// the last. Only successful replies are kept.
//
// The gRPC API does not go through it: `qkov results` is always exact; the
// dashboard shows a large, busy sweep as of at most kMaxReuse ago (the `Age`
// header of each reply says how long ago, and a kept reply says when it will
// be computed again, so that a page can ask once more then: a change after
// the last event would otherwise stay unseen).
//
// Thread safety: thread-safe. Callers asking for one key while it is being
// computed wait for that computation instead of starting their own.
#ifndef QKOV_SERVER_SERVICE_REPLY_CACHE_H_
#define QKOV_SERVER_SERVICE_REPLY_CACHE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace qkov::service {

// The calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID).
absl::Duration ThreadCpuTime();

class ReplyCache {
 public:
  static constexpr double kReuseFactor = 200;
  static constexpr absl::Duration kMaxReuse = absl::Seconds(30);
  static constexpr int kMaxEntries = 256;

  struct Reply {
    std::string body;
    absl::Duration age;      // since it was computed (zero: just computed)
    absl::Duration expires;  // from now until it is computed again
  };

  // `clock` must outlive the cache. `cpu_now` reads the calling thread's CPU
  // time (the default: ThreadCpuTime); tests pass their own.
  explicit ReplyCache(Clock* clock,
                      std::function<absl::Duration()> cpu_now = nullptr);

  // The kept reply for `key`, or `compute`'s, kept when it is OK.
  absl::StatusOr<Reply> Get(
      const std::string& key,
      const std::function<absl::StatusOr<std::string>()>& compute);

  // Entries held (for tests).
  int size() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(entries_.size());
  }

  // The reuse time of a reply that cost `cpu`.
  static absl::Duration ReuseFor(absl::Duration cpu);

 private:
  struct Entry {
    absl::Mutex mu;
    bool valid ABSL_GUARDED_BY(mu) = false;
    std::string body ABSL_GUARDED_BY(mu);
    absl::Time computed ABSL_GUARDED_BY(mu);
    absl::Time expires ABSL_GUARDED_BY(mu);
  };

  Clock* clock_;
  std::function<absl::Duration()> cpu_now_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> entries_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_REPLY_CACHE_H_
