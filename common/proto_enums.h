// Proto enums at the project's boundaries, named by their descriptors: the
// list of a type's values for messages ("FAFO, FACO, CAFO or CACO"), and the
// conversion of a wire value to a plain C++ enum through one table, whose
// refusal names the field and the values it takes. Header-only; the user
// links qkov_proto.
#ifndef QKOV_COMMON_PROTO_ENUMS_H_
#define QKOV_COMMON_PROTO_ENUMS_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/generated_enum_reflection.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace qkov {

// "A, B or C" (", " between, " or " before the last).
inline std::string OneOf(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// The names of `E`'s values other than 0 (UNSPECIFIED), in declaration
// order, as OneOf joins them: EnumValueList<v1::Parameterization>() is
// "FAFO, FACO, CAFO or CACO".
template <typename E>
std::string EnumValueList() {
  const google::protobuf::EnumDescriptor* type =
      google::protobuf::GetEnumDescriptor<E>();
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() != 0) names.push_back(type->value(i)->name());
  }
  return OneOf(names);
}

// `value` through `table` (wire value -> C++ value); INVALID_ARGUMENT
// "FIELD: unknown value N (expected A or B)" for a value the table lacks,
// naming the table's values by the descriptor.
template <typename To, typename From>
absl::StatusOr<To> FromProtoEnum(
    From value, absl::string_view field,
    std::initializer_list<std::pair<From, To>> table) {
  std::vector<std::string> names;
  for (const auto& [from, to] : table) {
    if (from == value) return to;
    names.push_back(google::protobuf::GetEnumDescriptor<From>()
                        ->FindValueByNumber(from)
                        ->name());
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": unknown value ", static_cast<int>(value),
                   " (expected ", OneOf(names), ")"));
}

}  // namespace qkov

#endif  // QKOV_COMMON_PROTO_ENUMS_H_
