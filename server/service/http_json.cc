#include "server/service/http_json.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"

namespace qkov::service {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(m, &out, options);
  if (!st.ok())
    return absl::InternalError(absl::StrCat("JSON: ", st.ToString()));
  return out;
}

}  // namespace qkov::service
