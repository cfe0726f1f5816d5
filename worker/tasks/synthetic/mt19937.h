// Mt19937_64: the same generator as std::mt19937_64 (the same numbers from
// the same seed, and the same text form through << and >>, so either reads
// the other's saved state), with a branch-free refill that the compiler
// vectorises: about 2.3 ns a draw where libstdc++'s takes 6.3 on the
// machines of docs/PERFORMANCE.md. The synthetic trainer draws its data
// from it; mt19937_test checks it against the standard engine.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_MT19937_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_MT19937_H_

#include <cstdint>
#include <istream>
#include <limits>
#include <ostream>

namespace qkov::training {

class Mt19937_64 {
 public:
  using result_type = uint64_t;
  static constexpr int kStateSize = 312;

  explicit Mt19937_64(uint64_t seed = 5489u) { this->seed(seed); }

  void seed(uint64_t value) {
    x_[0] = value;
    for (int i = 1; i < kStateSize; ++i) {
      x_[i] = 6364136223846793005ULL * (x_[i - 1] ^ (x_[i - 1] >> 62)) +
              static_cast<uint64_t>(i);
    }
    next_ = kStateSize;
  }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() {
    return std::numeric_limits<uint64_t>::max();
  }

  result_type operator()() {
    if (next_ >= kStateSize) Refill();
    return out_[next_++];
  }

  // The 312 state words and the position, space-separated: libstdc++'s
  // form for std::mt19937_64.
  friend std::ostream& operator<<(std::ostream& out, const Mt19937_64& g) {
    for (int i = 0; i < kStateSize; ++i) out << g.x_[i] << ' ';
    return out << g.next_;
  }
  friend std::istream& operator>>(std::istream& in, Mt19937_64& g) {
    for (int i = 0; i < kStateSize; ++i) in >> g.x_[i];
    in >> g.next_;
    g.TemperAll();
    return in;
  }

 private:
  static constexpr int kShift = 156;
  static constexpr uint64_t kUpper = 0xFFFFFFFF80000000ULL;
  static constexpr uint64_t kLower = 0x7FFFFFFFULL;
  static constexpr uint64_t kMatrix = 0xB5026F5AA96619E9ULL;

  static uint64_t Twist(uint64_t head, uint64_t next, uint64_t far) {
    const uint64_t y = (head & kUpper) | (next & kLower);
    return far ^ (y >> 1) ^ ((0 - (y & 1)) & kMatrix);
  }

  static uint64_t Temper(uint64_t z) {
    z ^= (z >> 29) & 0x5555555555555555ULL;
    z ^= (z << 17) & 0x71D67FFFEDA60000ULL;
    z ^= (z << 37) & 0xFFF7EEE000000000ULL;
    return z ^ (z >> 43);
  }

  // The outputs of the current state words, in one pass the compiler
  // vectorises (tempering each word as it is drawn does not).
  void TemperAll() {
    for (int i = 0; i < kStateSize; ++i) out_[i] = Temper(x_[i]);
  }

  void Refill() {
    int k = 0;
    for (; k < kStateSize - kShift; ++k)
      x_[k] = Twist(x_[k], x_[k + 1], x_[k + kShift]);
    for (; k < kStateSize - 1; ++k)
      x_[k] = Twist(x_[k], x_[k + 1], x_[k + kShift - kStateSize]);
    x_[kStateSize - 1] = Twist(x_[kStateSize - 1], x_[0], x_[kShift - 1]);
    next_ = 0;
    TemperAll();
  }

  uint64_t x_[kStateSize];
  uint64_t out_[kStateSize];  // Temper(x_[i]): what the next draws return
  int next_;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_MT19937_H_
