// The agent's reader of training.text (worker/agent/settings_reader.h):
// into TextTaskOptions (text_options.h): the data, tokenizer,
// model and parameter groups of the text tasks. Proto-aware: the worker links
// it.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_SETTINGS_READER_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_SETTINGS_READER_H_

#include "worker/agent/settings_reader.h"

namespace qkov::training::text {

agent::SettingsReader TextSettingsReader();

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_SETTINGS_READER_H_
