// Mt19937_64 is std::mt19937_64: the same numbers from the same seeds, and
// each reads the other's saved state (the synthetic trainer's checkpoints
// hold its data stream in that text form).
#include "worker/tasks/synthetic/mt19937.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "worker/tasks/synthetic/synthetic_task.h"

namespace qkov::training {
namespace {

TEST(Mt19937Test, SameNumbersAsTheStandardEngine) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{5489}, uint64_t{1234},
                        MixSeed(1234, 1), ~uint64_t{0}}) {
    std::mt19937_64 standard(seed);
    Mt19937_64 ours(seed);
    // Several refills (312 numbers each) and their boundaries.
    for (int i = 0; i < 100000; ++i) {
      ASSERT_EQ(ours(), standard()) << "seed " << seed << " draw " << i;
    }
  }
}

TEST(Mt19937Test, SavedStateReadsBothWays) {
  std::mt19937_64 standard(77);
  for (int i = 0; i < 500; ++i) standard();  // mid-block
  std::ostringstream saved_standard;
  saved_standard << standard;
  Mt19937_64 ours(1);
  std::istringstream in(saved_standard.str());
  in >> ours;
  ASSERT_TRUE(in) << "the standard engine's text does not parse";
  std::ostringstream saved_ours;
  saved_ours << ours;
  EXPECT_EQ(saved_ours.str(), saved_standard.str());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(ours(), standard()) << i;

  std::mt19937_64 back;
  std::ostringstream again;
  again << ours;
  std::istringstream in2(again.str());
  in2 >> back;
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(back(), ours()) << i;
}

TEST(Mt19937Test, SyntheticBatchesAreTheSameFromEither) {
  SyntheticTask task{SyntheticTaskOptions()};
  std::mt19937_64 standard(MixSeed(9, 1));
  Mt19937_64 ours(MixSeed(9, 1));
  const int b = 16, len = task.input_len();
  std::vector<int64_t> t1(b * len), l1(b), t2(b * len), l2(b);
  for (int round = 0; round < 50; ++round) {
    task.SampleInto(b, standard, t1.data(), l1.data());
    task.SampleInto(b, ours, t2.data(), l2.data());
    ASSERT_EQ(t1, t2) << round;
    ASSERT_EQ(l1, l2) << round;
  }
}

}  // namespace
}  // namespace qkov::training
