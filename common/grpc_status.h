// The one place where absl::Status and grpc::Status meet. Codes map 1:1;
// messages are kept as they are.
#ifndef QKOV_COMMON_GRPC_STATUS_H_
#define QKOV_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace qkov {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace qkov

#endif  // QKOV_COMMON_GRPC_STATUS_H_
