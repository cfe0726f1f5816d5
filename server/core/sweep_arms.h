// A sweep's arms (SweepAxes.arms, docs/sweep-files.md "Arms"): named sets
// of settings crossed with the other axes. Each arm's training part is the
// sweep's with the arm's fields put over it, then the task's and the shared
// defaults; its ratio and base rate, where it sets them, replace the
// sweep's axes for its trials.
#ifndef QKOV_SERVER_CORE_SWEEP_ARMS_H_
#define QKOV_SERVER_CORE_SWEEP_ARMS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "qkov/v1/config.pb.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::core {

// Most arms one sweep may hold.
inline constexpr int kMaxArms = 256;

// `training` with the arm's `training_fields` taken from its `training`
// (a repeated field replaced, not appended to). A field mask that names no
// field of Training leaves `training` as it is (ValidateArms refuses it).
void PutArmOver(const qkov::v1::Arm& arm, qkov::v1::Training* training);

// Replaces each arm's `training` with its whole training part: `raw`'s
// training (the sweep's, before defaults) with the arm put over it, then
// `apply_defaults` (ApplySpecDefaults' own steps) on a copy of `raw`
// holding it. `training_fields` stays what the submitter set.
void ApplyArmDefaults(const qkov::v1::SweepSpec& raw,
                      void (*apply_defaults)(qkov::v1::SweepSpec*),
                      qkov::v1::SweepSpec* spec);

// The arms' names, ratios, base rates and field masks; each arm's training
// part by ValidateTraining under the prefix "spec.axes.arms[NAME].training.",
// so a refusal names the arm and the key. An arm may not change the task;
// an adaptive sweep takes no arms. Expects defaults applied.
absl::Status ValidateArms(const qkov::v1::SweepSpec& spec);

// The arms to expand: the spec's, or one unnamed arm holding the sweep's
// training part when it has none.
std::vector<qkov::v1::Arm> ArmsOf(const qkov::v1::SweepSpec& spec);

// "spec.axes.arms[NAME]." for refusals about the arm.
std::string ArmField(const qkov::v1::Arm& arm);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_SWEEP_ARMS_H_
