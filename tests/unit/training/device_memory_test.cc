// The memory figures a worker sizes its batches by: /proc/meminfo's
// MemAvailable, and the headroom of the cgroups (v1 and v2) that hold the
// process, read from a hand-built cgroup tree.
#include "worker/training/device_memory.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace qkov::training {
namespace {

TEST(DeviceMemoryTest, ParsesMemAvailable) {
  const char* meminfo =
      "MemTotal:       32768000 kB\n"
      "MemFree:         1000000 kB\n"
      "MemAvailable:   24284732 kB\n"
      "Buffers:          123456 kB\n";
  absl::StatusOr<int64_t> bytes = ParseMemAvailable(meminfo);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, int64_t{24284732} * 1024);
  EXPECT_EQ(ParseMemAvailable("MemTotal: 5 kB\n").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(ParseMemAvailable("MemAvailable: lots kB\n").status().code(),
            absl::StatusCode::kUnavailable);
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-cgroup-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(
        std::filesystem::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  std::string root_;
};

TEST_F(CgroupTest, V2TakesTheLeastHeadroomOfTheGroupAndItsAncestors) {
  // A Slurm job's limit on the job, none on the step or the task.
  Write("/memory.max", "max\n");  // the root never limits
  Write("/slurm/job_5/memory.max", "8000000000\n");
  Write("/slurm/job_5/memory.current", "3000000000\n");
  Write("/slurm/job_5/step_0/memory.max", "max\n");
  Write("/slurm/job_5/step_0/memory.current", "2500000000\n");
  Write("/slurm/job_5/step_0/task_0/memory.max", "max\n");
  const char* self = "0::/slurm/job_5/step_0/task_0\n";
  EXPECT_EQ(CgroupHeadroom(root_, self), int64_t{5000000000});
  // A tighter limit lower down wins.
  Write("/slurm/job_5/step_0/memory.max", "3000000000\n");
  EXPECT_EQ(CgroupHeadroom(root_, self), int64_t{500000000});
  // Usage over the limit is no headroom, not a negative one.
  Write("/slurm/job_5/step_0/memory.current", "3100000000\n");
  EXPECT_EQ(CgroupHeadroom(root_, self), int64_t{0});
}

TEST_F(CgroupTest, V1ReadsTheMemoryControllerAndSkipsUnlimitedGroups) {
  const char* self =
      "4:memory:/process_api/abc\n3:cpuset:/\n1:cpu,cpuacct:/x\n0::/\n";
  // Unlimited (page-rounded 2^63 - 1) everywhere: no limit.
  Write("/memory/memory.limit_in_bytes", "9223372036854771712\n");
  Write("/memory/process_api/abc/memory.limit_in_bytes",
        "9223372036854771712\n");
  Write("/memory/process_api/abc/memory.usage_in_bytes", "15953920\n");
  EXPECT_EQ(CgroupHeadroom(root_, self), std::nullopt);
  Write("/memory/process_api/memory.limit_in_bytes", "1073741824\n");
  Write("/memory/process_api/memory.usage_in_bytes", "73741824\n");
  EXPECT_EQ(CgroupHeadroom(root_, self), int64_t{1000000000});
  // A group the process's namespace does not show (no files): skipped.
  EXPECT_EQ(CgroupHeadroom(root_, "4:memory:/elsewhere\n"), std::nullopt);
  EXPECT_EQ(CgroupHeadroom(root_, "not a cgroup line\n"), std::nullopt);
}

TEST(DeviceMemoryTest, TheCpuFigureIsPositiveAndBelowThePhysicalMemory) {
  absl::StatusOr<int64_t> available = AvailableMemoryBytes(torch::kCPU);
  ASSERT_TRUE(available.ok()) << available.status();
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  int64_t total_kib = 0;
  meminfo >> key >> total_kib >> unit;
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_GT(*available, 0);
  EXPECT_LE(*available, total_kib * 1024);
}

}  // namespace
}  // namespace qkov::training
