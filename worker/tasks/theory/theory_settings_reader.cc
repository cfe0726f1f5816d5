#include "worker/tasks/theory/theory_settings_reader.h"

#include "worker/tasks/theory/theory_options.h"

namespace qkov::training {
namespace {

absl::Status ReadTheory(const qkov::v1::Training& t, TrialOptions* o) {
  const qkov::v1::Theory& th = t.theory();
  TheoryOptions& x = o->MutableTaskOptions<TheoryOptions>();
  x.m = th.m();
  x.n = th.n();
  x.b = th.b();
  x.M = th.num_classes();
  x.dtau = th.dtau();
  x.relative_step = th.relative_step();
  x.max_tau = th.max_tau();
  x.target_loss = th.target_loss();
  x.num_thresholds = th.num_thresholds();
  x.num_samples = th.num_samples();
  return absl::OkStatus();
}

}  // namespace

agent::SettingsReader TheorySettingsReader() { return {"theory", &ReadTheory}; }

namespace {

const agent::SettingsReaderRegistration kTheoryReader(TheorySettingsReader());

}  // namespace

}  // namespace qkov::training
