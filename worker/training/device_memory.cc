#include "worker/training/device_memory.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace qkov::training {
namespace {

// The file's text; nullopt when it cannot be opened.
std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file holding one integer (cgroup counters); nullopt when it is missing
// or holds something else ("max").
std::optional<int64_t> ReadCounter(const std::string& path) {
  std::optional<std::string> text = ReadSmallFile(path);
  if (!text) return std::nullopt;
  int64_t value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &value))
    return std::nullopt;
  return value;
}

// The limit file's value minus the usage file's (at least 0), when a limit
// is set (below 2^62: cgroup v1 writes "no limit" as a page-rounded
// 2^63 - 1).
std::optional<int64_t> Headroom(const std::string& limit_path,
                                const std::string& usage_path) {
  std::optional<int64_t> limit = ReadCounter(limit_path);
  if (!limit || *limit >= (int64_t{1} << 62)) return std::nullopt;
  const int64_t usage = ReadCounter(usage_path).value_or(0);
  return std::max<int64_t>(0, *limit - usage);
}

void KeepLeast(std::optional<int64_t> h, std::optional<int64_t>* least) {
  if (h && (!*least || *h < **least)) *least = h;
}

// CUDA driver API, as libcuda.so.1 exports it (cuda.h is not needed: the
// types are plain integers and pointers).
using CuInit = int (*)(unsigned);
using CuDeviceGet = int (*)(int*, int);
using CuPrimaryCtxRetain = int (*)(void**, int);
using CuPrimaryCtxRelease = int (*)(int);
using CuCtxPush = int (*)(void*);
using CuCtxPop = int (*)(void**);
using CuMemGetInfo = int (*)(size_t*, size_t*);

// The driver's (free, total) bytes of device `ordinal`.
absl::StatusOr<std::pair<int64_t, int64_t>> CudaMemInfo(int ordinal) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(
        absl::StrCat("cannot load the CUDA driver (libcuda.so.1): ",
                     why != nullptr ? why : "not found"));
  }
  auto init = reinterpret_cast<CuInit>(dlsym(lib, "cuInit"));
  auto device_get = reinterpret_cast<CuDeviceGet>(dlsym(lib, "cuDeviceGet"));
  auto retain = reinterpret_cast<CuPrimaryCtxRetain>(
      dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto release = reinterpret_cast<CuPrimaryCtxRelease>(
      dlsym(lib, "cuDevicePrimaryCtxRelease_v2"));
  auto push = reinterpret_cast<CuCtxPush>(dlsym(lib, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<CuCtxPop>(dlsym(lib, "cuCtxPopCurrent_v2"));
  auto mem_get_info =
      reinterpret_cast<CuMemGetInfo>(dlsym(lib, "cuMemGetInfo_v2"));
  if (!init || !device_get || !retain || !release || !push || !pop ||
      !mem_get_info) {
    dlclose(lib);
    return absl::UnavailableError(
        "the CUDA driver (libcuda.so.1) lacks cuMemGetInfo_v2 or the primary "
        "context calls");
  }
  int device = 0;
  void* context = nullptr;
  int rc = init(0);
  if (rc == 0) rc = device_get(&device, ordinal);
  if (rc == 0) rc = retain(&context, device);
  size_t free = 0, total = 0;
  if (rc == 0) {
    rc = push(context);
    if (rc == 0) {
      rc = mem_get_info(&free, &total);
      void* popped = nullptr;
      pop(&popped);
    }
    release(device);
  }
  dlclose(lib);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("the CUDA driver could not report device ", ordinal,
                     "'s memory (CUresult ", rc, ")"));
  }
  return std::make_pair(static_cast<int64_t>(free),
                        static_cast<int64_t>(total));
}

}  // namespace

absl::StatusOr<int64_t> ParseMemAvailable(absl::string_view meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, "MemAvailable:")) continue;
    line = absl::StripAsciiWhitespace(line);
    const bool kib = absl::ConsumeSuffix(&line, "kB");
    int64_t value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value) ||
        value < 0) {
      break;
    }
    return kib ? value * 1024 : value;
  }
  return absl::UnavailableError("/proc/meminfo: no readable MemAvailable line");
}

std::optional<int64_t> CgroupHeadroom(const std::string& cgroup_root,
                                      absl::string_view proc_self_cgroup) {
  std::optional<int64_t> least;
  for (absl::string_view line : absl::StrSplit(proc_self_cgroup, '\n')) {
    // "hierarchy-id:controllers:path"
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3 || f[2].empty() || f[2][0] != '/') continue;
    const bool v2 = f[0] == "0" && f[1].empty();
    bool memory = v2;
    for (absl::string_view c : absl::StrSplit(f[1], ','))
      memory = memory || c == "memory";
    if (!memory) continue;
    // The group and its ancestors: a limit set on any of them applies.
    const std::string base = v2 ? cgroup_root : cgroup_root + "/memory";
    std::string path(f[2]);
    while (true) {
      const std::string dir = base + (path == "/" ? std::string() : path);
      KeepLeast(v2 ? Headroom(dir + "/memory.max", dir + "/memory.current")
                   : Headroom(dir + "/memory.limit_in_bytes",
                              dir + "/memory.usage_in_bytes"),
                &least);
      if (path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  return least;
}

absl::StatusOr<int64_t> AvailableMemoryBytes(const torch::Device& device) {
  if (device.is_cuda()) {
    absl::StatusOr<std::pair<int64_t, int64_t>> info =
        CudaMemInfo(device.has_index() ? device.index() : 0);
    if (!info.ok()) return info.status();
    return info->first;
  }
  if (!device.is_cpu()) {
    return absl::UnavailableError(
        absl::StrCat("no memory figure for device ", device.str()));
  }
  std::optional<std::string> meminfo = ReadSmallFile("/proc/meminfo");
  if (!meminfo) return absl::UnavailableError("cannot read /proc/meminfo");
  absl::StatusOr<int64_t> available = ParseMemAvailable(*meminfo);
  if (!available.ok()) return available.status();
  if (std::optional<std::string> groups = ReadSmallFile("/proc/self/cgroup")) {
    if (std::optional<int64_t> headroom =
            CgroupHeadroom("/sys/fs/cgroup", *groups)) {
      return std::min(*available, *headroom);
    }
  }
  return *available;
}

absl::StatusOr<int64_t> MemoryInUseBytes(const torch::Device& device) {
  if (device.is_cuda()) {
    absl::StatusOr<std::pair<int64_t, int64_t>> info =
        CudaMemInfo(device.has_index() ? device.index() : 0);
    if (!info.ok()) return info.status();
    return info->second - info->first;
  }
  if (!device.is_cpu()) {
    return absl::UnavailableError(
        absl::StrCat("no memory figure for device ", device.str()));
  }
  // statm: size resident shared ... in pages.
  std::optional<std::string> statm = ReadSmallFile("/proc/self/statm");
  std::vector<absl::string_view> fields;
  if (statm) fields = absl::StrSplit(*statm, ' ', absl::SkipEmpty());
  int64_t pages = 0;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &pages))
    return absl::UnavailableError("cannot read /proc/self/statm");
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace qkov::training
