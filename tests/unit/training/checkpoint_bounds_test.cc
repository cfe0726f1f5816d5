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
#include <zlib.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/unit/tasks/synthetic/small_trial.h"
#include "tests/unit/tasks/synthetic/synthetic_runs.h"
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

// A torch archive's entries, inflated, in the central directory's order.
std::vector<std::pair<std::string, std::string>> Entries(
    const std::string& zip) {
  auto le = [&](size_t at, int width) {
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i)
      v = (v << 8) | static_cast<uint8_t>(zip[at + i]);
    return v;
  };
  const size_t end = zip.rfind(std::string("PK\x05\x06", 4));
  std::vector<std::pair<std::string, std::string>> out;
  size_t p = le(end + 16, 4);
  for (uint64_t i = 0, n = le(end + 10, 2); i < n; ++i) {
    const int method = static_cast<int>(le(p + 10, 2));
    const uint64_t compressed = le(p + 20, 4), size = le(p + 24, 4);
    const uint64_t name_length = le(p + 28, 2);
    const uint64_t local = le(p + 42, 4);
    std::string name = zip.substr(p + 46, name_length);
    const size_t data = local + 30 + le(local + 26, 2) + le(local + 28, 2);
    std::string content(size, '\0');
    if (method == 0) {
      content = zip.substr(data, size);
    } else {
      z_stream z{};
      inflateInit2(&z, -MAX_WBITS);
      z.next_in =
          reinterpret_cast<Bytef*>(const_cast<char*>(zip.data()) + data);
      z.avail_in = static_cast<uInt>(compressed);
      z.next_out = reinterpret_cast<Bytef*>(content.data());
      z.avail_out = static_cast<uInt>(size);
      EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END) << name;
      inflateEnd(&z);
    }
    out.emplace_back(std::move(name), std::move(content));
    p += 46 + name_length + le(p + 30, 2) + le(p + 32, 2);
  }
  return out;
}

std::string Le32(uint32_t v);
std::string Le16(uint32_t v) { return Le32(v).substr(0, 2); }

// The archive with `name`'s content replaced (every entry stored, every
// CRC-32 and size true): a hostile checkpoint that is a valid zip.
std::string Rewrite(const std::string& zip, const std::string& name,
                    const std::string& content) {
  std::string out, directory;
  int count = 0;
  bool found = false;
  for (auto [entry, data] : Entries(zip)) {
    if (entry == name) {
      data = content;
      found = true;
    }
    const uint32_t crc = static_cast<uint32_t>(
        crc32_z(crc32(0L, Z_NULL, 0),
                reinterpret_cast<const Bytef*>(data.data()), data.size()));
    const uint32_t at = static_cast<uint32_t>(out.size());
    const std::string sizes = Le32(crc) +
                              Le32(static_cast<uint32_t>(data.size())) +
                              Le32(static_cast<uint32_t>(data.size()));
    out += std::string("PK\x03\x04", 4) + Le16(20) + Le16(0) + Le16(0) +
           Le32(0) + sizes + Le16(static_cast<uint32_t>(entry.size())) +
           Le16(0) + entry + data;
    directory += std::string("PK\x01\x02", 4) + Le16(20) + Le16(20) + Le16(0) +
                 Le16(0) + Le32(0) + sizes +
                 Le16(static_cast<uint32_t>(entry.size())) + Le16(0) + Le16(0) +
                 Le16(0) + Le16(0) + Le32(0) + Le32(at) + entry;
    ++count;
  }
  EXPECT_TRUE(found) << name << " is not in the archive";
  const uint32_t directory_at = static_cast<uint32_t>(out.size());
  out += directory;
  out += std::string("PK\x05\x06", 4) + Le16(0) + Le16(0) + Le16(count) +
         Le16(count) + Le32(static_cast<uint32_t>(directory.size())) +
         Le32(directory_at) + Le16(0);
  return out;
}

std::string Content(const std::string& zip, const std::string& name) {
  for (const auto& [entry, data] : Entries(zip))
    if (entry == name) return data;
  ADD_FAILURE() << name << " is not in the archive";
  return "";
}

// Replaces the one occurrence of `from` in entry `name` by `to`, keeping
// the archive a valid zip (CRC-32 and sizes true).
std::string PatchEntry(const std::string& zip, const std::string& name,
                       const std::string& from, const std::string& to) {
  std::string data = Content(zip, name);
  const size_t at = data.find(from);
  EXPECT_NE(at, std::string::npos) << "pattern not in " << name;
  EXPECT_EQ(data.find(from, at + 1), std::string::npos) << "pattern twice";
  if (at != std::string::npos) data.replace(at, from.size(), to);
  return Rewrite(zip, name, data);
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
  const std::string bad = PatchEntry(SyntheticCheckpoint(), "archive/data.pkl",
                                     std::string("X\x06\0\0\0format", 11),
                                     "X" + Le32(0x7fffffff) + "format");
  const absl::Status s = CheckCheckpointBounds(bad);
  ExpectRefused(s, "pickle 'archive/data.pkl' declares 2147483647 bytes");
}

TEST(CheckpointBoundsTest, AMemoIndexBeyondTheNextIsRefused) {
  // BINUNICODE 'format' becomes NONE, LONG_BINPUT 4000000000, NONE x5.
  const std::string bad = PatchEntry(SyntheticCheckpoint(), "archive/data.pkl",
                                     std::string("X\x06\0\0\0format", 11),
                                     "Nr" + Le32(4000000000u) + "NNNNN");
  ExpectRefused(CheckCheckpointBounds(bad), "sets memo 4000000000");
}

TEST(CheckpointBoundsTest, AStorageCountBeyondItsEntryIsRefused) {
  // The first storage: ("storage", FloatStorage, "0", "cpu", 576), a 24x24
  // float weight; 65535 floats do not fit in its 2304 bytes.
  const std::string bad = PatchEntry(SyntheticCheckpoint(), "archive/data.pkl",
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
      PatchEntry(SyntheticCheckpoint(), "archive/data.pkl",
                 std::string("X\x06\0\0\0format", 11),
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

TEST(CheckpointBoundsTest, ADamagedEntryIsRefusedByItsCrc) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  GTEST_SKIP() << "the fuzz build does not check CRC-32s";
#endif
  std::string bad = SyntheticCheckpoint();
  const size_t at = bad.find("archive/data/0");  // the local header's name
  ASSERT_NE(at, std::string::npos);
  bad[at + 14 + 100] ^= 0x10;  // a byte of the first weight matrix
  ExpectRefused(CheckCheckpointBounds(bad),
                "zip entry 'archive/data/0' declares CRC-32");
}

// A declaration LibTorch's writer never makes (here a class constant)
// crashes LibTorch's TorchScript compiler as it
// loads the archive (SEGV in ScriptTypeParser::parseClassConstant).
TEST(CheckpointBoundsTest, TorchScriptOtherThanModuleDeclarationsIsRefused) {
  const std::string code = "archive/code/__torch__.py";
  const std::string source = Content(SyntheticCheckpoint(), code);
  ASSERT_NE(source.find("  __parameters__ = ["), std::string::npos) << source;
  // The same source, stored instead of deflated: accepted, and it resumes.
  const std::string same = Rewrite(SyntheticCheckpoint(), code, source);
  EXPECT_TRUE(CheckCheckpointBounds(same).ok()) << CheckCheckpointBounds(same);
  absl::StatusOr<TrialOutcome> resumed =
      RunTrial(SmallTrial(), nullptr, torch::kCPU, same);
  EXPECT_TRUE(resumed.ok()) << resumed.status();

  std::string constant = source;
  constant.replace(constant.find("__parameters__"), 14, "__paramoders__");
  const std::string bad = Rewrite(SyntheticCheckpoint(), code, constant);
  ExpectRefused(CheckCheckpointBounds(bad),
                "TorchScript source 'archive/code/__torch__.py' line 2 is not "
                "a module declaration LibTorch writes: '  __paramoders__ = [");
  absl::StatusOr<TrialOutcome> out =
      RunTrial(SmallTrial(), nullptr, torch::kCPU, bad);
  ASSERT_FALSE(out.ok());
  ExpectRefused(out.status(), "line 2 is not a module declaration");
  for (const char* hostile : {"  def forward(self):\n    return 1", "import os",
                              "  x : Tensor = torch.zeros(10)",
                              "  y : List[List[List[List[List[int]]]]]",
                              "  __annotations__[\"a\\\"b\"] = Tensor"}) {
    ExpectRefused(CheckCheckpointBounds(Rewrite(SyntheticCheckpoint(), code,
                                                source + hostile + "\n")),
                  "is not a module declaration");
  }
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
  const std::string bad = PatchEntry(TextStyleCheckpoint(), "archive/data.pkl",
                                     std::string("X\x06\0\0\0format", 11),
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
  const std::string bad = PatchEntry(SyntheticCheckpoint(), "archive/data.pkl",
                                     std::string("X\x06\0\0\0format", 11),
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
