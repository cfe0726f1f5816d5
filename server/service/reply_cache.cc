#include "server/service/reply_cache.h"

#include <time.h>

#include <algorithm>
#include <utility>

namespace qkov::service {

absl::Duration ThreadCpuTime() {
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return absl::ZeroDuration();
  return absl::DurationFromTimespec(ts);
}

ReplyCache::ReplyCache(Clock* clock, std::function<absl::Duration()> cpu_now)
    : clock_(clock), cpu_now_(cpu_now ? std::move(cpu_now) : ThreadCpuTime) {}

absl::Duration ReplyCache::ReuseFor(absl::Duration cpu) {
  return std::min(kMaxReuse, cpu * kReuseFactor);
}

absl::StatusOr<ReplyCache::Reply> ReplyCache::Get(
    const std::string& key,
    const std::function<absl::StatusOr<std::string>()>& compute) {
  std::shared_ptr<Entry> entry;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (static_cast<int>(entries_.size()) >= kMaxEntries) {
        // Full: drop the entries nobody is computing or reading; they are
        // recomputed on their next request.
        for (auto e = entries_.begin(); e != entries_.end();) {
          auto here = e++;
          if (here->second.use_count() == 1) entries_.erase(here);
        }
      }
      it = entries_.emplace(key, std::make_shared<Entry>()).first;
    }
    entry = it->second;
  }
  absl::MutexLock lock(&entry->mu);
  const absl::Time now = clock_->Now();
  if (entry->valid && now < entry->expires)
    return Reply{entry->body, now - entry->computed, entry->expires - now};
  const absl::Duration cpu0 = cpu_now_();
  absl::StatusOr<std::string> body = compute();
  if (!body.ok()) {
    entry->valid = false;
    return body.status();
  }
  entry->valid = true;
  entry->body = *std::move(body);
  entry->computed = now;
  entry->expires = now + ReuseFor(cpu_now_() - cpu0);
  return Reply{entry->body, absl::ZeroDuration(), entry->expires - now};
}

}  // namespace qkov::service
