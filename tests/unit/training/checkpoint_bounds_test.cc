// CheckCheckpointBounds (worker/training/checkpoint_bounds.h): real
// checkpoints pass; each size a checkpoint declares beyond its bytes (a
// pickle string, a memo index, a storage's element count, a zip entry's
// stored or inflated size, a truncated archive) is refused naming the entry
// and both sizes; and a worker resuming such a checkpoint refuses it without
// touching the memory it declares.
#include "worker/training/checkpoint_bounds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/unit/training/synthetic/small_trial.h"
#include "tests/unit/training/synthetic/synthetic_runs.h"
#include "worker/training/checkpoint.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

using ::testing::HasSubstr;

TrialOptions SmallTrial() {
  return testing::SmallSyntheticTrial(Parameterization::kFafo);
}

const std::string& SyntheticCheckpoint() {
  static const std::string* bytes = [] {
    testing::HandBackAt observer(6);
    absl::StatusOr<TrialOutcome> out = RunTrial(SmallTrial(), &observer);
    EXPECT_TRUE(out.ok()) << out.status();
    return new std::string(out.ok() ? out->checkpoint : "");
  }();
  return *bytes;
}

std::string TextStyleCheckpoint() {
  CheckpointWriter w(3);
  w.Int("step", 17);
  w.Doubles("sums", {1.5, 2.5});
  w.Ids("order", {2, 0, 1});
  torch::nn::Linear module(3, 2);
  torch::serialize::OutputArchive m;
  module->save(m);
  w.Archive("model", m);
  return w.Bytes();
}

// Replaces the one occurrence of `from` in `bytes` by `to` (same length).
std::string Patch(std::string bytes, const std::string& from,
                  const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  const size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << "pattern not in the checkpoint";
  EXPECT_EQ(bytes.find(from, at + 1), std::string::npos) << "pattern twice";
  if (at != std::string::npos) bytes.replace(at, from.size(), to);
  return bytes;
}

std::string Le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// Sets the uncompressed size (`which` 24) or compressed size (20) that the
// central directory declares for entry `name`.
std::string SetDirectorySize(std::string bytes, const std::string& name,
                             int which, uint32_t size) {
  const std::string header("PK\x01\x02", 4);
  for (size_t at = bytes.find(header); at != std::string::npos;
       at = bytes.find(header, at + 1)) {
    if (bytes.compare(at + 46, name.size(), name) == 0 &&
        bytes[at + 46 + name.size() - 1] == name.back()) {
      bytes.replace(at + which, 4, Le32(size));
      return bytes;
    }
  }
  ADD_FAILURE() << name << " is not in the central directory";
  return bytes;
}

uint32_t DirectorySize(const std::string& bytes, const std::string& name,
                       int which) {
  const std::string header("PK\x01\x02", 4);
  for (size_t at = bytes.find(header); at != std::string::npos;
       at = bytes.find(header, at + 1)) {
    if (bytes.compare(at + 46, name.size(), name) == 0) {
      uint32_t v = 0;
      std::memcpy(&v, bytes.data() + at + which, 4);
      return v;
    }
  }
  ADD_FAILURE() << name << " is not in the central directory";
  return 0;
}

void ExpectRefused(const absl::Status& s, const std::string& names) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(names));
}

TEST(CheckpointBoundsTest, RealCheckpointsPass) {
  ASSERT_FALSE(SyntheticCheckpoint().empty());
  EXPECT_TRUE(CheckCheckpointBounds(SyntheticCheckpoint()).ok())
      << CheckCheckpointBounds(SyntheticCheckpoint());
  const std::string text = TextStyleCheckpoint();
  EXPECT_TRUE(CheckCheckpointBounds(text).ok()) << CheckCheckpointBounds(text);
}

TEST(CheckpointBoundsTest, APickleStringLongerThanItsBytesIsRefused) {
  const std::string bad =
      Patch(SyntheticCheckpoint(), std::string("X\x06\0\0\0format", 11),
            "X" + Le32(0x7fffffff) + "format");
  const absl::Status s = CheckCheckpointBounds(bad);
  ExpectRefused(s, "pickle 'archive/data.pkl' declares 2147483647 bytes");
}

TEST(CheckpointBoundsTest, AMemoIndexBeyondTheNextIsRefused) {
  // BINUNICODE 'format' becomes NONE, LONG_BINPUT 4000000000, NONE x5.
  const std::string bad =
      Patch(SyntheticCheckpoint(), std::string("X\x06\0\0\0format", 11),
            "Nr" + Le32(4000000000u) + "NNNNN");
  ExpectRefused(CheckCheckpointBounds(bad), "sets memo 4000000000");
}

TEST(CheckpointBoundsTest, AStorageCountBeyondItsEntryIsRefused) {
  // The first storage: ("storage", FloatStorage, "0", "cpu", 576), a 24x24
  // float weight; 65535 floats do not fit in its 2304 bytes.
  const std::string bad = Patch(SyntheticCheckpoint(),
                                std::string("cpu"
                                            "q\x07"
                                            "M\x40\x02"
                                            "t",
                                            9),
                                std::string("cpu"
                                            "q\x07"
                                            "M\xff\xff"
                                            "t",
                                            9));
  ExpectRefused(CheckCheckpointBounds(bad),
                "declares 65535 elements of 4 bytes in 'archive/data/0', "
                "which holds 2304 bytes");
}

TEST(CheckpointBoundsTest, AnUnknownOpcodeIsRefused) {
  const std::string bad =
      Patch(SyntheticCheckpoint(), std::string("X\x06\0\0\0format", 11),
            std::string("P") + std::string("\x06\0\0\0format", 10));
  ExpectRefused(CheckCheckpointBounds(bad), "which LibTorch does not read");
}

TEST(CheckpointBoundsTest, AStoredEntryDeclaringMoreThanItHoldsIsRefused) {
  const std::string bad = SetDirectorySize(SyntheticCheckpoint(),
                                           "archive/data/0", 24, 0xfffffff0u);
  ExpectRefused(CheckCheckpointBounds(bad),
                "zip entry 'archive/data/0' is stored (2304 bytes) but "
                "declares 4294967280 bytes");
  const std::string past = SetDirectorySize(
      SetDirectorySize(SyntheticCheckpoint(), "archive/data/0", 24, 1u << 30),
      "archive/data/0", 20, 1u << 30);
  ExpectRefused(CheckCheckpointBounds(past),
                "zip entry 'archive/data/0' declares 1073741824 bytes");
}

TEST(CheckpointBoundsTest, ADeflatedEntryOfAnotherSizeIsRefused) {
  const std::string& good = SyntheticCheckpoint();
  const std::string name = "archive/code/__torch__.py";
  const uint32_t size = DirectorySize(good, name, 24);
  ASSERT_GT(size, 0u);
  const std::string bad = SetDirectorySize(good, name, 24, size + 1);
  ExpectRefused(CheckCheckpointBounds(bad),
                absl::StrCat("zip entry '", name, "' declares ", size + 1,
                             " bytes but inflates to ", size));
}

TEST(CheckpointBoundsTest, TruncatedOrForeignBytesAreRefused) {
  const std::string& good = SyntheticCheckpoint();
  ExpectRefused(CheckCheckpointBounds(good.substr(0, good.size() / 2)),
                "checkpoint: ");
  ExpectRefused(CheckCheckpointBounds(good.substr(0, 10)),
                "shorter than a zip end record");
  ExpectRefused(CheckCheckpointBounds(std::string(4096, 'x')),
                "no zip end record");
}

TEST(CheckpointBoundsTest, TheTextTrainersReaderRefusesBeforeLibTorchReads) {
  const std::string bad =
      Patch(TextStyleCheckpoint(), std::string("X\x06\0\0\0format", 11),
            "X" + Le32(0x7fffffff) + "format");
  absl::StatusOr<std::unique_ptr<CheckpointReader>> r =
      CheckpointReader::Open(bad, {3});
  ASSERT_FALSE(r.ok());
  ExpectRefused(r.status(), "declares 2147483647 bytes");
}

long PeakResidentKiB() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A worker resuming a checkpoint whose pickle declares a 2 GiB string: the
// trial is refused as bad input, and the process's peak resident memory
// does not grow by the declared size (LibTorch alone zero-fills it first).
TEST(CheckpointBoundsTest, AResumeRefusesWithoutTouchingTheDeclaredMemory) {
  const std::string bad =
      Patch(SyntheticCheckpoint(), std::string("X\x06\0\0\0format", 11),
            "X" + Le32(0x7fffffff) + "format");
  const long before = PeakResidentKiB();
  absl::StatusOr<TrialOutcome> out =
      RunTrial(SmallTrial(), nullptr, torch::kCPU, bad);
  const long grown_mib = (PeakResidentKiB() - before) / 1024;
  ASSERT_FALSE(out.ok());
  ExpectRefused(out.status(), "declares 2147483647 bytes");
  EXPECT_LT(grown_mib, 256)
      << "peak resident memory grew by " << grown_mib << " MiB";
}

}  // namespace
}  // namespace qkov::training
