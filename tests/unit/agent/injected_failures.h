// InjectedFailures: the failures a test injects into a fake coordinator, per
// method ("LeaseTrial", ...), and the counts of the calls made. Shared by
// the in-memory coordinator (tests/unit/agent) and the real one behind the
// same interface (tests/integration/fake_coordinator.h). Thread-safe.
#ifndef QKOV_TESTS_UNIT_AGENT_INJECTED_FAILURES_H_
#define QKOV_TESTS_UNIT_AGENT_INJECTED_FAILURES_H_

#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace qkov::testing {

class InjectedFailures {
 public:
  // The next `times` calls of `method` return `status` without being
  // applied.
  void FailNext(const std::string& method, absl::Status status, int times) {
    absl::MutexLock lock(&mu_);
    failures_[method] = {std::move(status), times};
  }
  // The next `times` calls of `method` are applied, then answer
  // DEADLINE_EXCEEDED: the reply was lost.
  void LoseReplyNext(const std::string& method, int times) {
    absl::MutexLock lock(&mu_);
    lost_replies_[method] = times;
  }
  int calls(const std::string& method) {
    absl::MutexLock lock(&mu_);
    return calls_[method];
  }

  // Before a call is applied: counts it; OK, or the failure injected.
  absl::Status Before(const std::string& method) {
    absl::MutexLock lock(&mu_);
    ++calls_[method];
    auto it = failures_.find(method);
    if (it == failures_.end() || it->second.second == 0)
      return absl::OkStatus();
    --it->second.second;
    return it->second.first;
  }
  // After a call was applied with result `s`: `s`, or DEADLINE_EXCEEDED when
  // its reply is to be lost.
  absl::Status After(const std::string& method, absl::Status s) {
    absl::MutexLock lock(&mu_);
    auto it = lost_replies_.find(method);
    if (!s.ok() || it == lost_replies_.end() || it->second == 0) return s;
    --it->second;
    return absl::DeadlineExceededError("reply lost (injected)");
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::pair<absl::Status, int>> failures_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> lost_replies_ ABSL_GUARDED_BY(mu_);
};

}  // namespace qkov::testing

#endif  // QKOV_TESTS_UNIT_AGENT_INJECTED_FAILURES_H_
