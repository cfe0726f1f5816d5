// Seeded randomness every task shares: independent streams from one trial
// seed, uniform doubles from 53 bits, and a portable permutation, so a seed
// gives the same data order on every platform and standard library.
#ifndef QKOV_WORKER_TRAINING_SEEDING_H_
#define QKOV_WORKER_TRAINING_SEEDING_H_

#include <cstdint>
#include <random>
#include <vector>

namespace qkov::training {

// Deterministic 64-bit mixing (SplitMix64) to derive independent streams
// (data, init, eval) from one trial seed.
uint64_t MixSeed(uint64_t seed, uint64_t stream);

// Uniform double in [0, 1) from 53 random bits of a 64-bit generator
// (std::mt19937_64 or the same numbers from Mt19937_64, synthetic/mt19937.h).
template <typename Rng>
double UniformDouble(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// A permutation of [0, n) drawn from `rng` (Fisher-Yates over
// UniformDouble, so the order does not depend on the standard library):
// the seeded epoch order of the text and SQuAD trainers.
std::vector<int64_t> Permutation(int64_t n, std::mt19937_64& rng);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_SEEDING_H_
