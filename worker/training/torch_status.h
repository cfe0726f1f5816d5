// Where LibTorch's exceptions become a Status: every call into training that
// can throw (RunTrials, a checkpoint's parse, a device name) goes through
// CatchTorchErrors, and nothing else in worker/ catches c10::Error.
#ifndef QKOV_WORKER_TRAINING_TORCH_STATUS_H_
#define QKOV_WORKER_TRAINING_TORCH_STATUS_H_

#include <c10/util/Exception.h>
#include <torch/types.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace qkov::training {

// RESOURCE_EXHAUSTED for a failed allocation (CPU "can't allocate memory",
// CUDA "out of memory"), which the worker reports as a permanent failure;
// INTERNAL for anything else. The message is LibTorch's, without backtrace.
absl::Status TorchErrorStatus(const c10::Error& e);

// Runs `body` (returning absl::StatusOr<T> or absl::Status) and returns what
// it returns, or what it threw as a Status. `context` non-empty: the body
// reads an input (a checkpoint), and a LibTorch error, or an allocation or
// length error, means the input was bad: INVALID_ARGUMENT "CONTEXT:
// message". (LibTorch's archive reader allocates lengths it reads from the
// file before it reads that many bytes: a damaged checkpoint can ask for
// gigabytes.) Empty: TorchErrorStatus; a std::bad_alloc is
// RESOURCE_EXHAUSTED, any other std::exception INTERNAL.
template <typename Body>
auto CatchTorchErrors(Body&& body, const std::string& context = "")
    -> decltype(body()) {
  try {
    return std::forward<Body>(body)();
  } catch (const c10::Error& e) {
    if (!context.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(context, ": ", e.what_without_backtrace()));
    }
    return TorchErrorStatus(e);
  } catch (const std::bad_alloc& e) {
    if (!context.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(context, ": a size read from it cannot be allocated (",
                       e.what(), ")"));
    }
    return absl::ResourceExhaustedError(
        absl::StrCat("training: allocation failed (", e.what(), ")"));
  } catch (const std::length_error& e) {
    if (!context.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, ": a length read from it is too large (", e.what(), ")"));
    }
    return absl::InternalError(absl::StrCat("training: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("training: ", e.what()));
  }
}

// "cpu", "cuda", "cuda:1": the device, or INVALID_ARGUMENT naming `flag`.
absl::StatusOr<torch::Device> ParseDevice(const std::string& name,
                                          const std::string& flag);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TORCH_STATUS_H_
