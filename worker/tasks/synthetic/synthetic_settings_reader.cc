#include "worker/tasks/synthetic/synthetic_settings_reader.h"

namespace qkov::training {
namespace {

absl::Status ReadSynthetic(const qkov::v1::Training& t, TrialOptions* o) {
  const qkov::v1::SyntheticTask& s = t.synthetic();
  o->synthetic.vocab_size = s.vocab_size();
  o->synthetic.num_common = s.num_common();
  o->synthetic.num_classes = s.num_classes();
  o->synthetic.distinct_per_class = s.distinct_per_class();
  o->synthetic.seq_len = s.seq_len();
  return absl::OkStatus();
}

}  // namespace

agent::SettingsReader SyntheticSettingsReader() {
  return {"synthetic", &ReadSynthetic};
}

namespace {

const agent::SettingsReaderRegistration kSyntheticReader(
    SyntheticSettingsReader());

}  // namespace

}  // namespace qkov::training
