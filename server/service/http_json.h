// Protobuf messages as the dashboard's JSON API writes them: every field,
// the proto's own field names (server/service/http_service.h).
#ifndef QKOV_SERVER_SERVICE_HTTP_JSON_H_
#define QKOV_SERVER_SERVICE_HTTP_JSON_H_

#include <google/protobuf/message.h>

#include <string>

#include "absl/status/statusor.h"

namespace qkov::service {

// INTERNAL when the message cannot be written (it always can in practice).
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m);

// The task table (common/task_info.h) as /api/v1/tasks serves it: one
// object per task with its name, proto kind (TASK_...), settings field,
// axes, results, curves and default views; the dashboard chooses its
// panels and figures from it.
std::string TasksJson();

// A reply's JSON, or its error.
template <typename T>
absl::StatusOr<std::string> JsonOf(absl::StatusOr<T> reply) {
  if (!reply.ok()) return reply.status();
  return ToJson(*reply);
}

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_HTTP_JSON_H_
