// The agent's reader of training.theory (worker/agent/settings_reader.h):
// into TheoryOptions (theory_options.h), the ODE's. Proto-aware: the worker
// links it.
#ifndef QKOV_WORKER_TASKS_THEORY_THEORY_SETTINGS_READER_H_
#define QKOV_WORKER_TASKS_THEORY_THEORY_SETTINGS_READER_H_

#include "worker/agent/settings_reader.h"

namespace qkov::training {

agent::SettingsReader TheorySettingsReader();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_THEORY_THEORY_SETTINGS_READER_H_
