// How much memory a trial takes on its worker, estimated from its settings
// before it runs: the server refuses a sweep whose trials would not fit
// (SweepLimits), and sizes a worker's batch lease to its memory budget
// (worker_desk.cc).
#ifndef QKOV_SERVER_CORE_TRIAL_MEMORY_H_
#define QKOV_SERVER_CORE_TRIAL_MEMORY_H_

#include <cstdint>
#include <string>

#include "qkov/v1/config.pb.h"

namespace qkov::core {

// An upper estimate of one trial's memory on its worker, from its shapes
// (float32 values, int64 tokens; docs/security.md gives the terms), by the
// entry of the settings message that shapes it (common/task_settings.h,
// each declared in its task's folder). The synthetic task: the circuits with
// their gradients and optimizer state (16 V^2), a training batch's tokens
// and activations (B T int64 and 8 B T + 4 B V floats), and the held-out
// set (E (T + V) floats), V the vocabulary, T the sequence length, B the
// batch, E the evaluation examples. The text tasks and SQuAD: the
// transformer's weights (TransformerShape) with gradients and two optimizer
// moments, and each layer's attention tensors. 0 for the theory task.
int64_t EstimateTrialMemoryBytes(const qkov::v1::Training& training);

// The settings that size that estimate, for a refusal: "batch_size 32,
// text.max_len 512, text.heads 12, text.layers 1".
std::string TrialMemorySizes(const qkov::v1::Training& training);

// An upper estimate of the memory one more trial adds to a stack of trials
// that a worker trains together: its settings message's model
// (TaskSettings::stacked_trial_bytes; the synthetic task's is its circuits,
// gradients, optimizer moments and buffers, worker/tasks/synthetic/
// synthetic_settings.cc). 0 for tasks that train one trial at a time.
// tests/integration/stack_memory_test.cc holds it against the memory a
// stack of trials takes.
int64_t EstimateStackedTrialBytes(const qkov::v1::Training& training);

// How many trials of `training` one lease may hold for a worker with
// `budget_bytes` for a batch (LeaseTrialRequest.memory_budget_bytes): one
// trial's EstimateTrialMemoryBytes (its evaluation runs one trial at a
// time), plus EstimateStackedTrialBytes for each further one; at least 1,
// at most `max_trials`. A kind that does not stack: 1 (its trials would run
// one after another, so leasing them together would only keep them from
// other workers). Budget 0 (unknown): `max_trials`.
int TrialsThatFit(const qkov::v1::Training& training, int64_t budget_bytes,
                  int max_trials, bool fill);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_TRIAL_MEMORY_H_
