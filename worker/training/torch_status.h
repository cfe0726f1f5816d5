// How LibTorch's exceptions become a Status around training (RunTrials,
// RunFixedAttention). A checkpoint that does not parse is the one other
// catch in worker/training: INVALID_ARGUMENT, in trainer.cc.
#ifndef QKOV_WORKER_TRAINING_TORCH_STATUS_H_
#define QKOV_WORKER_TRAINING_TORCH_STATUS_H_

#include <c10/util/Exception.h>

#include "absl/status/status.h"

namespace qkov::training {

// RESOURCE_EXHAUSTED for a failed allocation (CPU "can't allocate memory",
// CUDA "out of memory"), which the worker reports as a permanent failure;
// INTERNAL for anything else. The message is LibTorch's, without backtrace.
absl::Status TorchErrorStatus(const c10::Error& e);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TORCH_STATUS_H_
