#include "worker/tasks/synthetic/synthetic_settings.h"

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

// One more trial of a stack (server/core/trial_memory.h,
// EstimateStackedTrialBytes): its four circuit factors with their gradients
// and two optimizer moments, and the QK and OV circuits formed on report
// steps (18 V^2 floats), the analytic engine's per-trial buffers (16 B V +
// 4 B T floats), its batch's tokens on host and device (2 B T int64) and
// its random streams and statistics (64 KiB).
int64_t SyntheticStackedBytes(const qkov::v1::Training& t) {
  const double v = t.synthetic().vocab_size();
  const double seq = t.synthetic().seq_len();
  const double b = t.batch_size();
  return ClampedBytes(4 * (18 * v * v + 16 * b * v + 4 * b * seq) +
                      16 * b * seq + 65536);
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
  // name, apply_defaults, check, memory_bytes, memory_sizes,
  // stacked_trial_bytes
  return {"synthetic",     nullptr,         &CheckSynthetic,
          &SyntheticBytes, &SyntheticSizes, &SyntheticStackedBytes};
}

namespace {

const TaskSettingsRegistration kSyntheticSettings(SyntheticSettings());

}  // namespace

}  // namespace qkov
