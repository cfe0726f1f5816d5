// The ODE's settings message (training.theory) in common/task_settings.h's
// table. Proto-aware, no LibTorch: the server and the worker's agent link it.
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_SETTINGS_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_SETTINGS_H_

#include "common/task_settings.h"

namespace qkov {

// Defaults: common/trial_defaults.h's kTheory, which the worker's
// TheoryOptions start from too, and one seed, 0 (the ODE has no
// randomness). Checks: rules::CheckTheory. Memory: none to speak of (no
// model, no batch).
TaskSettings TheorySettings();

}  // namespace qkov

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_SETTINGS_H_
