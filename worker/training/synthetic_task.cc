#include "worker/training/synthetic_task.h"

#include <algorithm>

namespace qkov::training {

uint64_t MixSeed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

SyntheticTask::SyntheticTask(const SyntheticTaskOptions& options) : options_(options) {
  for (int c = 0; c < options_.num_classes; ++c) {
    std::vector<double> p = ClassDistribution(c);
    std::vector<double> cdf;
    std::vector<int> support;
    double acc = 0;
    for (int t = 0; t < options_.vocab_size; ++t) {
      if (p[t] <= 0) continue;
      acc += p[t];
      cdf.push_back(acc);
      support.push_back(t);
    }
    cdf.back() = 1.0;  // guard against rounding at the top
    cdf_.push_back(std::move(cdf));
    support_.push_back(std::move(support));
  }
}

std::vector<double> SyntheticTask::ClassDistribution(int c) const {
  std::vector<double> w(options_.vocab_size, 0.0);
  for (int t = 0; t < options_.num_common; ++t) w[t] = 1.0;
  const int d = options_.distinct_per_class;
  for (int j = 0; j < d; ++j) w[DistinctBegin(c) + j] = static_cast<double>(j + 1) / d;
  double total = 0;
  for (double x : w) total += x;
  for (double& x : w) x /= total;
  return w;
}

int SyntheticTask::SampleContextToken(int c, std::mt19937_64& rng) const {
  const std::vector<double>& cdf = cdf_[c];
  const double u = UniformDouble(rng);
  const size_t i = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
  return support_[c][std::min(i, cdf.size() - 1)];
}

Batch SyntheticTask::Sample(int batch_size, std::mt19937_64& rng) const {
  const int len = input_len();
  auto tokens = torch::empty({batch_size, len}, torch::kInt64);
  auto labels = torch::empty({batch_size}, torch::kInt64);
  auto classes = torch::empty({batch_size}, torch::kInt64);
  int64_t* tok = tokens.data_ptr<int64_t>();
  int64_t* lab = labels.data_ptr<int64_t>();
  int64_t* cls = classes.data_ptr<int64_t>();
  for (int b = 0; b < batch_size; ++b) {
    const int c = std::min(static_cast<int>(UniformDouble(rng) * options_.num_classes),
                           options_.num_classes - 1);
    int64_t* row = tok + static_cast<int64_t>(b) * len;
    for (int i = 0; i < len - 1; ++i) row[i] = SampleContextToken(c, rng);
    row[len - 1] = QueryToken(c);
    lab[b] = LabelToken(c);
    cls[b] = c;
  }
  return Batch{tokens, labels, classes};
}

}  // namespace qkov::training
