// The SQuAD task's settings message (training.squad) in
// common/task_settings.h's table. Proto-aware, no LibTorch: the server and
// the worker's agent link it.
#ifndef QKOV_WORKER_TASKS_SQUAD_SQUAD_SETTINGS_H_
#define QKOV_WORKER_TASKS_SQUAD_SQUAD_SETTINGS_H_

#include "common/task_settings.h"

namespace qkov::squad {

// Defaults: common/trial_defaults.h's kSquad (the authors' decoder), with
// AdamW, OneCycleLR and their batch and evaluation. Checks: every
// training.squad setting in range; positions for the longest sequence
// (n_ctx >= max_prompt_tokens + max_answer_tokens + 1); non-empty article
// ranges; the files named (a validation file when validation_questions >
// 0); AdamW with cosine_warmup or one_cycle. Memory: the decoder's weights
// with gradients and two optimizer moments, its attention, and a batch's
// next-token logits over GPT-2's vocabulary with their gradient.
TaskSettings SquadSettings();

}  // namespace qkov::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_SQUAD_SETTINGS_H_
