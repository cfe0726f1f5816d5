// Sweep files (YAML; JSON is YAML too) -> qkov.v1.SweepSpec. Schema and
// examples: docs/sweep-files.md. Errors are INVALID_ARGUMENT with
// "FILE:LINE: field: reason", e.g.
//   demo.yaml:5: axes.parameterization[2]: unknown parameterization 'FOO'
#ifndef QKOV_CLIENT_SWEEP_FILE_H_
#define QKOV_CLIENT_SWEEP_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::client {

// Parses `text` (named `source` in errors). `overrides` are "dotted.key=YAML"
// strings applied before conversion (e.g. "training.max_steps=1000",
// "axes.seed=[1,2,3]").
absl::StatusOr<qkov::v1::SweepSpec> ParseSweepText(
    const std::string& text, const std::string& source,
    const std::vector<std::string>& overrides = {});

// The largest sweep file LoadSweepFile reads (1 MiB).
inline constexpr std::uintmax_t kMaxSweepFileBytes = 1 << 20;

// ParseSweepText on the file at `path`: NOT_FOUND when it cannot be opened,
// INVALID_ARGUMENT for a directory or a file over kMaxSweepFileBytes (sized
// before it is read).
absl::StatusOr<qkov::v1::SweepSpec> LoadSweepFile(
    const std::string& path, const std::vector<std::string>& overrides = {});

// What an arm sets, as `qkov status NAME` lists it: each path of its
// training_fields with its value in sweep-file spelling,
// "optimizer.weight_decay=0.001, text.mlp_lr_multiplier=0" ("" for none).
std::string ArmSettingsText(const qkov::v1::Arm& arm);

// A sweep file holding exactly one grid point, `config`, named `name`: the
// axes as one-element lists, every training setting the config carries (the
// server filled every default), in the names and enum spellings
// ParseSweepText reads back. What `qkov trial` and the dashboard print.
std::string TrialSweepText(const std::string& name,
                           const qkov::v1::TrialConfig& config);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_SWEEP_FILE_H_
