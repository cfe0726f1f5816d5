// Conversions both halves of the Coordinator use (coordinator.cc: the
// client API; coordinator_workers.cc: the worker API).
#ifndef QKOV_SERVER_CORE_CONVERT_H_
#define QKOV_SERVER_CORE_CONVERT_H_

#include <google/protobuf/duration.pb.h>
#include <google/protobuf/message.h>
#include <google/protobuf/timestamp.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace qkov::core {

inline google::protobuf::Timestamp ToTimestamp(int64_t ms) {
  return google::protobuf::util::TimeUtil::MillisecondsToTimestamp(ms);
}

inline google::protobuf::Duration ToDuration(absl::Duration d) {
  return google::protobuf::util::TimeUtil::MillisecondsToDuration(
      absl::ToInt64Milliseconds(d));
}

// A config or message stored as JSON by this server; DATA_LOSS when it does
// not parse.
inline absl::Status ParseJson(const std::string& json,
                              google::protobuf::Message* m) {
  auto s = google::protobuf::util::JsonStringToMessage(json, m);
  if (!s.ok())
    return absl::DataLossError(
        absl::StrCat("stored JSON does not parse: ", s.ToString()));
  return absl::OkStatus();
}

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_CONVERT_H_
