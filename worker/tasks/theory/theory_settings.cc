#include "worker/tasks/theory/theory_settings.h"

#include "common/trial_defaults.h"
#include "common/trial_rules.h"
#include "worker/tasks/theory/theory_defaults.h"
#include "worker/tasks/theory/theory_rules.h"

namespace qkov {
namespace {

void ApplyTheoryDefaults(qkov::v1::SweepSpec* spec) {
  if (spec->axes().seeds().empty()) spec->mutable_axes()->add_seeds(0);
  const defaults::TheoryDefaults& d = defaults::kTheory;
  qkov::v1::Theory* t = spec->mutable_training()->mutable_theory();
  if (t->m() == 0) t->set_m(d.m);
  if (t->n() == 0) t->set_n(d.n);
  if (t->b() == 0) t->set_b(d.b);
  if (t->num_classes() == 0) t->set_num_classes(d.num_classes);
  if (t->dtau() == 0) t->set_dtau(d.dtau);
  if (t->max_tau() == 0) t->set_max_tau(d.max_tau);
  if (t->target_loss() == 0) t->set_target_loss(d.target_loss);
  if (t->num_thresholds() == 0) t->set_num_thresholds(d.num_thresholds);
  if (t->num_samples() == 0) t->set_num_samples(d.num_samples);
}

absl::Status CheckTheorySettings(const qkov::v1::Training& t,
                                 absl::string_view prefix) {
  const qkov::v1::Theory& th = t.theory();
  return rules::CheckTheory(prefix, th.m(), th.n(), th.b(), th.num_classes(),
                            th.dtau(), th.relative_step(), th.max_tau(),
                            th.target_loss(), th.num_thresholds(),
                            th.num_samples());
}

}  // namespace

TaskSettings TheorySettings() {
  // name, apply_defaults, check, memory_bytes, memory_sizes,
  // stacked_trial_bytes (no model to hold)
  return {
      "theory", &ApplyTheoryDefaults, &CheckTheorySettings, nullptr, nullptr,
      nullptr};
}

namespace {

const TaskSettingsRegistration kTheorySettings(TheorySettings());

}  // namespace

}  // namespace qkov
