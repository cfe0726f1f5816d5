// Process-wide settings of LibTorch and the BLAS it calls: intra-op threads,
// the handling of subnormal floats, and which BLAS it is (for provenance).
#ifndef QKOV_WORKER_TRAINING_CPU_RUNTIME_H_
#define QKOV_WORKER_TRAINING_CPU_RUNTIME_H_

#include <string>

namespace qkov::training {

// Sets LibTorch's intra-op threads to `n` (torch::set_num_threads) and, when
// the BLAS that LibTorch calls is OpenBLAS, OpenBLAS's threads to `n` too.
// Debian's libopenblas0-pthread keeps a pool of its own (one thread per
// core) that torch::set_num_threads does not reach; its idle threads spin in
// sched_yield between products, so two one-thread workers on two cores
// share them with each other's spinning helpers (docs/PERFORMANCE.md,
// "OpenBLAS's helper threads"). Returns OpenBLAS's thread count afterwards,
// or -1 where the BLAS is not OpenBLAS.
int SetTrainingThreads(int n);

// Sets (or clears) flush-to-zero and denormals-are-zero, the CPU's mode in
// which a float result below FLT_MIN (1.18e-38) is stored as zero and a
// subnormal operand is read as zero, for training: on the calling thread,
// on LibTorch's intra-op threads, on threads created later (they inherit
// the mode from the thread that creates them), and, where the BLAS is
// OpenBLAS, on OpenBLAS's helper threads, which exist from the library's
// load: they are shut down here, and OpenBLAS starts them again from the
// thread that runs its next threaded product. Call it from the thread that
// trains, before training, and again after raising the thread count; it is
// not safe while another thread runs a BLAS product.
//
// Why: some Intel cores take a microcode assist of about a hundred cycles
// on each operation that meets a subnormal, and the synthetic task's small
// initial weights make such values in the factorized models' backward
// products (docs/PERFORMANCE.md, "Subnormal floats"). The values flushed are
// below float precision next to any normal-sized term they are summed with.
// Returns false, changing nothing, where the CPU has no such mode (neither
// x86-64 nor AArch64).
bool SetFlushDenormal(bool on);

// Whether the calling thread has flush-to-zero and denormals-are-zero set.
bool FlushDenormalActive();

// The BLAS, as LibTorch's build reports it (BLAS_INFO in at::show_config()),
// else OpenBLAS's own configuration string ("OpenBLAS 0.3.21 DYNAMIC_ARCH
// ..."), else "unknown". Debian's LibTorch reports no BLAS_INFO.
std::string BlasDescription();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_CPU_RUNTIME_H_
