#include "server/core/sweep_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/proto_enums.h"
#include "common/task_info.h"
#include "common/task_kind.h"
#include "common/task_settings.h"
#include "common/text.h"
#include "common/trial_defaults.h"
#include "common/trial_rules.h"
#include "server/core/adaptive_sweep.h"
#include "server/core/sweep_arms.h"
#include "server/core/trial_memory.h"

namespace qkov::core {
namespace {

using qkov::v1::Training;

absl::Status Invalid(const std::string& field, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", reason));
}

std::string Num(double x) { return absl::StrFormat("%g", x); }

absl::Status CheckInt(const std::string& field, int64_t x, int64_t lo,
                      int64_t hi) {
  if (x < lo || x > hi)
    return Invalid(
        field, absl::StrCat("must be in [", lo, ", ", hi, "] (got ", x, ")"));
  return absl::OkStatus();
}

}  // namespace

namespace {

// ApplySpecDefaults but for the arms.
void ApplyOwnDefaults(qkov::v1::SweepSpec* spec) {
  if (spec->training().task() == qkov::v1::TASK_KIND_UNSPECIFIED)
    spec->mutable_training()->set_task(
        static_cast<qkov::v1::TaskKind>(DefaultTask().kind));
  // First: where the task's defaults differ from the shared ones, its own
  // are set before the shared fill the rest.
  if (auto* apply = TaskSettingsOf(spec->training()).apply_defaults)
    apply(spec);
  ApplyTrainingDefaults(spec->mutable_training());
  if (spec->max_attempts() == 0)
    spec->set_max_attempts(::qkov::defaults::kMaxAttempts);
  auto* axes = spec->mutable_axes();
  if (const TaskInfo* info = FindTask(spec->training().task());
      info != nullptr && !info->searchable && axes->lr_ratios().empty())
    axes->add_lr_ratios(1);  // no QK circuit to speed up
  ApplySearchDefaults(spec);
  ApplyEarlyStoppingDefaults(spec);
}

}  // namespace

void ApplySpecDefaults(qkov::v1::SweepSpec* spec) {
  if (spec->axes().arms().empty()) {
    ApplyOwnDefaults(spec);
    return;
  }
  const qkov::v1::SweepSpec raw = *spec;
  ApplyOwnDefaults(spec);
  // More arms than a sweep may hold are refused by ValidateArms; their
  // defaults are not worth a copy of the spec each.
  if (spec->axes().arms_size() <= kMaxArms)
    ApplyArmDefaults(raw, &ApplyOwnDefaults, spec);
}

namespace {

// spec.name and spec.description.
absl::Status ValidateNameAndDescription(const qkov::v1::SweepSpec& spec) {
  const std::string& name = spec.name();
  if (name.empty()) return Invalid("spec.name", "must not be empty");
  if (name.size() > 128)
    return Invalid("spec.name", "must be at most 128 characters");
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
          c == '.')) {
      return Invalid(
          "spec.name",
          absl::StrCat("may contain only letters, digits, '_', '-', '.' (got '",
                       std::string(1, c), "')"));
    }
  }
  if (spec.description().size() > 4096)
    return Invalid("spec.description", "longer than 4096");
  if (!IsValidUtf8(spec.description()))
    return Invalid("spec.description", "is not valid UTF-8");
  // The preset's name and " --quick", as `qkov submit --preset` sets it.
  if (spec.preset().size() > 128)
    return Invalid("spec.preset", "must be at most 128 characters");
  for (char c : spec.preset()) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
          c == '.' || c == ' ')) {
      return Invalid(
          "spec.preset",
          absl::StrCat("may contain only letters, digits, '_', '-', '.', ' ' "
                       "(got '",
                       TerminalSafe(std::string(1, c)), "')"));
    }
  }
  return absl::OkStatus();
}

// `v` against `rule`, each value named by its index under `axis`, with no
// value twice.
absl::Status CheckRealAxis(const std::string& axis,
                           const google::protobuf::RepeatedField<double>& v,
                           rules::RealRule rule) {
  std::set<double> seen;
  for (int i = 0; i < v.size(); ++i) {
    const std::string field = absl::StrCat(axis, "[", i, "]");
    rule.field = field.c_str();
    if (auto s = rules::Check("", rule, v[i]); !s.ok()) return s;
    if (!seen.insert(v[i]).second) return Invalid(field, "duplicate value");
  }
  return absl::OkStatus();
}

// The axes a task decides: parameterizations (none for the ODE, at least
// one for the rest) and alphas (the fixed-attention task's only).
absl::Status ValidateTaskAxes(const qkov::v1::SweepSpec& spec) {
  const auto& axes = spec.axes();
  // An unknown task is refused by ValidateTraining; its axes are checked as
  // the synthetic task's meanwhile.
  const TaskInfo& task = TaskOrDefault(spec.training().task());
  if (!task.parameterized) {
    if (!axes.parameterizations().empty())
      return Invalid("spec.axes.parameterizations",
                     absl::StrCat("the ", task.name,
                                  " task has no parameterization; leave the "
                                  "axis out"));
  } else if (axes.parameterizations().empty()) {
    return Invalid("spec.axes.parameterizations",
                   absl::StrCat("axis is empty; give at least one of ",
                                EnumValueList<qkov::v1::Parameterization>()));
  }
  if (task.takes_alphas) {
    if (axes.alphas().empty())
      return Invalid(
          "spec.axes.alphas",
          absl::StrCat("axis is empty; the ", task.name, " task needs alphas"));
    return CheckRealAxis("spec.axes.alphas", axes.alphas(), rules::kAlpha);
  }
  if (!axes.alphas().empty()) {
    return Invalid("spec.axes.alphas",
                   absl::StrCat("the ", task.name, " task takes no alphas"));
  }
  return absl::OkStatus();
}

// Every axis present where needed (lr_ratios unless the sweep searches
// them), each value valid and given once.
absl::Status ValidateAxes(const qkov::v1::SweepSpec& spec) {
  const auto& axes = spec.axes();
  if (spec.has_search()) {
    if (absl::Status st = ValidateSearch(spec); !st.ok()) return st;
  } else if (axes.lr_ratios().empty() && axes.arms().empty()) {
    return Invalid("spec.axes.lr_ratios", "axis is empty");
  }
  // With arms, ValidateArms asks for the axis where an arm gives no value.
  if (axes.eta_ovs().empty() && axes.arms().empty())
    return Invalid("spec.axes.eta_ovs", "axis is empty");
  if (axes.seeds().empty()) return Invalid("spec.axes.seeds", "axis is empty");
  std::set<int> seen_p;
  for (int i = 0; i < axes.parameterizations_size(); ++i) {
    const int p = axes.parameterizations(i);
    const std::string field =
        absl::StrCat("spec.axes.parameterizations[", i, "]");
    if (p == qkov::v1::PARAMETERIZATION_UNSPECIFIED ||
        !qkov::v1::Parameterization_IsValid(p))
      return Invalid(
          field,
          absl::StrCat("unknown parameterization ", p, " (expected ",
                       EnumValueList<qkov::v1::Parameterization>(), ")"));
    if (!seen_p.insert(p).second) return Invalid(field, "duplicate value");
  }
  if (auto s = CheckRealAxis("spec.axes.lr_ratios", axes.lr_ratios(),
                             rules::kLrRatio);
      !s.ok())
    return s;
  if (auto s =
          CheckRealAxis("spec.axes.eta_ovs", axes.eta_ovs(), rules::kEtaOv);
      !s.ok())
    return s;
  std::set<uint64_t> seen_seeds;
  for (int i = 0; i < axes.seeds_size(); ++i) {
    if (!seen_seeds.insert(axes.seeds(i)).second)
      return Invalid(absl::StrCat("spec.axes.seeds[", i, "]"),
                     "duplicate value");
  }
  return absl::OkStatus();
}

// The grid's trials (a search's most probes for its ratios) within the
// server's limit.
absl::Status CheckGridSize(const qkov::v1::SweepSpec& spec,
                           const SpecLimits& limits) {
  const auto& axes = spec.axes();
  // Each arm's ratios and base rates: its own value, or the sweep's axis.
  double arm_points = 0;
  for (const qkov::v1::Arm& arm : axes.arms()) {
    arm_points +=
        static_cast<double>(arm.has_lr_ratio() ? 1 : axes.lr_ratios_size()) *
        (arm.has_eta_ov() ? 1 : axes.eta_ovs_size());
  }
  if (axes.arms().empty()) {
    arm_points = static_cast<double>(spec.has_search()
                                         ? MaxProbesPerSearch(spec.search())
                                         : axes.lr_ratios_size()) *
                 axes.eta_ovs_size();
  }
  const double grid =
      static_cast<double>(std::max(1, axes.parameterizations_size())) *
      arm_points * axes.seeds_size() * std::max(1, axes.alphas_size());
  if (grid > static_cast<double>(limits.max_trials)) {
    return Invalid("spec.axes", absl::StrCat("grid has ", Num(grid),
                                             " trials; this server's limit is ",
                                             limits.max_trials));
  }
  return absl::OkStatus();
}

// One trial's estimated memory within the server's limit; the refusal
// names the settings that size it.
absl::Status CheckTrialMemory(const Training& t, const SpecLimits& limits,
                              const std::string& field) {
  const int64_t bytes = EstimateTrialMemoryBytes(t);
  if (bytes <= limits.max_trial_memory_bytes) return absl::OkStatus();
  return Invalid(field,
                 absl::StrFormat("one trial would need about %.1f GB (%s); "
                                 "this server's limit is %.1f GB",
                                 bytes / 1e9, TrialMemorySizes(t),
                                 limits.max_trial_memory_bytes / 1e9));
}

}  // namespace

absl::Status ValidateSweepSpec(const qkov::v1::SweepSpec& spec,
                               const SpecLimits& limits) {
  if (absl::Status st = ValidateNameAndDescription(spec); !st.ok()) return st;
  if (absl::Status st = ValidateTaskAxes(spec); !st.ok()) return st;
  if (absl::Status st = ValidateArms(spec); !st.ok()) return st;
  if (absl::Status st = ValidateAxes(spec); !st.ok()) return st;
  if (absl::Status st = CheckGridSize(spec, limits); !st.ok()) return st;
  const Training& t = spec.training();
  if (absl::Status st = ValidateTraining(t, "spec.training."); !st.ok())
    return st;
  if (absl::Status st = ValidateEarlyStopping(spec); !st.ok()) return st;
  for (const qkov::v1::Arm& arm : ArmsOf(spec)) {
    const std::string field = arm.name().empty()
                                  ? "spec.training"
                                  : absl::StrCat(ArmField(arm), "training");
    if (absl::Status st = CheckTrialMemory(arm.training(), limits, field);
        !st.ok())
      return st;
  }
  if (auto st = CheckInt("spec.max_attempts", spec.max_attempts(), 1, 100);
      !st.ok())
    return st;
  return CheckInt("spec.priority", spec.priority(), -1000000, 1000000);
}

}  // namespace qkov::core
