// Slot plan: how one qkov-worker process splits into agents (--slots), which
// device each trains on, and the memory each may give one batch. Pure policy
// with the device's memory reading passed in, so tests reach every branch
// without a GPU (tests/unit/agent/slot_plan_test.cc).
//
//   - Slot K is its own registered worker NAME/slotK (NAME alone for one
//     slot).
//   - --device=auto is CUDA when LibTorch sees a GPU, else the CPU. With
//     several GPUs visible, --device=cuda puts slot K on GPU K mod count.
//   - Each device's available memory is read once, before anything trains on
//     it, and memory_fraction of it is split evenly among the slots on it.
//     A device whose memory cannot be read gets budget 0 (leases are not
//     sized to memory), an error with --batch_trials=auto, which needs it.
//     A device that does not parse, or CUDA without a GPU, gets budget 0
//     and no reading: each agent's Run() names the problem.
//   - --batch_trials=auto stacks up to limits::kMaxLeaseTrials trials on a
//     GPU and 32 on the CPU (docs/cluster.md, "Stack size").
#ifndef QKOV_WORKER_AGENT_SLOT_PLAN_H_
#define QKOV_WORKER_AGENT_SLOT_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/agent/agent.h"

namespace qkov::agent {

// The most trials --batch_trials=auto stacks on the CPU: a core's
// trial-steps per second peak near 32 and fall beyond (docs/PERFORMANCE.md),
// and a larger stack would keep trials from other workers.
inline constexpr int kCpuAutoStack = 32;

struct SlotPlanRequest {
  AgentConfig base;              // name, server, batch_trials, fill_budget, ...
  int slots = 1;                 // in [1, 256]
  std::string device;            // cpu, cuda, cuda:N or auto
  int gpus = 0;                  // GPUs LibTorch sees
  double memory_fraction = 0.8;  // in (0, 1]
};

struct SlotPlan {
  std::vector<AgentConfig> agents;  // one per slot
  std::vector<std::string> notes;   // one line per device, for the log
};

// The available memory of a device ("cpu", "cuda:1"), in bytes.
using MemoryReader = std::function<absl::StatusOr<int64_t>(const std::string&)>;

// INVALID_ARGUMENT for a slot count or memory fraction out of range, and
// FAILED_PRECONDITION when --batch_trials=auto meets a device whose memory
// cannot be read (the message names the device and says to give a number).
absl::StatusOr<SlotPlan> PlanSlots(const SlotPlanRequest& request,
                                   const MemoryReader& available_memory);

}  // namespace qkov::agent

#endif  // QKOV_WORKER_AGENT_SLOT_PLAN_H_
