// The trial checkpoints of the text and SQuAD trainers
// (worker/training/checkpoint.h): every kind of entry round-trips, a format
// the trainer does not read is refused by number, truncated bytes are
// refused (INVALID_ARGUMENT) and a missing entry throws rather than reading
// garbage.
#include "worker/training/checkpoint.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace qkov::training {
namespace {

TEST(CheckpointTest, EveryKindOfEntryRoundTrips) {
  std::mt19937_64 rng(7);
  rng.discard(1000);
  torch::nn::Linear module(3, 2);
  CheckpointWriter w(5);
  w.Int("step", 1234);
  w.Double("loss", 0.125);
  w.Doubles("sums", {1.5, -2.25});
  w.Tensor("rows", torch::arange(4, torch::kInt64));
  w.Ids("order", {3, 1, 2, 0});
  w.Rng("rng", rng);
  torch::serialize::OutputArchive m;
  module->save(m);
  w.Archive("model", m);
  const std::string bytes = w.Bytes();

  absl::StatusOr<std::unique_ptr<CheckpointReader>> r =
      CheckpointReader::Open(bytes, {4, 5});
  ASSERT_TRUE(r.ok()) << r.status();
  CheckpointReader& c = **r;
  EXPECT_EQ(c.format(), 5);
  EXPECT_EQ(c.Int("step"), 1234);
  EXPECT_EQ(c.Double("loss"), 0.125);
  EXPECT_EQ(c.Doubles("sums"), (std::vector<double>{1.5, -2.25}));
  EXPECT_TRUE(torch::equal(c.Tensor("rows"), torch::arange(4, torch::kInt64)));
  EXPECT_EQ(c.Ids("order"), (std::vector<int64_t>{3, 1, 2, 0}));
  std::mt19937_64 back;
  c.Rng("rng", &back);
  EXPECT_EQ(back, rng);
  EXPECT_EQ(back(), rng());
  torch::nn::Linear loaded(3, 2);
  torch::serialize::InputArchive mi;
  c.Archive("model", mi);
  loaded->load(mi);
  EXPECT_TRUE(torch::equal(loaded->weight, module->weight));
}

TEST(CheckpointTest, AFormatTheTrainerDoesNotReadIsRefusedByNumber) {
  CheckpointWriter w(1);
  const std::string bytes = w.Bytes();
  absl::StatusOr<std::unique_ptr<CheckpointReader>> r =
      CheckpointReader::Open(bytes, {2, 3});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "checkpoint format 1 is not 2 or 3");
}

TEST(CheckpointTest, TruncatedBytesAreRefusedAndMissingEntriesThrow) {
  CheckpointWriter w(2);
  w.Int("step", 1);
  const std::string bytes = w.Bytes();
  absl::StatusOr<std::unique_ptr<CheckpointReader>> cut =
      CheckpointReader::Open(bytes.substr(0, bytes.size() / 2), {2});
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument)
      << cut.status();
  absl::StatusOr<std::unique_ptr<CheckpointReader>> r =
      CheckpointReader::Open(bytes, {2});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THROW((*r)->Int("seen"), std::exception);
}

}  // namespace
}  // namespace qkov::training
