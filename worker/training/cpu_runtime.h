// Process-wide settings of LibTorch and the BLAS it calls: intra-op threads,
// and which BLAS it is (for provenance).
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

// The BLAS, as LibTorch's build reports it (BLAS_INFO in at::show_config()),
// else OpenBLAS's own configuration string ("OpenBLAS 0.3.21 DYNAMIC_ARCH
// ..."), else "unknown". Debian's LibTorch reports no BLAS_INFO.
std::string BlasDescription();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_CPU_RUNTIME_H_
