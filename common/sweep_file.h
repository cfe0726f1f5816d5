// Sweep files (YAML; JSON is YAML too) -> qkov.v1.SweepSpec. Schema and
// examples: docs/sweep-files.md. Errors are INVALID_ARGUMENT with
// "FILE:LINE: field: reason", e.g.
//   demo.yaml:5: axes.parameterization[2]: unknown parameterization 'FOO'
#ifndef QKOV_COMMON_SWEEP_FILE_H_
#define QKOV_COMMON_SWEEP_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov {

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

// One setting of a trial's config under its sweep-file key: the axes by
// their own names ("parameterization", "lr_ratio", "eta_ov", "seed",
// "alpha", "arm") and every training setting by its dotted path under
// "training." ("training.optimizer.weight_decay"), the keys `--set` takes.
// Its value has one of four types: numbers (double), integers (every integer
// field; a uint64 seed above 2^63 wraps), text (strings, enums by the names
// a sweep file gives them, lists of numbers as "[0.1, 0.2]"), flags (bool).
struct ConfigSetting {
  enum class Type { kNumber, kInteger, kText, kFlag };
  std::string key;
  Type type = Type::kNumber;
  double number = 0;
  int64_t integer = 0;
  std::string text;
  bool flag = false;
};

// Every setting `config` holds, axes first, then training in the order of
// its messages' fields: what TrialSweepText writes (an unset `optional`
// setting and an unspecified enum are left out, as is alpha where the task
// takes none). The notebook client's config.* columns (ResultColumns).
std::vector<ConfigSetting> ConfigSettings(const qkov::v1::TrialConfig& config);
// Its two parts: the axes (alpha where `task` takes alphas) and the
// training settings, which the trials of one sweep (or arm) share.
std::vector<ConfigSetting> AxisSettings(const qkov::v1::TrialConfig& config,
                                        qkov::v1::TaskKind task);
std::vector<ConfigSetting> TrainingSettings(const qkov::v1::Training& training);

// A sweep given by source rather than as a SweepSpec: the text of a sweep
// file, or a preset's name (with `quick`), each with `overrides`, read as
// `qkov submit` reads them. A preset's data files are looked for in this
// process's data folders (common/data_dirs.h); FAILED_PRECONDITION where
// they are in none and no override points elsewhere. INVALID_ARGUMENT for
// both or neither, `quick` without a preset, or text over
// kMaxSweepFileBytes.
struct SweepFileSource {
  std::string text;
  std::string source_name;  // how errors name the text ("sweep.yaml")
  std::string preset;
  bool quick = false;
  std::vector<std::string> overrides;
};
absl::StatusOr<qkov::v1::SweepSpec> SpecFromSource(
    const SweepFileSource& source);

}  // namespace qkov

#endif  // QKOV_COMMON_SWEEP_FILE_H_
