// Sweep specs: the paper's defaults, field-by-field validation, expansion
// into trials, and the canonical config + hash of each trial.
//
// A trial's canonical config is its fully defaulted qkov.v1.TrialConfig as
// JSON (protobuf's JSON printer, proto field names, every field printed);
// config_hash = sha256(canonical config). It does not depend on where the
// point sits in the grid, so re-submitting a sweep (in any axis order)
// matches its points by hash. Trial ids are the store's (storage::TrialIdOf).
#ifndef QKOV_SERVER_CORE_SWEEP_SPEC_H_
#define QKOV_SERVER_CORE_SWEEP_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/sha256.h"
#include "common/text.h"
#include "qkov/v1/config.pb.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::core {

struct SpecLimits {
  int64_t max_trials = 200000;  // grid size limit per submission
  // EstimateTrialMemoryBytes above this is refused (qkov-server
  // --max_trial_memory_gb).
  int64_t max_trial_memory_bytes = 16000000000;  // 16 GB
};

// Fills every unset (zero) field of `training` with the paper's synthetic
// defaults (docs/sweep-files.md lists them). Every trial's config carries
// them, whatever its task.
void ApplyTrainingDefaults(qkov::v1::Training* training);
// The task's own defaults (its settings message's entry,
// common/task_settings.h), then ApplyTrainingDefaults, max_attempts, and
// the axes' and the search's and early stopping's defaults.
void ApplySpecDefaults(qkov::v1::SweepSpec* spec);

// OK, or INVALID_ARGUMENT whose message starts with the field path, e.g.
// "spec.axes.lr_ratios[1]: must be finite and > 0 (got nan)". Expects
// defaults applied.
absl::Status ValidateSweepSpec(const qkov::v1::SweepSpec& spec,
                               const SpecLimits& limits);
// The training settings alone, by the rules of common/trial_rules.h and
// the task's settings message by its entry in common/task_settings.h (the
// worker checks each trial by the same rules); field paths start with `prefix`
// ("spec.training.").
absl::Status ValidateTraining(const qkov::v1::Training& training,
                              absl::string_view prefix);

struct ExpandedTrial {
  qkov::v1::TrialConfig config;  // axes only; the training part is the arm's
  std::string config_json;       // the full config, canonical JSON
  std::string axes_pb;           // `config`, serialized binary (no training)
  std::string config_hash;
  // An arm's trial: its arm's training part as a serialized TrialConfig
  // (TrainingPb's form); empty: the sweep's, TrainingPb(spec).
  std::string training_pb;
};

// Cartesian product in the order arms x parameterizations x lr_ratios x
// eta_ovs x seeds x alphas (an empty parameterization or alpha axis counts
// as one unset value, no arms as one unnamed arm; an arm's own ratio or
// base rate replaces that axis for it). Expects a valid spec with defaults
// applied.
std::vector<ExpandedTrial> ExpandSweep(const qkov::v1::SweepSpec& spec);

// A TrialConfig holding only the spec's training part, serialized. Serialized
// protobuf messages concatenate as a merge, so a trial's axes_pb followed by
// this parses as its full config (what a lease sends).
std::string TrainingPb(const qkov::v1::SweepSpec& spec);

std::string CanonicalJson(const google::protobuf::Message& message);
using ::qkov::Sha256Hex;  // common/sha256.h

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_SWEEP_SPEC_H_
