#include "worker/training/cpu_runtime.h"

#include <torch/torch.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

// OpenBLAS's own controls, resolved at run time from the loaded BLAS (weak:
// null where LibTorch was built against another BLAS, such as MKL).
extern "C" {
void openblas_set_num_threads(int n) __attribute__((weak));
int openblas_get_num_threads() __attribute__((weak));
char* openblas_get_config() __attribute__((weak));
// Stops OpenBLAS's helper threads; its next threaded product starts them
// again (what OpenBLAS's own fork handler does).
int blas_thread_shutdown_() __attribute__((weak));
// What GCC compiles `#pragma omp parallel num_threads(n)` to, resolved from
// the OpenMP runtime LibTorch loaded (null where it loaded none). Called
// directly, so that this file needs no -fopenmp of its own and cannot bring
// a second OpenMP runtime.
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads,
                   unsigned flags) __attribute__((weak));
}

namespace qkov::training {

int SetTrainingThreads(int n) {
  torch::set_num_threads(n);
  if (openblas_set_num_threads == nullptr ||
      openblas_get_num_threads == nullptr) {
    return -1;
  }
  openblas_set_num_threads(n);
  return openblas_get_num_threads();
}

namespace {

#if defined(__x86_64__) || defined(__i386__)
// MXCSR: bit 15 flush-to-zero, bit 6 denormals-are-zero.
constexpr unsigned kFlushBits = 0x8040;
bool SetThreadMode(bool on) {
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(on ? (csr | kFlushBits) : (csr & ~kFlushBits));
  return true;
}
bool ThreadMode() { return (_mm_getcsr() & kFlushBits) == kFlushBits; }
#elif defined(__aarch64__)
// FPCR bit 24 (FZ) flushes both subnormal results and operands.
constexpr uint64_t kFlushBit = uint64_t{1} << 24;
uint64_t Fpcr() {
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}
bool SetThreadMode(bool on) {
  const uint64_t fpcr = on ? (Fpcr() | kFlushBit) : (Fpcr() & ~kFlushBit);
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
  return true;
}
bool ThreadMode() { return (Fpcr() & kFlushBit) != 0; }
#else
bool SetThreadMode(bool) { return false; }
bool ThreadMode() { return false; }
#endif

void SetModeOn(void*) { SetThreadMode(true); }
void SetModeOff(void*) { SetThreadMode(false); }

}  // namespace

bool SetFlushDenormal(bool on) {
  if (!SetThreadMode(on)) return false;
  // LibTorch's intra-op threads that exist already: where its parallel
  // backend is OpenMP, one parallel region of the pool's size runs the
  // setting on every thread of the team that LibTorch's regions reuse.
  if (GOMP_parallel != nullptr) {
    GOMP_parallel(on ? &SetModeOn : &SetModeOff, nullptr,
                  static_cast<unsigned>(at::get_num_threads()), 0);
  }
  // OpenBLAS starts its helpers again, at the same count, from the thread
  // of its next threaded product; they inherit that thread's mode.
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
  return true;
}

bool FlushDenormalActive() { return ThreadMode(); }

std::string BlasDescription() {
  for (absl::string_view line : absl::StrSplit(at::show_config(), '\n')) {
    for (absl::string_view part : absl::StrSplit(line, ',')) {
      part = absl::StripAsciiWhitespace(part);
      if (absl::StartsWith(part, "BLAS_INFO="))
        return std::string(part.substr(10));
    }
  }
  if (openblas_get_config != nullptr) {
    const char* config = openblas_get_config();
    if (config != nullptr)
      return std::string(absl::StripAsciiWhitespace(config));
  }
  return "unknown";
}

}  // namespace qkov::training
