#include "worker/training/seeding.h"

#include <algorithm>

namespace qkov::training {

uint64_t MixSeed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<int64_t> Permutation(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> p(n);
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n; i > 1; --i) {
    const int64_t j =
        std::min<int64_t>(i - 1, static_cast<int64_t>(UniformDouble(rng) * i));
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

}  // namespace qkov::training
