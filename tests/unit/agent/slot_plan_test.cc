// qkov-worker's split into slots: names, devices, memory budgets and the
// auto stack size, with the device's memory reading faked (no GPU needed).
#include "worker/agent/slot_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "absl/strings/match.h"
#include "common/lease_limits.h"

namespace qkov::agent {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// Answers from `memory` (device -> bytes), NOT_FOUND for others, and counts
// the readings.
struct FakeMemory {
  std::map<std::string, int64_t> memory;
  std::map<std::string, int> reads;
  MemoryReader reader() {
    return [this](const std::string& device) -> absl::StatusOr<int64_t> {
      ++reads[device];
      auto it = memory.find(device);
      if (it == memory.end())
        return absl::NotFoundError("no memory reading on this machine");
      return it->second;
    };
  }
};

SlotPlanRequest Request(int slots, const std::string& device, int gpus) {
  SlotPlanRequest r;
  r.base.name = "node7";
  r.slots = slots;
  r.device = device;
  r.gpus = gpus;
  r.memory_fraction = 0.5;
  return r;
}

TEST(SlotPlanTest, OneCpuSlotKeepsTheNameAndTakesTheFractionOfMemory) {
  FakeMemory m{{{"cpu", 8 * kGiB}}, {}};
  absl::StatusOr<SlotPlan> plan = PlanSlots(Request(1, "cpu", 0), m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->agents.size(), 1u);
  EXPECT_EQ(plan->agents[0].name, "node7");
  EXPECT_EQ(plan->agents[0].device, "cpu");
  EXPECT_EQ(plan->agents[0].memory_budget_bytes, 4 * kGiB);
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(plan->notes[0], "8.00 GiB available"))
      << plan->notes[0];
}

TEST(SlotPlanTest, SlotsRoundRobinOverGpusAndShareEachGpusBudget) {
  FakeMemory m{{{"cuda:0", 80 * kGiB}, {"cuda:1", 40 * kGiB}}, {}};
  absl::StatusOr<SlotPlan> plan = PlanSlots(Request(5, "cuda", 2), m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->agents.size(), 5u);
  const char* devices[] = {"cuda:0", "cuda:1", "cuda:0", "cuda:1", "cuda:0"};
  for (int k = 0; k < 5; ++k) {
    const AgentConfig& c = plan->agents[k];
    EXPECT_EQ(c.name, "node7/slot" + std::to_string(k));
    EXPECT_EQ(c.device, devices[k]) << k;
    // Half of each GPU's memory, split among the slots on it (3 and 2).
    EXPECT_EQ(c.memory_budget_bytes,
              c.device == "cuda:0" ? 40 * kGiB / 3 : 20 * kGiB / 2)
        << k;
  }
  // Each device is read once, whatever number of slots share it.
  EXPECT_EQ(m.reads["cuda:0"], 1);
  EXPECT_EQ(m.reads["cuda:1"], 1);
  EXPECT_EQ(plan->notes.size(), 2u);
}

TEST(SlotPlanTest, OneVisibleGpuTakesEverySlotOnPlainCuda) {
  FakeMemory m{{{"cuda", 10 * kGiB}}, {}};
  absl::StatusOr<SlotPlan> plan = PlanSlots(Request(2, "cuda", 1), m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const AgentConfig& c : plan->agents) {
    EXPECT_EQ(c.device, "cuda");
    EXPECT_EQ(c.memory_budget_bytes, 5 * kGiB / 2);
  }
}

TEST(SlotPlanTest, AutoIsCudaWithAGpuAndTheCpuWithout) {
  FakeMemory m{{{"cpu", kGiB}, {"cuda", kGiB}}, {}};
  absl::StatusOr<SlotPlan> with = PlanSlots(Request(1, "auto", 1), m.reader());
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->agents[0].device, "cuda");
  absl::StatusOr<SlotPlan> without =
      PlanSlots(Request(1, "auto", 0), m.reader());
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->agents[0].device, "cpu");
}

TEST(SlotPlanTest, AutoBatchStacksToTheLeaseLimitOnAGpuAnd32OnTheCpu) {
  FakeMemory m{{{"cpu", kGiB}, {"cuda", kGiB}}, {}};
  SlotPlanRequest gpu = Request(1, "cuda", 1);
  gpu.base.fill_budget = true;
  absl::StatusOr<SlotPlan> plan = PlanSlots(gpu, m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->agents[0].batch_trials, limits::kMaxLeaseTrials);
  SlotPlanRequest cpu = Request(1, "cpu", 0);
  cpu.base.fill_budget = true;
  plan = PlanSlots(cpu, m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->agents[0].batch_trials, kCpuAutoStack);
  // A number stays as given.
  SlotPlanRequest fixed = Request(1, "cpu", 0);
  fixed.base.batch_trials = 7;
  plan = PlanSlots(fixed, m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->agents[0].batch_trials, 7);
}

TEST(SlotPlanTest, AnUnreadableDeviceIsNotSizedUnlessAutoNeedsIt) {
  FakeMemory m;  // no readings at all
  absl::StatusOr<SlotPlan> plan = PlanSlots(Request(2, "cpu", 0), m.reader());
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const AgentConfig& c : plan->agents) EXPECT_EQ(c.memory_budget_bytes, 0);
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(plan->notes[0], "not sized to memory"))
      << plan->notes[0];

  SlotPlanRequest automatic = Request(1, "cpu", 0);
  automatic.base.fill_budget = true;
  plan = PlanSlots(automatic, m.reader());
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "cpu: "))
      << plan.status();
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "give a number"))
      << plan.status();
}

TEST(SlotPlanTest, ABadDeviceOrCudaWithoutAGpuIsLeftToTheAgent) {
  FakeMemory m{{{"cuda", kGiB}}, {}};
  for (const char* device : {"tpu", "cuda"}) {
    absl::StatusOr<SlotPlan> plan =
        PlanSlots(Request(1, device, 0), m.reader());
    ASSERT_TRUE(plan.ok()) << device << ": " << plan.status();
    EXPECT_EQ(plan->agents[0].device, device);
    EXPECT_EQ(plan->agents[0].memory_budget_bytes, 0) << device;
  }
  EXPECT_TRUE(m.reads.empty());  // nothing was read
}

TEST(SlotPlanTest, OutOfRangeSettingsAreRefusedByName) {
  FakeMemory m{{{"cpu", kGiB}}, {}};
  for (int slots : {0, 257}) {
    absl::StatusOr<SlotPlan> plan =
        PlanSlots(Request(slots, "cpu", 0), m.reader());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(plan.status().message(), "--slots"))
        << plan.status();
  }
  for (double fraction : {0.0, 1.5, std::nan("")}) {
    SlotPlanRequest r = Request(1, "cpu", 0);
    r.memory_fraction = fraction;
    absl::StatusOr<SlotPlan> plan = PlanSlots(r, m.reader());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(plan.status().message(), "--memory_fraction"))
        << plan.status();
  }
}

}  // namespace
}  // namespace qkov::agent
