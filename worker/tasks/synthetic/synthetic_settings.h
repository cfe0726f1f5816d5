// The synthetic task's settings message (training.synthetic, read by the
// synthetic and fixed-attention tasks) in common/task_settings.h's table.
// Proto-aware, no LibTorch: the server and the worker's agent link it.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_SETTINGS_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_SETTINGS_H_

#include "common/task_settings.h"

namespace qkov {

// Defaults: none of its own (every trial's config carries the synthetic
// defaults, server/core/sweep_spec.h's ApplyTrainingDefaults). Checks: the
// sizes fit together (rules::CheckSyntheticShape). Memory: the model's
// weights and optimizer state, a batch's activations and the evaluation set.
TaskSettings SyntheticSettings();

}  // namespace qkov

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_SETTINGS_H_
