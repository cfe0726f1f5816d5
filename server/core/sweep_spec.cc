#include "server/core/sweep_spec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/stubs/strutil.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/proto_enums.h"
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

void ApplyTrainingDefaults(Training* t) {
  namespace d = ::qkov::defaults;
  if (t->task() == qkov::v1::TASK_KIND_UNSPECIFIED)
    t->set_task(qkov::v1::TASK_SYNTHETIC);
  auto* s = t->mutable_synthetic();
  if (s->vocab_size() == 0) s->set_vocab_size(d::kVocabSize);
  if (s->num_common() == 0) s->set_num_common(d::kNumCommon);
  if (s->num_classes() == 0) s->set_num_classes(d::kNumClasses);
  if (s->distinct_per_class() == 0)
    s->set_distinct_per_class(d::kDistinctPerClass);
  if (s->seq_len() == 0) s->set_seq_len(d::kSeqLen);
  auto* o = t->mutable_optimizer();
  if (o->kind() == qkov::v1::OPTIMIZER_KIND_UNSPECIFIED)
    o->set_kind(qkov::v1::SGD);
  if (o->adam_beta1() == 0) o->set_adam_beta1(d::kAdamBeta1);
  if (o->adam_beta2() == 0) o->set_adam_beta2(d::kAdamBeta2);
  if (o->adam_eps() == 0) o->set_adam_eps(d::kAdamEps);
  if (o->schedule() == qkov::v1::SCHEDULE_KIND_UNSPECIFIED)
    o->set_schedule(qkov::v1::CONSTANT);
  auto* i = t->mutable_init();
  if (i->qk() == qkov::v1::INIT_KIND_UNSPECIFIED)
    i->set_qk(qkov::v1::INIT_IDENTITY);
  if (i->ov() == qkov::v1::INIT_KIND_UNSPECIFIED)
    i->set_ov(qkov::v1::INIT_IDENTITY);
  if (i->identity_scale() == 0) i->set_identity_scale(d::kIdentityScale);
  if (t->max_steps() == 0) t->set_max_steps(d::kMaxSteps);
  if (t->batch_size() == 0) t->set_batch_size(d::kBatchSize);
  if (t->report_every() == 0) t->set_report_every(d::kReportEvery);
  if (t->target_loss() == 0) t->set_target_loss(d::kTargetLoss);
  if (t->loss_window() == 0) t->set_loss_window(d::kLossWindow);
  auto* e = t->mutable_evaluation();
  if (e->num_examples() == 0) e->set_num_examples(d::kNumExamples);
  if (e->eval_seed() == 0) e->set_eval_seed(d::kEvalSeed);
  if (e->tau_attention() == 0) e->set_tau_attention(d::kTauAttention);
  if (e->tau_probability() == 0) e->set_tau_probability(d::kTauProbability);
  if (e->dtap_attention_edges().empty()) {
    for (double x : d::kDtapEdges) e->add_dtap_attention_edges(x);
  }
  if (e->dtap_probability_edges().empty()) {
    for (double x : d::kDtapEdges) e->add_dtap_probability_edges(x);
  }
}

namespace {

// ApplySpecDefaults but for the arms.
void ApplyOwnDefaults(qkov::v1::SweepSpec* spec) {
  if (spec->training().task() == qkov::v1::TASK_KIND_UNSPECIFIED)
    spec->mutable_training()->set_task(qkov::v1::TASK_SYNTHETIC);
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

absl::Status ValidateTraining(const Training& t, absl::string_view prefix) {
  if (FindTask(t.task()) == nullptr) {
    return Invalid(absl::StrCat(prefix, "task"),
                   absl::StrCat("unknown task ", static_cast<int>(t.task()),
                                " (", TaskNameList(), ")"));
  }
  if (absl::Status st = TaskSettingsOf(t).check(t, prefix); !st.ok()) return st;
  const auto& o = t.optimizer();
  if (!qkov::v1::OptimizerKind_IsValid(o.kind()) || o.kind() == 0)
    return Invalid(absl::StrCat(prefix, "optimizer.kind"),
                   absl::StrCat("unknown optimizer ", o.kind(),
                                " (expected SGD or ADAMW)"));
  if (!qkov::v1::ScheduleKind_IsValid(o.schedule()) || o.schedule() == 0)
    return Invalid(
        absl::StrCat(prefix, "optimizer.schedule"),
        absl::StrCat("unknown schedule ", o.schedule(),
                     " (expected CONSTANT, COSINE_WARMUP, QK_RAMP or "
                     "ONE_CYCLE)"));
  if (absl::Status st =
          rules::CheckOneCycle(prefix, o.schedule() == qkov::v1::ONE_CYCLE,
                               TaskOrSynthetic(t.task()).allows_one_cycle);
      !st.ok())
    return st;
  const auto& in = t.init();
  for (auto [field, kind] : {std::pair<const char*, int>{"init.qk", in.qk()},
                             std::pair<const char*, int>{"init.ov", in.ov()}}) {
    if (!qkov::v1::InitKind_IsValid(kind) || kind == 0)
      return Invalid(
          absl::StrCat(prefix, field),
          absl::StrCat("unknown init ", kind,
                       " (expected INIT_IDENTITY or INIT_DEFAULT_LINEAR)"));
  }
  for (auto [rule, value] :
       {std::pair{rules::kMomentum, o.momentum()},
        std::pair{rules::kWeightDecay, o.weight_decay()},
        std::pair{rules::kAdamBeta1, o.adam_beta1()},
        std::pair{rules::kAdamBeta2, o.adam_beta2()},
        std::pair{rules::kAdamEps, o.adam_eps()},
        std::pair{rules::kIdentityScale, in.identity_scale()}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  if (absl::Status st = rules::CheckRun(prefix, t.max_steps(), t.batch_size(),
                                        t.report_every(), t.loss_window(),
                                        t.target_loss(), o.warmup_steps());
      !st.ok())
    return st;
  const auto& e = t.evaluation();
  if (absl::Status st =
          rules::Check(prefix, rules::kNumExamples, e.num_examples());
      !st.ok())
    return st;
  if (e.eval_every() > 0) {
    for (auto [rule, value] :
         {std::pair{rules::kEvalEvery, e.eval_every()},
          std::pair{rules::kEvalExamples, e.eval_examples()}}) {
      if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
        return st;
    }
  } else if (e.eval_every() < 0) {
    return rules::Check(prefix, rules::kEvalEvery, e.eval_every());
  }
  for (auto [rule, value] :
       {std::pair{rules::kTauAttention, e.tau_attention()},
        std::pair{rules::kTauProbability, e.tau_probability()}}) {
    if (absl::Status st = rules::Check(prefix, rule, value); !st.ok())
      return st;
  }
  for (auto [field, edges] :
       {std::pair{"evaluation.dtap_attention_edges", &e.dtap_attention_edges()},
        std::pair{"evaluation.dtap_probability_edges",
                  &e.dtap_probability_edges()}}) {
    if (absl::Status st = rules::CheckEdges(
            prefix, field, absl::MakeConstSpan(edges->data(), edges->size()));
        !st.ok())
      return st;
  }
  return absl::OkStatus();
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
  const TaskInfo& task = TaskOrSynthetic(spec.training().task());
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

namespace {

// A string protobuf's JSON printer writes unescaped: printable ASCII other
// than '"', '\\', '<' and '>' (which it writes as \u003c / \u003e).
bool PlainJsonString(const std::string& s) {
  for (const char ch : s) {
    if (ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' || ch == '<' ||
        ch == '>')
      return false;
  }
  return true;
}

// CanonicalJson of a flat message, only string, int32 and repeated double
// fields (heatmaps, provenance), whose strings are plain and doubles finite,
// written directly: what protobuf's printer gives (SimpleDtoa for doubles,
// fields in declaration order, defaults printed), without its generic path
// (a type resolver and a tree of default values per message). False: not
// such a message; the library prints it. sweep_spec_test checks the two
// agree byte for byte on random messages.
bool FlatJson(const google::protobuf::Message& m, std::string* out) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  if (d->oneof_decl_count() > 0) return false;
  std::string json = "{";
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->has_presence() && !f->is_repeated()) return false;
    absl::StrAppend(&json, i ? "," : "", "\"", f->name(), "\":");
    if (f->is_repeated()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE) return false;
      const auto values = r->GetRepeatedFieldRef<double>(m, f);
      json += "[";
      for (int k = 0; k < values.size(); ++k) {
        if (!std::isfinite(values.Get(k))) return false;
        absl::StrAppend(&json, k ? "," : "",
                        google::protobuf::SimpleDtoa(values.Get(k)));
      }
      json += "]";
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        if (f->type() != FieldDescriptor::TYPE_STRING) return false;
        const std::string s = r->GetString(m, f);
        if (!PlainJsonString(s)) return false;
        absl::StrAppend(&json, "\"", s, "\"");
        break;
      }
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&json, r->GetInt32(m, f));
        break;
      default:
        return false;
    }
  }
  json += "}";
  *out = std::move(json);
  return true;
}

}  // namespace

std::string CanonicalJson(const google::protobuf::Message& message) {
  std::string out;
  if (FlatJson(message, &out)) return out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  // Printing a valid in-memory message cannot fail.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

namespace {

// The JSON member `"key":value` that CanonicalJson(c) contains, so that a
// trial's canonical JSON can be assembled from per-axis pieces printed once
// instead of printing every message of a 100k grid.
std::string MemberOf(const qkov::v1::TrialConfig& c, const std::string& key) {
  const std::string json = CanonicalJson(c);
  const std::string tag = "\"" + key + "\":";
  const size_t begin = json.find(tag);
  int depth = 0;
  bool in_string = false;
  size_t i = begin + tag.size();
  for (; i < json.size(); ++i) {
    const char ch = json[i];
    if (in_string) {
      if (ch == '\\')
        ++i;
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      if (depth == 0) break;
      --depth;
    } else if (ch == ',' && depth == 0) {
      break;
    }
  }
  return json.substr(begin, i - begin);
}

}  // namespace

std::string TrainingPb(const qkov::v1::SweepSpec& spec) {
  qkov::v1::TrialConfig training_only;
  *training_only.mutable_training() = spec.training();
  return training_only.SerializeAsString();
}

std::vector<ExpandedTrial> ExpandSweep(const qkov::v1::SweepSpec& spec) {
  std::vector<ExpandedTrial> out;
  const auto& axes = spec.axes();
  std::vector<int> params(axes.parameterizations().begin(),
                          axes.parameterizations().end());
  if (params.empty())
    params.push_back(qkov::v1::PARAMETERIZATION_UNSPECIFIED);  // theory
  std::vector<double> alphas(axes.alphas().begin(), axes.alphas().end());
  if (alphas.empty())
    alphas.push_back(0);  // unset: not a fixed-attention trial
  const std::vector<qkov::v1::Arm> arms = ArmsOf(spec);
  const bool named = !axes.arms().empty();
  out.reserve(params.size() * std::max(1, axes.lr_ratios_size()) *
              std::max(1, axes.eta_ovs_size()) * axes.seeds_size() *
              alphas.size() * arms.size());
  // Canonical JSON = {parameterization, lr_ratio, eta_ov, seed, training,
  // alpha[, arm]} in field order, exactly as CanonicalJson(TrialConfig)
  // prints it (sweep_spec_test checks the two agree); `arm` is printed only
  // where it is set.
  std::vector<std::string> p_json, s_json, a_json;
  qkov::v1::TrialConfig c;
  for (double a : alphas) {
    c.set_alpha(a);
    a_json.push_back(MemberOf(c, "alpha"));
  }
  for (int p : params) {
    c.set_parameterization(static_cast<qkov::v1::Parameterization>(p));
    p_json.push_back(MemberOf(c, "parameterization"));
  }
  for (uint64_t sd : axes.seeds()) {
    c.set_seed(sd);
    s_json.push_back(MemberOf(c, "seed"));
  }
  for (const qkov::v1::Arm& arm : arms) {
    std::vector<double> ratios(axes.lr_ratios().begin(),
                               axes.lr_ratios().end());
    if (arm.has_lr_ratio()) ratios = {arm.lr_ratio()};
    std::vector<double> etas(axes.eta_ovs().begin(), axes.eta_ovs().end());
    if (arm.has_eta_ov()) etas = {arm.eta_ov()};
    std::vector<std::string> r_json, e_json;
    for (double r : ratios) {
      c.set_lr_ratio(r);
      r_json.push_back(MemberOf(c, "lr_ratio"));
    }
    for (double e : etas) {
      c.set_eta_ov(e);
      e_json.push_back(MemberOf(c, "eta_ov"));
    }
    *c.mutable_training() = arm.training();
    const std::string training_json = MemberOf(c, "training");
    std::string arm_json;
    std::string training_pb;
    if (named) {
      c.set_arm(arm.name());
      arm_json = absl::StrCat(",", MemberOf(c, "arm"));
      qkov::v1::TrialConfig training_only;
      *training_only.mutable_training() = arm.training();
      training_pb = training_only.SerializeAsString();
    }
    for (size_t pi = 0; pi < params.size(); ++pi) {
      for (size_t ri = 0; ri < ratios.size(); ++ri) {
        for (size_t ei = 0; ei < etas.size(); ++ei) {
          for (int si = 0; si < axes.seeds_size(); ++si) {
            for (size_t ai = 0; ai < alphas.size(); ++ai) {
              ExpandedTrial t;
              t.config.set_parameterization(
                  static_cast<qkov::v1::Parameterization>(params[pi]));
              t.config.set_lr_ratio(ratios[ri]);
              t.config.set_eta_ov(etas[ei]);
              t.config.set_seed(axes.seeds(si));
              t.config.set_alpha(alphas[ai]);
              if (named) t.config.set_arm(arm.name());
              t.config_json =
                  absl::StrCat("{", p_json[pi], ",", r_json[ri], ",",
                               e_json[ei], ",", s_json[si], ",", training_json,
                               ",", a_json[ai], arm_json, "}");
              t.axes_pb = t.config.SerializeAsString();
              t.training_pb = training_pb;
              t.config_hash = Sha256Hex(t.config_json);
              out.push_back(std::move(t));
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace qkov::core
