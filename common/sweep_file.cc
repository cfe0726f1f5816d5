#include "common/sweep_file.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/presets.h"
#include "common/proto_enums.h"
#include "common/status_macros.h"
#include "common/task_kind.h"

namespace qkov {
namespace {

namespace v1 = ::qkov::v1;

// Errors carry the source name and the 1-based line of the offending node.
class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  absl::Status Error(const YAML::Node& node, const std::string& field,
                     const std::string& reason) const {
    const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    return absl::InvalidArgumentError(
        line > 0 ? absl::StrCat(source_, ":", line, ": ", field, ": ", reason)
                 : absl::StrCat(source_, ": ", field, ": ", reason));
  }

  absl::Status CheckKeys(const YAML::Node& map, const std::string& field,
                         const std::set<std::string>& allowed) const {
    if (!map.IsMap()) return Error(map, field, "must be a mapping");
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        return Error(
            kv.first, field.empty() ? key : absl::StrCat(field, ".", key),
            absl::StrCat("unknown key (allowed: ", absl::StrJoin(allowed, ", "),
                         ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<double> Double(const YAML::Node& n,
                                const std::string& field) const {
    if (!n.IsScalar()) return Error(n, field, "must be a number");
    const std::string s = absl::AsciiStrToLower(n.Scalar());
    if (s == ".nan" || s == "nan") return std::nan("");
    if (s == ".inf" || s == "inf" || s == "+.inf") return HUGE_VAL;
    if (s == "-.inf" || s == "-inf") return -HUGE_VAL;
    double v;
    if (!YAML::convert<double>::decode(n, v))
      return Error(n, field,
                   absl::StrCat("'", n.Scalar(), "' is not a number"));
    return v;
  }

  absl::StatusOr<int64_t> Int(const YAML::Node& n,
                              const std::string& field) const {
    if (!n.IsScalar()) return Error(n, field, "must be an integer");
    int64_t v;
    if (!YAML::convert<int64_t>::decode(n, v))
      return Error(n, field,
                   absl::StrCat("'", n.Scalar(), "' is not an integer"));
    return v;
  }

  absl::StatusOr<uint64_t> Uint(const YAML::Node& n,
                                const std::string& field) const {
    if (!n.IsScalar()) return Error(n, field, "must be a non-negative integer");
    if (!n.Scalar().empty() && n.Scalar()[0] == '-')
      return Error(n, field, "must be a non-negative integer");
    uint64_t v;
    if (!YAML::convert<uint64_t>::decode(n, v))
      return Error(
          n, field,
          absl::StrCat("'", n.Scalar(), "' is not a non-negative integer"));
    return v;
  }

  absl::StatusOr<std::string> String(const YAML::Node& n,
                                     const std::string& field) const {
    if (!n.IsScalar()) return Error(n, field, "must be a string");
    return n.Scalar();
  }

  // A list of numbers, or a generator mapping:
  //   {logspace: [start, stop, num]}  num values from start to stop, log-spaced
  //   {linspace: [start, stop, num]}
  //   {range: [start, stop, step]}    start, start+step, ... < stop
  absl::StatusOr<std::vector<double>> Numbers(const YAML::Node& n,
                                              const std::string& field) const {
    std::vector<double> out;
    if (n.IsSequence()) {
      for (size_t i = 0; i < n.size(); ++i) {
        auto v = Double(n[i], absl::StrCat(field, "[", i, "]"));
        if (!v.ok()) return v.status();
        out.push_back(*v);
      }
      return out;
    }
    if (n.IsScalar()) {
      auto v = Double(n, field);
      if (!v.ok()) return v.status();
      return std::vector<double>{*v};
    }
    if (!n.IsMap() || n.size() != 1) {
      return Error(n, field,
                   "must be a list, a number, or one of "
                   "{logspace|linspace|range: [a, b, c]}");
    }
    const std::string kind = n.begin()->first.as<std::string>();
    const YAML::Node args = n.begin()->second;
    if (!args.IsSequence() || args.size() != 3)
      return Error(args, absl::StrCat(field, ".", kind), "needs [a, b, c]");
    std::vector<double> a;
    for (size_t i = 0; i < 3; ++i) {
      auto v = Double(args[i], absl::StrCat(field, ".", kind, "[", i, "]"));
      if (!v.ok()) return v.status();
      a.push_back(*v);
    }
    if (kind == "logspace" || kind == "linspace") {
      const int64_t num = static_cast<int64_t>(a[2]);
      if (num < 1 || num > 1000000 || a[2] != num)
        return Error(args, field, "num must be an integer in [1, 1e6]");
      if (kind == "logspace" && !(a[0] > 0 && a[1] > 0))
        return Error(args, field, "logspace needs start, stop > 0");
      for (int64_t i = 0; i < num; ++i) {
        const double f =
            num == 1 ? 0.0
                     : static_cast<double>(i) / static_cast<double>(num - 1);
        out.push_back(kind == "logspace"
                          ? std::exp(std::log(a[0]) +
                                     f * (std::log(a[1]) - std::log(a[0])))
                          : a[0] + f * (a[1] - a[0]));
      }
      return out;
    }
    if (kind == "range") {
      if (!(a[2] > 0)) return Error(args, field, "range step must be > 0");
      if ((a[1] - a[0]) / a[2] > 1e6)
        return Error(args, field, "range has more than 1e6 values");
      for (double x = a[0]; x < a[1]; x += a[2]) out.push_back(x);
      return out;
    }
    return Error(n, field,
                 absl::StrCat("unknown generator '", kind,
                              "' (expected logspace, linspace or range)"));
  }

 private:
  std::string source_;
};

#define QKOV_TRY(lhs, expr)                     \
  do {                                          \
    auto qkov_v_ = (expr);                      \
    if (!qkov_v_.ok()) return qkov_v_.status(); \
    lhs = *qkov_v_;                             \
  } while (0)
#define QKOV_CHECK(expr)               \
  do {                                 \
    absl::Status qkov_s_ = (expr);     \
    if (!qkov_s_.ok()) return qkov_s_; \
  } while (0)

// The names an enum value takes in a sweep file: its proto name, lower-case,
// without its type's prefix (INIT_IDENTITY is "identity"), and these
// aliases.
struct EnumPrefix {
  const char* type;
  const char* prefix;
};
constexpr EnumPrefix kEnumPrefixes[] = {
    {"qkov.v1.InitKind", "init_"},
    {"qkov.v1.TextReadout", "readout_"},
    {"qkov.v1.ParamGroupKind", "param_group_"}};
struct EnumAlias {
  const char* type;
  const char* alias;
  const char* value;
};
constexpr EnumAlias kEnumAliases[] = {
    {"qkov.v1.InitKind", "default", "INIT_DEFAULT_LINEAR"}};

// Every accepted name of `type`'s values (0, "unspecified", has none).
// TaskKind's are the task table's (common/task_info.h): config.proto's
// tasks and those registered outside it.
std::map<std::string, int> EnumNames(
    const google::protobuf::EnumDescriptor* type) {
  if (type == qkov::v1::TaskKind_descriptor()) {
    std::map<std::string, int> tasks;
    for (const TaskInfo& t : Tasks()) tasks[t.name] = t.kind;
    return tasks;
  }
  std::string prefix;
  for (const EnumPrefix& e : kEnumPrefixes) {
    if (type->full_name() == e.type) prefix = e.prefix;
  }
  std::map<std::string, int> names;
  for (int i = 0; i < type->value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* v = type->value(i);
    if (v->number() == 0) continue;
    std::string name = absl::AsciiStrToLower(v->name());
    if (!prefix.empty() && absl::StartsWith(name, prefix))
      name = name.substr(prefix.size());
    names[name] = v->number();
  }
  for (const EnumAlias& a : kEnumAliases) {
    if (type->full_name() == a.type)
      names[a.alias] = type->FindValueByName(a.value)->number();
  }
  return names;
}

// The sweep-file name of enum value `number` of `type` ("" for 0).
std::string EnumName(const google::protobuf::EnumDescriptor* type, int number) {
  for (const auto& [name, n] : EnumNames(type)) {
    // Aliases are extra names; the canonical one is the proto's own.
    bool alias = false;
    for (const EnumAlias& a : kEnumAliases)
      alias |= type->full_name() == a.type && name == a.alias;
    if (n == number && !alias) return name;
  }
  return "";
}

// `m` as a YAML mapping by its descriptor, the inverse of ParseMessage:
// plain scalars always, `optional` ones and messages when set, repeated
// doubles as flow lists, enums by name (left out when unspecified).
void EmitMessage(const google::protobuf::Message& m, YAML::Emitter& out) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  out << YAML::BeginMap;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE) continue;
      out << YAML::Key << f->name() << YAML::Value << YAML::Flow
          << YAML::BeginSeq;
      for (int k = 0; k < r->FieldSize(m, f); ++k)
        out << r->GetRepeatedDouble(m, f, k);
      out << YAML::EndSeq;
      continue;
    }
    // An unset `optional` scalar means "the task's default"; writing its
    // zero would read back as set.
    if (f->has_presence() && !r->HasField(m, f)) continue;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        out << YAML::Key << f->name() << YAML::Value;
        EmitMessage(r->GetMessage(m, f), out);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        out << YAML::Key << f->name() << YAML::Value << r->GetInt32(m, f);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        out << YAML::Key << f->name() << YAML::Value << r->GetInt64(m, f);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        out << YAML::Key << f->name() << YAML::Value << r->GetUInt64(m, f);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        out << YAML::Key << f->name() << YAML::Value << r->GetDouble(m, f);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        out << YAML::Key << f->name() << YAML::Value << r->GetString(m, f);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out << YAML::Key << f->name() << YAML::Value << r->GetBool(m, f);
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const std::string name =
            EnumName(f->enum_type(), r->GetEnumValue(m, f));
        if (!name.empty()) out << YAML::Key << f->name() << YAML::Value << name;
        break;
      }
      default:
        break;
    }
  }
  out << YAML::EndMap;
}

// Fills `out` from the mapping `node` by `out`'s descriptor: every key a
// field name, every value of the field's type (a message is a nested
// mapping; repeated doubles take Numbers). `field` is the path so far.
absl::Status ParseMessage(const Parser& p, const YAML::Node& node,
                          const std::string& field,
                          google::protobuf::Message* out) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* d = out->GetDescriptor();
  const google::protobuf::Reflection* r = out->GetReflection();
  std::set<std::string> allowed;
  for (int i = 0; i < d->field_count(); ++i)
    allowed.insert(d->field(i)->name());
  QKOV_CHECK(p.CheckKeys(node, field, allowed));
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const FieldDescriptor* f = d->FindFieldByName(key);
    const std::string path = absl::StrCat(field, ".", key);
    const YAML::Node v = kv.second;
    if (f->is_repeated()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE)
        return p.Error(v, path, "lists of this type are not supported");
      std::vector<double> values;
      QKOV_TRY(values, p.Numbers(v, path));
      r->ClearField(out, f);
      for (double x : values) r->AddDouble(out, f, x);
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        QKOV_CHECK(ParseMessage(p, v, path, r->MutableMessage(out, f)));
        break;
      case FieldDescriptor::CPPTYPE_INT32: {
        int64_t x;
        QKOV_TRY(x, p.Int(v, path));
        if (x < INT32_MIN || x > INT32_MAX)
          return p.Error(
              v, path,
              absl::StrCat(x, " is out of range for a 32-bit integer"));
        r->SetInt32(out, f, static_cast<int32_t>(x));
        break;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        int64_t x;
        QKOV_TRY(x, p.Int(v, path));
        r->SetInt64(out, f, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t x;
        QKOV_TRY(x, p.Uint(v, path));
        r->SetUInt64(out, f, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_DOUBLE: {
        double x;
        QKOV_TRY(x, p.Double(v, path));
        r->SetDouble(out, f, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string x;
        QKOV_TRY(x, p.String(v, path));
        r->SetString(out, f, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        bool x;
        if (!v.IsScalar() || !YAML::convert<bool>::decode(v, x))
          return p.Error(v, path, "must be true or false");
        r->SetBool(out, f, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const std::map<std::string, int> names = EnumNames(f->enum_type());
        if (!v.IsScalar()) return p.Error(v, path, "must be a name");
        auto it = names.find(absl::AsciiStrToLower(v.Scalar()));
        if (it == names.end()) {
          std::vector<std::string> all;
          for (const auto& [name, number] : names) all.push_back(name);
          return p.Error(
              v, path,
              absl::StrCat("unknown value '", v.Scalar(), "' (expected ",
                           absl::StrJoin(all, ", "), ")"));
        }
        r->SetEnumValue(out, f, it->second);
        break;
      }
      default:
        return p.Error(v, path, "fields of this type are not supported");
    }
  }
  return absl::OkStatus();
}

// The paths of the leaves under `node` (a mapping ParseMessage accepted),
// relative to it: "optimizer.weight_decay", "text.mlp_lr_multiplier".
void LeafPaths(const YAML::Node& node, const std::string& prefix,
               std::vector<std::string>* out) {
  for (const auto& kv : node) {
    const std::string path = prefix + kv.first.as<std::string>();
    if (kv.second.IsMap()) {
      LeafPaths(kv.second, path + ".", out);
    } else {
      out->push_back(path);
    }
  }
}

// axes.arm: a list of {name, lr_ratio, eta_ov, training}; a field of an arm
// is named "axes.arm[NAME]" so that a refusal names the arm.
absl::Status ParseArms(const Parser& p, const YAML::Node& n,
                       v1::SweepAxes* axes) {
  if (!n.IsSequence())
    return p.Error(n, "axes.arm",
                   "must be a list of arms, each {name, lr_ratio, eta_ov, "
                   "training}");
  for (size_t k = 0; k < n.size(); ++k) {
    const YAML::Node item = n[k];
    std::string field = absl::StrCat("axes.arm[", k, "]");
    if (!item.IsMap())
      return p.Error(item, field,
                     "must be a mapping {name, lr_ratio, eta_ov, training}");
    if (!item["name"]) return p.Error(item, field + ".name", "is required");
    v1::Arm* arm = axes->add_arms();
    std::string name;
    QKOV_TRY(name, p.String(item["name"], field + ".name"));
    arm->set_name(name);
    field = absl::StrCat("axes.arm[", name, "]");
    QKOV_CHECK(
        p.CheckKeys(item, field, {"name", "lr_ratio", "eta_ov", "training"}));
    double x;
    if (item["lr_ratio"]) {
      QKOV_TRY(x, p.Double(item["lr_ratio"], field + ".lr_ratio"));
      arm->set_lr_ratio(x);
    }
    if (item["eta_ov"]) {
      QKOV_TRY(x, p.Double(item["eta_ov"], field + ".eta_ov"));
      arm->set_eta_ov(x);
    }
    const YAML::Node t = item["training"];
    if (!t || t.IsNull()) continue;
    QKOV_CHECK(
        ParseMessage(p, t, field + ".training", arm->mutable_training()));
    if (t["task"])
      return p.Error(t["task"], field + ".training.task",
                     "an arm cannot change the task");
    std::vector<std::string> paths;
    LeafPaths(t, "", &paths);
    for (const std::string& path : paths)
      arm->mutable_training_fields()->add_paths(path);
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SweepSpec> Convert(const Parser& p, const YAML::Node& root) {
  v1::SweepSpec spec;
  if (!root.IsMap())
    return p.Error(root, "(top level)",
                   "a sweep file must be a mapping with name, axes, training");
  QKOV_CHECK(p.CheckKeys(root, "",
                         {"name", "description", "priority", "max_attempts",
                          "axes", "training", "search", "early_stopping"}));
  if (!root["name"]) return p.Error(root, "name", "is required");
  std::string s;
  QKOV_TRY(s, p.String(root["name"], "name"));
  spec.set_name(s);
  if (root["description"]) {
    QKOV_TRY(s, p.String(root["description"], "description"));
    spec.set_description(s);
  }
  int64_t i;
  if (root["priority"]) {
    QKOV_TRY(i, p.Int(root["priority"], "priority"));
    spec.set_priority(static_cast<int32_t>(i));
  }
  if (root["max_attempts"]) {
    QKOV_TRY(i, p.Int(root["max_attempts"], "max_attempts"));
    spec.set_max_attempts(static_cast<int32_t>(i));
  }
  const YAML::Node axes = root["axes"];
  if (!axes)
    return p.Error(root, "axes",
                   "is required (parameterization, lr_ratio, eta_ov, seed)");
  QKOV_CHECK(p.CheckKeys(
      axes, "axes",
      {"parameterization", "lr_ratio", "eta_ov", "seed", "alpha", "arm"}));
  auto* a = spec.mutable_axes();
  if (const YAML::Node n = axes["parameterization"]) {
    const std::string parameterizations = EnumValueList<v1::Parameterization>();
    if (!n.IsSequence() && !n.IsScalar())
      return p.Error(n, "axes.parameterization",
                     absl::StrCat("must be a list of ", parameterizations));
    const size_t count = n.IsSequence() ? n.size() : 1;
    for (size_t k = 0; k < count; ++k) {
      const YAML::Node item = n.IsSequence() ? n[k] : n;
      const std::string field = absl::StrCat("axes.parameterization[", k, "]");
      if (!item.IsScalar())
        return p.Error(item, field,
                       absl::StrCat("must be ", parameterizations));
      v1::Parameterization v;
      if (!v1::Parameterization_Parse(absl::AsciiStrToUpper(item.Scalar()),
                                      &v) ||
          v == v1::PARAMETERIZATION_UNSPECIFIED) {
        return p.Error(item, field,
                       absl::StrCat("unknown parameterization '", item.Scalar(),
                                    "' (expected ", parameterizations, ")"));
      }
      a->add_parameterizations(v);
    }
  }
  std::vector<double> values;
  if (axes["lr_ratio"]) {
    QKOV_TRY(values, p.Numbers(axes["lr_ratio"], "axes.lr_ratio"));
    for (double v : values) a->add_lr_ratios(v);
  }
  if (axes["eta_ov"]) {
    QKOV_TRY(values, p.Numbers(axes["eta_ov"], "axes.eta_ov"));
    for (double v : values) a->add_eta_ovs(v);
  }
  if (axes["alpha"]) {
    QKOV_TRY(values, p.Numbers(axes["alpha"], "axes.alpha"));
    for (double v : values) a->add_alphas(v);
  }
  if (const YAML::Node n = axes["seed"]) {
    if (n.IsSequence()) {
      for (size_t k = 0; k < n.size(); ++k) {
        uint64_t u;
        QKOV_TRY(u, p.Uint(n[k], absl::StrCat("axes.seed[", k, "]")));
        a->add_seeds(u);
      }
    } else {
      QKOV_TRY(values, p.Numbers(n, "axes.seed"));
      for (double v : values) {
        if (v < 0 || v != std::floor(v))
          return p.Error(n, "axes.seed", "seeds must be non-negative integers");
        a->add_seeds(static_cast<uint64_t>(v));
      }
    }
  }
  if (const YAML::Node n = axes["arm"]; n && !n.IsNull())
    QKOV_CHECK(ParseArms(p, n, a));
  if (const YAML::Node t = root["training"])
    QKOV_CHECK(ParseMessage(p, t, "training", spec.mutable_training()));
  // `search: null` (or ~) is no search: a grid (what `--set search=null` makes
  // of a search file).
  if (const YAML::Node t = root["search"]; t && !t.IsNull())
    QKOV_CHECK(ParseMessage(p, t, "search", spec.mutable_search()));
  if (const YAML::Node t = root["early_stopping"]; t && !t.IsNull()) {
    QKOV_CHECK(
        ParseMessage(p, t, "early_stopping", spec.mutable_early_stopping()));
  }
  return spec;
}

// Sets root[a][b]...= value for "a.b...=value", creating maps on the way.
absl::Status ApplyOverride(YAML::Node root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set ", assignment, ": expected key=value"));
  }
  const std::vector<std::string> path =
      absl::StrSplit(assignment.substr(0, eq), '.');
  // Each level below clones the node it descends into, so the cost grows
  // with the square of the depth: a key deeper than any field of a sweep
  // file is refused before any of that work.
  constexpr size_t kMaxKeyDepth = 16;
  if (path.size() > kMaxKeyDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--set ", assignment.substr(0, eq), ": ", path.size(),
        " levels of keys; a sweep file nests at most ", kMaxKeyDepth));
  }
  for (const std::string& part : path) {
    if (part.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--set ", assignment.substr(0, eq),
          ": an empty key name (two dots in a row, or a dot at an end)"));
    }
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set ", assignment, ": value is not YAML: ", e.msg));
  }
  std::function<YAML::Node(YAML::Node, size_t)> set =
      [&](YAML::Node node, size_t i) -> YAML::Node {
    YAML::Node copy =
        node.IsMap() ? YAML::Clone(node) : YAML::Node(YAML::NodeType::Map);
    if (i + 1 == path.size()) {
      copy[path[i]] = value;
    } else {
      copy[path[i]] = set(copy[path[i]], i + 1);
    }
    return copy;
  };
  YAML::Node updated = set(root, 0);
  for (const auto& kv : updated) root[kv.first.as<std::string>()] = kv.second;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SweepSpec> ParseSweepText(
    const std::string& text, const std::string& source,
    const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ":", e.mark.line + 1, ": not valid YAML: ", e.msg));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid YAML: ", e.msg));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": a sweep file must be a mapping with name, axes, training"));
  }
  for (const std::string& o : overrides) {
    // A key that is not a scalar (`[a, b]: 1`) cannot be copied by name.
    try {
      if (absl::Status s = ApplyOverride(root, o); !s.ok()) return s;
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set ", o, ": cannot apply to ", source, ": ", e.msg));
    }
  }
  Parser parser(source);
  try {
    return Convert(parser, root);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.line + 1, ": ", e.msg));
  }
}

absl::StatusOr<v1::SweepSpec> LoadSweepFile(
    const std::string& path, const std::vector<std::string>& overrides) {
  // Sized before it is read: a sweep file is a page of YAML, and the server
  // takes no request over 16 MiB.
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxSweepFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes; a sweep file may be at most ",
                     kMaxSweepFileBytes, " bytes"));
  }
  if (!ec && std::filesystem::is_directory(path, ec))
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  std::ifstream in(path);
  if (!in)
    return absl::NotFoundError(absl::StrCat(path, ": cannot open sweep file"));
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseSweepText(buf.str(), path, overrides);
}

namespace {

// The value at `path` (dotted field names) of `m`, as a sweep file spells it.
std::string ValueAt(const google::protobuf::Message& m,
                    const std::string& path) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Message* at = &m;
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* f = at->GetDescriptor()->FindFieldByName(parts[i]);
    if (f == nullptr) return "?";
    const google::protobuf::Reflection* r = at->GetReflection();
    if (f->is_repeated()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE) return "[...]";
      std::vector<std::string> values;
      for (int k = 0; k < r->FieldSize(*at, f); ++k)
        values.push_back(
            absl::StrFormat("%g", r->GetRepeatedDouble(*at, f, k)));
      return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (i + 1 == parts.size()) return "{...}";
        at = &r->GetMessage(*at, f);
        continue;
      case FieldDescriptor::CPPTYPE_INT32:
        return absl::StrCat(r->GetInt32(*at, f));
      case FieldDescriptor::CPPTYPE_INT64:
        return absl::StrCat(r->GetInt64(*at, f));
      case FieldDescriptor::CPPTYPE_UINT64:
        return absl::StrCat(r->GetUInt64(*at, f));
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return absl::StrFormat("%g", r->GetDouble(*at, f));
      case FieldDescriptor::CPPTYPE_STRING:
        return r->GetString(*at, f);
      case FieldDescriptor::CPPTYPE_BOOL:
        return r->GetBool(*at, f) ? "true" : "false";
      case FieldDescriptor::CPPTYPE_ENUM:
        return EnumName(f->enum_type(), r->GetEnumValue(*at, f));
      default:
        return "?";
    }
  }
  return "?";
}

}  // namespace

std::string ArmSettingsText(const v1::Arm& arm) {
  std::vector<std::string> out;
  for (const std::string& path : arm.training_fields().paths())
    out.push_back(absl::StrCat(path, "=", ValueAt(arm.training(), path)));
  return absl::StrJoin(out, ", ");
}

std::string TrialSweepText(const std::string& name,
                           const v1::TrialConfig& config) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "axes" << YAML::Value << YAML::BeginMap;
  if (config.parameterization() != v1::PARAMETERIZATION_UNSPECIFIED) {
    out << YAML::Key << "parameterization" << YAML::Value << YAML::Flow
        << YAML::BeginSeq
        << v1::Parameterization_Name(config.parameterization()) << YAML::EndSeq;
  }
  out << YAML::Key << "lr_ratio" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << config.lr_ratio() << YAML::EndSeq;
  out << YAML::Key << "eta_ov" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << config.eta_ov() << YAML::EndSeq;
  out << YAML::Key << "seed" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << config.seed() << YAML::EndSeq;
  if (TaskOrDefault(config.training().task()).takes_alphas) {
    out << YAML::Key << "alpha" << YAML::Value << YAML::Flow << YAML::BeginSeq
        << config.alpha() << YAML::EndSeq;
  }
  // The arm by name alone: `training` below already holds its settings,
  // and the name keeps the config (and its hash) the trial's.
  if (config.has_arm()) {
    out << YAML::Key << "arm" << YAML::Value << YAML::Flow << YAML::BeginSeq
        << YAML::BeginMap << YAML::Key << "name" << YAML::Value << config.arm()
        << YAML::EndMap << YAML::EndSeq;
  }
  out << YAML::EndMap;
  out << YAML::Key << "training" << YAML::Value;
  EmitMessage(config.training(), out);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {

void AddSetting(std::vector<ConfigSetting>* out, std::string key,
                ConfigSetting::Type type) {
  ConfigSetting& s = out->emplace_back();
  s.key = std::move(key);
  s.type = type;
}

// The settings of message `m` under `prefix`, as EmitMessage writes them.
void MessageSettings(const google::protobuf::Message& m,
                     const std::string& prefix,
                     std::vector<ConfigSetting>* out) {
  using google::protobuf::FieldDescriptor;
  using Type = ConfigSetting::Type;
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string key = absl::StrCat(prefix, f->name());
    if (f->is_repeated()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE) continue;
      std::vector<std::string> values;
      for (int k = 0; k < r->FieldSize(m, f); ++k)
        values.push_back(
            absl::StrFormat("%.17g", r->GetRepeatedDouble(m, f, k)));
      AddSetting(out, key, Type::kText);
      out->back().text = absl::StrCat("[", absl::StrJoin(values, ", "), "]");
      continue;
    }
    if (f->has_presence() && !r->HasField(m, f)) continue;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        MessageSettings(r->GetMessage(m, f), key + ".", out);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        AddSetting(out, key, Type::kInteger);
        out->back().integer = r->GetInt32(m, f);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        AddSetting(out, key, Type::kInteger);
        out->back().integer = r->GetInt64(m, f);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        AddSetting(out, key, Type::kInteger);
        out->back().integer = r->GetUInt32(m, f);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        AddSetting(out, key, Type::kInteger);
        out->back().integer = static_cast<int64_t>(r->GetUInt64(m, f));
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AddSetting(out, key, Type::kNumber);
        out->back().number = r->GetDouble(m, f);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        AddSetting(out, key, Type::kNumber);
        out->back().number = r->GetFloat(m, f);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        AddSetting(out, key, Type::kText);
        out->back().text = r->GetString(m, f);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        AddSetting(out, key, Type::kFlag);
        out->back().flag = r->GetBool(m, f);
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        std::string name = EnumName(f->enum_type(), r->GetEnumValue(m, f));
        if (name.empty()) break;
        AddSetting(out, key, Type::kText);
        out->back().text = std::move(name);
        break;
      }
    }
  }
}

}  // namespace

std::vector<ConfigSetting> AxisSettings(const v1::TrialConfig& config,
                                        v1::TaskKind task) {
  using Type = ConfigSetting::Type;
  std::vector<ConfigSetting> out;
  if (config.parameterization() != v1::PARAMETERIZATION_UNSPECIFIED) {
    AddSetting(&out, "parameterization", Type::kText);
    out.back().text = v1::Parameterization_Name(config.parameterization());
  }
  AddSetting(&out, "lr_ratio", Type::kNumber);
  out.back().number = config.lr_ratio();
  AddSetting(&out, "eta_ov", Type::kNumber);
  out.back().number = config.eta_ov();
  AddSetting(&out, "seed", Type::kInteger);
  out.back().integer = static_cast<int64_t>(config.seed());
  if (TaskOrDefault(task).takes_alphas) {
    AddSetting(&out, "alpha", Type::kNumber);
    out.back().number = config.alpha();
  }
  if (config.has_arm()) {
    AddSetting(&out, "arm", Type::kText);
    out.back().text = config.arm();
  }
  return out;
}

std::vector<ConfigSetting> TrainingSettings(const v1::Training& training) {
  std::vector<ConfigSetting> out;
  MessageSettings(training, "training.", &out);
  return out;
}

std::vector<ConfigSetting> ConfigSettings(const v1::TrialConfig& config) {
  std::vector<ConfigSetting> out =
      AxisSettings(config, config.training().task());
  for (ConfigSetting& s : TrainingSettings(config.training()))
    out.push_back(std::move(s));
  return out;
}

absl::StatusOr<v1::SweepSpec> SpecFromSource(const SweepFileSource& source) {
  if (source.preset.empty() == source.text.empty())
    return absl::InvalidArgumentError(
        "give a sweep file's text or a preset's name, not both or neither");
  if (source.preset.empty()) {
    if (source.quick)
      return absl::InvalidArgumentError("quick goes with a preset");
    if (source.text.size() > kMaxSweepFileBytes)
      return absl::InvalidArgumentError(absl::StrCat(
          source.source_name, ": ", source.text.size(),
          " bytes; a sweep file may hold at most ", kMaxSweepFileBytes));
    return ParseSweepText(source.text, source.source_name, source.overrides);
  }
  ASSIGN_OR_RETURN(Preset preset, FindPreset(source.preset));
  std::vector<std::string> overrides =
      source.quick ? preset.quick : std::vector<std::string>{};
  overrides.insert(overrides.end(), source.overrides.begin(),
                   source.overrides.end());
  const PresetText text = WithDataPaths(preset);
  ASSIGN_OR_RETURN(
      v1::SweepSpec spec,
      ParseSweepText(text.yaml, "preset " + preset.name, overrides));
  spec.set_preset(source.quick ? preset.name + " --quick" : preset.name);
  if (!text.missing.ok() && StillReadsShippedData(spec)) return text.missing;
  return spec;
}

}  // namespace qkov
