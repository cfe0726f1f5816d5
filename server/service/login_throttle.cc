#include "server/service/login_throttle.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace qkov::service {

void LoginThrottle::Refill(Bucket& b, absl::Time now) const {
  if (now <= b.updated) return;
  b.tokens = std::min<double>(
      options_.burst,
      b.tokens + absl::FDivDuration(now - b.updated, options_.refill));
  b.updated = now;
}

absl::Duration LoginThrottle::Wait(absl::string_view key) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return absl::ZeroDuration();
  Refill(it->second, now);
  if (it->second.tokens >= 1) return absl::ZeroDuration();
  return options_.refill * (1 - it->second.tokens);
}

void LoginThrottle::Take(absl::string_view key) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (static_cast<int>(buckets_.size()) >= options_.max_keys) Shrink(now);
    it = buckets_.emplace(key, Bucket{static_cast<double>(options_.burst), now})
             .first;
  }
  Refill(it->second, now);
  it->second.tokens = std::max(0.0, it->second.tokens - 1);
}

int LoginThrottle::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(buckets_.size());
}

void LoginThrottle::Shrink(absl::Time now) {
  // Full buckets say nothing a missing key does not.
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    auto here = it++;
    Refill(here->second, now);
    if (here->second.tokens >= options_.burst) buckets_.erase(here);
  }
  if (static_cast<int>(buckets_.size()) < options_.max_keys) return;
  // Then the quarter touched longest ago.
  std::vector<absl::Time> times;
  times.reserve(buckets_.size());
  for (const auto& [k, b] : buckets_) times.push_back(b.updated);
  const size_t cut = times.size() / 4;
  std::nth_element(times.begin(), times.begin() + cut, times.end());
  const absl::Time oldest_kept = times[cut];
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    auto here = it++;
    if (here->second.updated < oldest_kept) buckets_.erase(here);
  }
  // Ties (every key touched at one instant): any quarter.
  const size_t target = options_.max_keys - options_.max_keys / 4;
  while (buckets_.size() > target) buckets_.erase(buckets_.begin());
}

}  // namespace qkov::service
