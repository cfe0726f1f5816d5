// The agent's reader of training.synthetic (worker/agent/settings_reader.h):
// into TrialOptions::synthetic (the synthetic and fixed-attention tasks).
// Proto-aware: the worker links it.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_SETTINGS_READER_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_SETTINGS_READER_H_

#include "worker/agent/settings_reader.h"

namespace qkov::training {

agent::SettingsReader SyntheticSettingsReader();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_SETTINGS_READER_H_
