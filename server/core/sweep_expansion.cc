#include "server/core/sweep_expansion.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/stubs/strutil.h>
#include <google/protobuf/util/json_util.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/sweep_arms.h"

namespace qkov::core {

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
