// Defaults of the ODE's settings (training.theory), for sweep_spec.cc:
// common/trial_defaults.h's kTheory, which the worker's TheoryOptions start
// from too.
#include "common/task_kind.h"
#include "common/trial_defaults.h"
#include "server/core/sweep_spec.h"

namespace qkov::core {

void ApplyTheoryDefaults(qkov::v1::SweepSpec* spec) {
  if (TaskOrSynthetic(spec->training().task()).settings != "theory") return;
  // The ODE has no parameterization and no randomness.
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

}  // namespace qkov::core
