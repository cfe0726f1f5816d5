// absl::Status <-> grpc::Status: every code maps to its namesake and back,
// messages unchanged; Reply moves the value or returns the error.
#include "common/grpc_status.h"

#include <gtest/gtest.h>

namespace qkov {
namespace {

TEST(GrpcStatusTest, EveryCodeMapsToItsNamesakeAndBack) {
  for (int code = 0; code <= 16; ++code) {
    const absl::Status s(static_cast<absl::StatusCode>(code),
                         code == 0 ? "" : "field: what is wrong");
    const grpc::Status g = ToGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), code);
    EXPECT_EQ(g.error_message(), std::string(s.message()));
    EXPECT_EQ(FromGrpcStatus(g), s);
  }
}

TEST(GrpcStatusTest, ReplyMovesTheValueOrReturnsTheError) {
  std::string out = "untouched";
  grpc::Status g = Reply(absl::StatusOr<std::string>("value"), &out);
  EXPECT_TRUE(g.ok());
  EXPECT_EQ(out, "value");
  out = "untouched";
  g = Reply(absl::StatusOr<std::string>(absl::NotFoundError("no sweep")), &out);
  EXPECT_EQ(g.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(g.error_message(), "no sweep");
  EXPECT_EQ(out, "untouched");
}

}  // namespace
}  // namespace qkov
