// Proto enums named by their descriptors (common/proto_enums.h).
#include "common/proto_enums.h"

#include <gtest/gtest.h>

#include "qkov/v1/config.pb.h"

namespace qkov {
namespace {

namespace v1 = ::qkov::v1;

TEST(ProtoEnumsTest, ListsTheValuesOtherThanUnspecifiedInOrder) {
  EXPECT_EQ(EnumValueList<v1::Parameterization>(), "FAFO, FACO, CAFO or CACO");
  EXPECT_EQ(EnumValueList<v1::OptimizerKind>(), "SGD or ADAMW");
  EXPECT_EQ(OneOf({"a"}), "a");
  EXPECT_EQ(OneOf({}), "");
}

enum class Kind { kSgd, kAdamW };

TEST(ProtoEnumsTest, ConvertsThroughTheTableAndNamesWhatItTakes) {
  const auto convert = [](v1::OptimizerKind k) {
    return FromProtoEnum<Kind>(
        k, "training.optimizer.kind",
        {{v1::SGD, Kind::kSgd}, {v1::ADAMW, Kind::kAdamW}});
  };
  EXPECT_EQ(*convert(v1::SGD), Kind::kSgd);
  EXPECT_EQ(*convert(v1::ADAMW), Kind::kAdamW);
  for (int bad : {0, 7}) {
    absl::StatusOr<Kind> k = convert(static_cast<v1::OptimizerKind>(bad));
    EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(k.status().message(),
              absl::StrCat("training.optimizer.kind: unknown value ", bad,
                           " (expected SGD or ADAMW)"));
  }
}

}  // namespace
}  // namespace qkov
