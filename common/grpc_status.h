// The one place where absl::Status and grpc::Status meet. Codes map 1:1;
// messages are kept as they are.
#ifndef QKOV_COMMON_GRPC_STATUS_H_
#define QKOV_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qkov {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// For service handlers: the error as a grpc::Status, or the value moved into
// *response and OK.
template <typename T, typename R>
grpc::Status Reply(absl::StatusOr<T> result, R* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace qkov

#endif  // QKOV_COMMON_GRPC_STATUS_H_
