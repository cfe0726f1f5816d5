#include "worker/training/synthetic/synthetic_settings.h"

#include "absl/strings/str_format.h"
#include "common/trial_rules.h"

namespace qkov {
namespace {

absl::Status CheckSynthetic(const qkov::v1::Training& t,
                            absl::string_view prefix) {
  const qkov::v1::SyntheticTask& s = t.synthetic();
  return rules::CheckSyntheticShape(prefix, s.vocab_size(), s.num_common(),
                                    s.num_classes(), s.distinct_per_class(),
                                    s.seq_len());
}

// In double: the product of the largest accepted shapes overflows int64.
int64_t SyntheticBytes(const qkov::v1::Training& t) {
  const double v = t.synthetic().vocab_size();
  const double seq = t.synthetic().seq_len();
  const double b = t.batch_size();
  const double e = t.evaluation().num_examples();
  return ClampedBytes(
      4 * (16 * v * v + 8 * b * seq + 4 * b * v + e * (seq + v)) + 8 * b * seq);
}

std::string SyntheticSizes(const qkov::v1::Training& t) {
  return absl::StrFormat(
      "batch_size %d, synthetic.seq_len %d, synthetic.vocab_size %d, "
      "evaluation.num_examples %d",
      t.batch_size(), t.synthetic().seq_len(), t.synthetic().vocab_size(),
      t.evaluation().num_examples());
}

}  // namespace

TaskSettings SyntheticSettings() {
  // name, apply_defaults, check, memory_bytes, memory_sizes
  return {"synthetic", nullptr, &CheckSynthetic, &SyntheticBytes,
          &SyntheticSizes};
}

}  // namespace qkov
