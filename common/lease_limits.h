// The sizes of the worker protocol's batches (proto/qkov/v1/worker.proto),
// shared by the coordinator, which refuses larger ones, and the worker,
// which stays within them. Header-only.
#ifndef QKOV_COMMON_LEASE_LIMITS_H_
#define QKOV_COMMON_LEASE_LIMITS_H_

namespace qkov::limits {

// The most trials one lease holds (LeaseTrialRequest.max_trials,
// CompleteTrialsRequest.lease_next) and one heartbeat renews: a GPU worker
// stacks this many small synthetic trials (docs/cluster.md, "Stack size").
inline constexpr int kMaxLeaseTrials = 4096;

// The most completions one CompleteTrials call carries; a worker reports a
// larger batch in several calls.
inline constexpr int kMaxCompletionsPerCall = 256;

}  // namespace qkov::limits

#endif  // QKOV_COMMON_LEASE_LIMITS_H_
