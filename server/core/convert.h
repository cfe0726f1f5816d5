// Conversions between the store's records and the API's messages that the
// Coordinator's subjects (sweep_control.cc, result_reader.cc,
// worker_desk.cc) and its result rows (result_rows.cc) share.
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
#include "qkov/v1/sweep.pb.h"

namespace qkov::core {

// "queued" <-> qkov.v1.QUEUED etc. (convert.cc).
qkov::v1::TrialState TrialStateFromString(const std::string& state);
std::string TrialStateToString(qkov::v1::TrialState state);

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
