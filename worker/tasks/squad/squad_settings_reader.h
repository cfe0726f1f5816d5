// The agent's reader of training.squad (worker/agent/settings_reader.h):
// into SquadTaskOptions (squad_options.h): the data,
// tokenizer, decoder and training of the SQuAD task. Proto-aware: the worker
// links it.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_SETTINGS_READER_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_SETTINGS_READER_H_

#include "worker/agent/settings_reader.h"

namespace qkov::training::squad {

agent::SettingsReader SquadSettingsReader();

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_SETTINGS_READER_H_
