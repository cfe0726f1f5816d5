#include "worker/tasks/synthetic/synthetic_task.h"

#include <algorithm>

namespace qkov::training {

SyntheticTask::SyntheticTask(const SyntheticTaskOptions& options)
    : options_(options) {
  for (int c = 0; c < options_.num_classes; ++c) {
    const std::vector<double> p = ClassDistribution(c);
    AliasTable table;
    std::vector<double> scaled;
    for (int t = 0; t < options_.vocab_size; ++t) {
      if (p[t] <= 0) continue;
      table.token.push_back(t);
      scaled.push_back(p[t]);
    }
    const size_t k = scaled.size();
    for (double& x : scaled) x *= static_cast<double>(k);
    table.alias.assign(k, 0);
    table.threshold.assign(k, 0);
    std::vector<size_t> small, large;
    for (size_t i = 0; i < k; ++i)
      (scaled[i] < 1.0 ? small : large).push_back(i);
    std::vector<double> keep(k, 1.0);
    std::vector<int> alias(k);
    for (size_t i = 0; i < k; ++i) alias[i] = static_cast<int>(i);
    while (!small.empty() && !large.empty()) {
      const size_t s = small.back(), l = large.back();
      small.pop_back();
      keep[s] = scaled[s];
      alias[s] = static_cast<int>(l);
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (size_t i = 0; i < k; ++i) {
      const double t = std::min(1.0, keep[i]) * 4294967296.0;
      table.threshold[i] =
          t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
      table.alias[i] = table.token[alias[i]];
      if (keep[i] >= 1.0)
        table.threshold[i] = 0xFFFFFFFFu, table.alias[i] = table.token[i];
    }
    alias_.push_back(std::move(table));
  }
}

std::vector<double> SyntheticTask::ClassDistribution(int c) const {
  std::vector<double> w(options_.vocab_size, 0.0);
  for (int t = 0; t < options_.num_common; ++t) w[t] = 1.0;
  const int d = options_.distinct_per_class;
  for (int j = 0; j < d; ++j)
    w[DistinctBegin(c) + j] = static_cast<double>(j + 1) / d;
  double total = 0;
  for (double x : w) total += x;
  for (double& x : w) x /= total;
  return w;
}

Batch SyntheticTask::Sample(int batch_size, std::mt19937_64& rng) const {
  const int len = input_len();
  auto tokens = torch::empty({batch_size, len}, torch::kInt64);
  auto labels = torch::empty({batch_size}, torch::kInt64);
  auto classes = torch::empty({batch_size}, torch::kInt64);
  SampleInto(batch_size, rng, tokens.data_ptr<int64_t>(),
             labels.data_ptr<int64_t>(), classes.data_ptr<int64_t>());
  return Batch{tokens, labels, classes};
}

}  // namespace qkov::training
