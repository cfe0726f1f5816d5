#include "worker/agent/slot_plan.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/lease_limits.h"
#include "worker/training/torch_status.h"

namespace qkov::agent {
namespace {

// The device of slot `k`.
std::string SlotDevice(const SlotPlanRequest& r, int k) {
  std::string device = r.device;
  if (device == "auto") device = r.gpus > 0 ? "cuda" : "cpu";
  if (device == "cuda" && r.gpus > 1)
    device = absl::StrCat("cuda:", k % r.gpus);
  return device;
}

// The memory one batch may take on `device`, shared by `slots` slots.
absl::StatusOr<int64_t> DeviceBudget(const SlotPlanRequest& r,
                                     const std::string& device, int slots,
                                     const MemoryReader& available_memory,
                                     std::vector<std::string>* notes) {
  absl::StatusOr<torch::Device> parsed =
      training::ParseDevice(device, "--device");
  if (!parsed.ok() || (parsed->is_cuda() && r.gpus == 0)) return 0;
  absl::StatusOr<int64_t> available = available_memory(device);
  if (!available.ok()) {
    if (r.base.fill_budget) {
      return absl::FailedPreconditionError(absl::StrCat(
          device, ": ", available.status().message(),
          "; --batch_trials=auto needs the device's available memory; give "
          "a number instead"));
    }
    notes->push_back(absl::StrCat(device, ": ", available.status().message(),
                                  "; leases are not sized to memory"));
    return 0;
  }
  const int64_t budget = std::max<int64_t>(
      1, static_cast<int64_t>(r.memory_fraction *
                              static_cast<double>(*available) / slots));
  notes->push_back(absl::StrFormat(
      "%s: %.2f GiB available, %.2f GiB per batch (--memory_fraction %.2f, "
      "%d slot%s)",
      device, *available / 1073741824.0, budget / 1073741824.0,
      r.memory_fraction, slots, slots == 1 ? "" : "s"));
  return budget;
}

}  // namespace

absl::StatusOr<SlotPlan> PlanSlots(const SlotPlanRequest& r,
                                   const MemoryReader& available_memory) {
  if (r.slots < 1 || r.slots > 256)
    return absl::InvalidArgumentError(
        absl::StrCat("--slots must be in [1, 256] (got ", r.slots, ")"));
  if (!(r.memory_fraction > 0 && r.memory_fraction <= 1))
    return absl::InvalidArgumentError(absl::StrCat(
        "--memory_fraction must be in (0, 1] (got ", r.memory_fraction, ")"));
  SlotPlan plan;
  std::map<std::string, int> slots_on;  // device -> slots that share it
  for (int k = 0; k < r.slots; ++k) {
    AgentConfig c = r.base;
    if (r.slots > 1) c.name += absl::StrCat("/slot", k);
    c.device = SlotDevice(r, k);
    ++slots_on[c.device];
    plan.agents.push_back(std::move(c));
  }
  std::map<std::string, int64_t> budget;
  for (const auto& [device, n] : slots_on) {
    absl::StatusOr<int64_t> b =
        DeviceBudget(r, device, n, available_memory, &plan.notes);
    if (!b.ok()) return b.status();
    budget[device] = *b;
  }
  for (AgentConfig& c : plan.agents) {
    c.memory_budget_bytes = budget[c.device];
    if (c.fill_budget)
      c.batch_trials = absl::StartsWith(c.device, "cuda")
                           ? limits::kMaxLeaseTrials
                           : kCpuAutoStack;
  }
  return plan;
}

}  // namespace qkov::agent
