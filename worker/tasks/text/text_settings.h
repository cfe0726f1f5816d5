// The text tasks' settings message (training.text, read by text, hatexplain
// and sva) in common/task_settings.h's table. Proto-aware, no LibTorch: the
// server and the worker's agent link it.
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_SETTINGS_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_SETTINGS_H_

#include "common/task_settings.h"

namespace qkov::text {

// Defaults: the task table's text defaults of the task (HateXplain's, SVA's
// or the plain text task's) and its data format, with the optimizer and
// evaluation settings in which they differ from the synthetic task's.
// Checks: every training.text setting in range, positions for every token
// (n_ctx >= max_len), the files named, each split's format known
// (docs/text-tasks.md). Memory: the classifier's weights with gradients and
// two optimizer moments, and each layer's attention in training and
// evaluation.
TaskSettings TextSettings();

}  // namespace qkov::text

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_SETTINGS_H_
