// How much memory a worker has for training on a device, so that it can size
// a stack of trials to it (qkov-worker --batch_trials=auto, and the memory
// budget every batch lease carries; docs/cluster.md "Stack size").
#ifndef QKOV_WORKER_TRAINING_DEVICE_MEMORY_H_
#define QKOV_WORKER_TRAINING_DEVICE_MEMORY_H_

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace qkov::training {

// Bytes available for training on `device`, now.
// - CPU: MemAvailable of /proc/meminfo, lowered to the headroom of the
//   process's memory cgroup where one limits it (CgroupHeadroom; Slurm's
//   --mem is such a limit).
// - CUDA: the driver's free memory on the device (cuMemGetInfo in the
//   device's primary context, the one LibTorch uses), through libcuda.so.1
//   loaded at run time, so that a CPU-only build needs no CUDA. Memory that
//   LibTorch's caching allocator holds counts as used: ask before training.
// UNAVAILABLE when the figure cannot be read (no /proc, no driver).
absl::StatusOr<int64_t> AvailableMemoryBytes(const torch::Device& device);

// What is used on `device` now (for the worker's metrics): CPU, this
// process's resident memory (/proc/self/statm); CUDA, the device's memory
// in use by every process (the driver's total less its free). UNAVAILABLE
// when the figure cannot be read.
absl::StatusOr<int64_t> MemoryInUseBytes(const torch::Device& device);

// The MemAvailable line of /proc/meminfo's text, in bytes.
absl::StatusOr<int64_t> ParseMemAvailable(absl::string_view meminfo);

// The least headroom (limit minus usage, at least 0) over the memory
// cgroups that contain the process (its group and every ancestor), given
// /proc/self/cgroup's text and the cgroup file system's mount point
// (/sys/fs/cgroup): cgroup v2 memory.max - memory.current where memory.max
// is not "max"; cgroup v1 (under memory/) memory.limit_in_bytes -
// memory.usage_in_bytes where the limit is below 2^62. Groups whose files
// are missing (not mounted, another namespace) are skipped. nullopt when no
// group sets a limit.
std::optional<int64_t> CgroupHeadroom(const std::string& cgroup_root,
                                      absl::string_view proc_self_cgroup);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_DEVICE_MEMORY_H_
