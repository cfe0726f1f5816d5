#include "server/core/sweep_arms.h"

#include <google/protobuf/util/field_mask_util.h>

#include <cctype>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "common/trial_rules.h"
#include "server/core/training_spec.h"

namespace qkov::core {
namespace {

using google::protobuf::util::FieldMaskUtil;
using qkov::v1::Arm;
using qkov::v1::SweepSpec;
using qkov::v1::Training;

absl::Status Invalid(const std::string& field, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", reason));
}

bool ValidMask(const Arm& arm) {
  return FieldMaskUtil::IsValidFieldMask<Training>(arm.training_fields());
}

// The arm's name: [A-Za-z0-9_.-]{1,64}, as sweep names allow.
absl::Status CheckArmName(const Arm& arm, int index) {
  const std::string field = absl::StrCat("spec.axes.arms[", index, "].name");
  if (arm.name().empty()) return Invalid(field, "must not be empty");
  if (arm.name().size() > 64)
    return Invalid(field, "must be at most 64 characters");
  for (char c : arm.name()) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
          c == '.')) {
      return Invalid(field,
                     absl::StrCat("may contain only letters, digits, '_', "
                                  "'-', '.' (got '",
                                  TerminalSafe(std::string(1, c)), "')"));
    }
  }
  return absl::OkStatus();
}

// Every path names a field of Training, and none the task (which decides
// the sweep's axes, so is the sweep's).
absl::Status CheckArmMask(const Arm& arm) {
  const std::string field = absl::StrCat(ArmField(arm), "training_fields");
  if (!ValidMask(arm)) {
    std::vector<std::string> bad;
    for (const std::string& path : arm.training_fields().paths()) {
      google::protobuf::FieldMask one;
      one.add_paths(path);
      if (!FieldMaskUtil::IsValidFieldMask<Training>(one))
        bad.push_back(TerminalSafe(path));
    }
    return Invalid(field, absl::StrCat("no training setting named '",
                                       absl::StrJoin(bad, "', '"), "'"));
  }
  for (const std::string& path : arm.training_fields().paths()) {
    if (path == "task")
      return Invalid(absl::StrCat(ArmField(arm), "training.task"),
                     "an arm cannot change the task; give each task a sweep "
                     "of its own");
  }
  return absl::OkStatus();
}

}  // namespace

std::string ArmField(const Arm& arm) {
  return absl::StrCat("spec.axes.arms[", TerminalSafe(arm.name()), "].");
}

void PutArmOver(const Arm& arm, Training* training) {
  if (arm.training_fields().paths().empty() || !ValidMask(arm)) return;
  FieldMaskUtil::MergeOptions options;
  options.set_replace_repeated_fields(true);
  FieldMaskUtil::MergeMessageTo(arm.training(), arm.training_fields(), options,
                                training);
}

void ApplyArmDefaults(const SweepSpec& raw, void (*apply_defaults)(SweepSpec*),
                      SweepSpec* spec) {
  SweepSpec base = raw;
  base.mutable_axes()->clear_arms();
  for (Arm& arm : *spec->mutable_axes()->mutable_arms()) {
    SweepSpec own = base;
    PutArmOver(arm, own.mutable_training());
    apply_defaults(&own);
    *arm.mutable_training() = own.training();
  }
}

absl::Status ValidateArms(const SweepSpec& spec) {
  const auto& arms = spec.axes().arms();
  if (arms.empty()) return absl::OkStatus();
  if (spec.has_search())
    return Invalid("spec.axes.arms",
                   "an adaptive sweep takes no arms (its search chooses the "
                   "ratios); give each arm a search of its own");
  if (arms.size() > kMaxArms)
    return Invalid("spec.axes.arms", absl::StrCat(arms.size(),
                                                  " arms; a sweep holds at "
                                                  "most ",
                                                  kMaxArms));
  std::set<std::string> names;
  for (int i = 0; i < arms.size(); ++i) {
    const Arm& arm = arms[i];
    if (absl::Status st = CheckArmName(arm, i); !st.ok()) return st;
    if (!names.insert(arm.name()).second)
      return Invalid(absl::StrCat("spec.axes.arms[", i, "].name"),
                     absl::StrCat("duplicate arm '", arm.name(), "'"));
    const std::string prefix = ArmField(arm);
    if (arm.has_lr_ratio()) {
      if (absl::Status st =
              rules::Check(prefix, rules::kLrRatio, arm.lr_ratio());
          !st.ok())
        return st;
    } else if (spec.axes().lr_ratios().empty()) {
      return Invalid(absl::StrCat(prefix, "lr_ratio"),
                     "the sweep has no lr_ratio axis; give the arm one");
    }
    if (arm.has_eta_ov()) {
      if (absl::Status st = rules::Check(prefix, rules::kEtaOv, arm.eta_ov());
          !st.ok())
        return st;
    } else if (spec.axes().eta_ovs().empty()) {
      return Invalid(absl::StrCat(prefix, "eta_ov"),
                     "the sweep has no eta_ov axis; give the arm one");
    }
    if (absl::Status st = CheckArmMask(arm); !st.ok()) return st;
    if (absl::Status st =
            ValidateTraining(arm.training(), absl::StrCat(prefix, "training."));
        !st.ok())
      return st;
  }
  return absl::OkStatus();
}

std::vector<Arm> ArmsOf(const SweepSpec& spec) {
  if (!spec.axes().arms().empty())
    return {spec.axes().arms().begin(), spec.axes().arms().end()};
  Arm own;
  *own.mutable_training() = spec.training();
  return {own};
}

}  // namespace qkov::core
