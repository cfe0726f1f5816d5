#include "client/sweep_file.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace qkov::client {
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

template <typename E>
absl::StatusOr<E> EnumFrom(const Parser& p, const YAML::Node& n,
                           const std::string& field,
                           const std::map<std::string, E>& names) {
  if (!n.IsScalar()) return p.Error(n, field, "must be a name");
  const std::string key = absl::AsciiStrToLower(n.Scalar());
  auto it = names.find(key);
  if (it == names.end()) {
    std::vector<std::string> all;
    for (const auto& [k, v] : names) all.push_back(k);
    return p.Error(n, field,
                   absl::StrCat("unknown value '", n.Scalar(), "' (expected ",
                                absl::StrJoin(all, ", "), ")"));
  }
  return it->second;
}

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

absl::Status ParseTraining(const Parser& p, const YAML::Node& t,
                           v1::Training* out) {
  QKOV_CHECK(p.CheckKeys(
      t, "training",
      {"task", "synthetic", "optimizer", "init", "max_steps", "batch_size",
       "report_every", "target_loss", "loss_window", "evaluation", "theory"}));
  if (const YAML::Node th = t["theory"]) {
    QKOV_CHECK(p.CheckKeys(
        th, "training.theory",
        {"m", "n", "b", "num_classes", "dtau", "relative_step", "max_tau",
         "target_loss", "num_thresholds", "num_samples"}));
    auto* o = out->mutable_theory();
    double x;
    int64_t k;
    if (th["m"]) {
      QKOV_TRY(x, p.Double(th["m"], "training.theory.m"));
      o->set_m(x);
    }
    if (th["n"]) {
      QKOV_TRY(x, p.Double(th["n"], "training.theory.n"));
      o->set_n(x);
    }
    if (th["b"]) {
      QKOV_TRY(x, p.Double(th["b"], "training.theory.b"));
      o->set_b(x);
    }
    if (th["num_classes"]) {
      QKOV_TRY(x, p.Double(th["num_classes"], "training.theory.num_classes"));
      o->set_num_classes(x);
    }
    if (th["dtau"]) {
      QKOV_TRY(x, p.Double(th["dtau"], "training.theory.dtau"));
      o->set_dtau(x);
    }
    if (th["relative_step"]) {
      QKOV_TRY(x,
               p.Double(th["relative_step"], "training.theory.relative_step"));
      o->set_relative_step(x);
    }
    if (th["max_tau"]) {
      QKOV_TRY(x, p.Double(th["max_tau"], "training.theory.max_tau"));
      o->set_max_tau(x);
    }
    if (th["target_loss"]) {
      QKOV_TRY(x, p.Double(th["target_loss"], "training.theory.target_loss"));
      o->set_target_loss(x);
    }
    if (th["num_thresholds"]) {
      QKOV_TRY(k,
               p.Int(th["num_thresholds"], "training.theory.num_thresholds"));
      o->set_num_thresholds(static_cast<int32_t>(k));
    }
    if (th["num_samples"]) {
      QKOV_TRY(k, p.Int(th["num_samples"], "training.theory.num_samples"));
      o->set_num_samples(static_cast<int32_t>(k));
    }
  }
  if (t["task"]) {
    v1::TaskKind k;
    QKOV_TRY(k, (EnumFrom<v1::TaskKind>(
                    p, t["task"], "training.task",
                    {{"synthetic", v1::TASK_SYNTHETIC},
                     {"theory", v1::TASK_THEORY},
                     {"fixed_attention", v1::TASK_FIXED_ATTENTION}})));
    out->set_task(k);
  }
  int64_t i;
  double d;
  if (t["max_steps"]) {
    QKOV_TRY(i, p.Int(t["max_steps"], "training.max_steps"));
    out->set_max_steps(i);
  }
  if (t["batch_size"]) {
    QKOV_TRY(i, p.Int(t["batch_size"], "training.batch_size"));
    out->set_batch_size(static_cast<int32_t>(i));
  }
  if (t["report_every"]) {
    QKOV_TRY(i, p.Int(t["report_every"], "training.report_every"));
    out->set_report_every(static_cast<int32_t>(i));
  }
  if (t["loss_window"]) {
    QKOV_TRY(i, p.Int(t["loss_window"], "training.loss_window"));
    out->set_loss_window(static_cast<int32_t>(i));
  }
  if (t["target_loss"]) {
    QKOV_TRY(d, p.Double(t["target_loss"], "training.target_loss"));
    out->set_target_loss(d);
  }
  if (const YAML::Node s = t["synthetic"]) {
    QKOV_CHECK(p.CheckKeys(s, "training.synthetic",
                           {"vocab_size", "num_common", "num_classes",
                            "distinct_per_class", "seq_len"}));
    auto* o = out->mutable_synthetic();
    if (s["vocab_size"]) {
      QKOV_TRY(i, p.Int(s["vocab_size"], "training.synthetic.vocab_size"));
      o->set_vocab_size(static_cast<int32_t>(i));
    }
    if (s["num_common"]) {
      QKOV_TRY(i, p.Int(s["num_common"], "training.synthetic.num_common"));
      o->set_num_common(static_cast<int32_t>(i));
    }
    if (s["num_classes"]) {
      QKOV_TRY(i, p.Int(s["num_classes"], "training.synthetic.num_classes"));
      o->set_num_classes(static_cast<int32_t>(i));
    }
    if (s["distinct_per_class"]) {
      QKOV_TRY(i, p.Int(s["distinct_per_class"],
                        "training.synthetic.distinct_per_class"));
      o->set_distinct_per_class(static_cast<int32_t>(i));
    }
    if (s["seq_len"]) {
      QKOV_TRY(i, p.Int(s["seq_len"], "training.synthetic.seq_len"));
      o->set_seq_len(static_cast<int32_t>(i));
    }
  }
  if (const YAML::Node o = t["optimizer"]) {
    QKOV_CHECK(
        p.CheckKeys(o, "training.optimizer",
                    {"kind", "momentum", "weight_decay", "adam_beta1",
                     "adam_beta2", "adam_eps", "schedule", "warmup_steps"}));
    auto* m = out->mutable_optimizer();
    if (o["kind"]) {
      v1::OptimizerKind k;
      QKOV_TRY(k, (EnumFrom<v1::OptimizerKind>(
                      p, o["kind"], "training.optimizer.kind",
                      {{"sgd", v1::SGD}, {"adamw", v1::ADAMW}})));
      m->set_kind(k);
    }
    if (o["schedule"]) {
      v1::ScheduleKind k;
      QKOV_TRY(k, (EnumFrom<v1::ScheduleKind>(
                      p, o["schedule"], "training.optimizer.schedule",
                      {{"constant", v1::CONSTANT},
                       {"cosine_warmup", v1::COSINE_WARMUP},
                       {"qk_ramp", v1::QK_RAMP}})));
      m->set_schedule(k);
    }
    if (o["momentum"]) {
      QKOV_TRY(d, p.Double(o["momentum"], "training.optimizer.momentum"));
      m->set_momentum(d);
    }
    if (o["weight_decay"]) {
      QKOV_TRY(d,
               p.Double(o["weight_decay"], "training.optimizer.weight_decay"));
      m->set_weight_decay(d);
    }
    if (o["adam_beta1"]) {
      QKOV_TRY(d, p.Double(o["adam_beta1"], "training.optimizer.adam_beta1"));
      m->set_adam_beta1(d);
    }
    if (o["adam_beta2"]) {
      QKOV_TRY(d, p.Double(o["adam_beta2"], "training.optimizer.adam_beta2"));
      m->set_adam_beta2(d);
    }
    if (o["adam_eps"]) {
      QKOV_TRY(d, p.Double(o["adam_eps"], "training.optimizer.adam_eps"));
      m->set_adam_eps(d);
    }
    if (o["warmup_steps"]) {
      QKOV_TRY(i, p.Int(o["warmup_steps"], "training.optimizer.warmup_steps"));
      m->set_warmup_steps(i);
    }
  }
  if (const YAML::Node n = t["init"]) {
    QKOV_CHECK(p.CheckKeys(n, "training.init", {"qk", "ov", "identity_scale"}));
    const std::map<std::string, v1::InitKind> kinds = {
        {"identity", v1::INIT_IDENTITY}, {"default", v1::INIT_DEFAULT_LINEAR}};
    v1::InitKind k;
    if (n["qk"]) {
      QKOV_TRY(k, EnumFrom(p, n["qk"], "training.init.qk", kinds));
      out->mutable_init()->set_qk(k);
    }
    if (n["ov"]) {
      QKOV_TRY(k, EnumFrom(p, n["ov"], "training.init.ov", kinds));
      out->mutable_init()->set_ov(k);
    }
    if (n["identity_scale"]) {
      QKOV_TRY(d,
               p.Double(n["identity_scale"], "training.init.identity_scale"));
      out->mutable_init()->set_identity_scale(d);
    }
  }
  if (const YAML::Node e = t["evaluation"]) {
    QKOV_CHECK(p.CheckKeys(
        e, "training.evaluation",
        {"num_examples", "eval_seed", "tau_attention", "tau_probability",
         "dtap_attention_edges", "dtap_probability_edges"}));
    auto* m = out->mutable_evaluation();
    uint64_t u;
    if (e["num_examples"]) {
      QKOV_TRY(i, p.Int(e["num_examples"], "training.evaluation.num_examples"));
      m->set_num_examples(static_cast<int32_t>(i));
    }
    if (e["eval_seed"]) {
      QKOV_TRY(u, p.Uint(e["eval_seed"], "training.evaluation.eval_seed"));
      m->set_eval_seed(u);
    }
    if (e["tau_attention"]) {
      QKOV_TRY(
          d, p.Double(e["tau_attention"], "training.evaluation.tau_attention"));
      m->set_tau_attention(d);
    }
    if (e["tau_probability"]) {
      QKOV_TRY(d, p.Double(e["tau_probability"],
                           "training.evaluation.tau_probability"));
      m->set_tau_probability(d);
    }
    std::vector<double> edges;
    if (e["dtap_attention_edges"]) {
      QKOV_TRY(edges, p.Numbers(e["dtap_attention_edges"],
                                "training.evaluation.dtap_attention_edges"));
      for (double x : edges) m->add_dtap_attention_edges(x);
    }
    if (e["dtap_probability_edges"]) {
      QKOV_TRY(edges, p.Numbers(e["dtap_probability_edges"],
                                "training.evaluation.dtap_probability_edges"));
      for (double x : edges) m->add_dtap_probability_edges(x);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::SweepSpec> Convert(const Parser& p, const YAML::Node& root) {
  v1::SweepSpec spec;
  if (!root.IsMap())
    return p.Error(root, "(top level)",
                   "a sweep file must be a mapping with name, axes, training");
  QKOV_CHECK(p.CheckKeys(
      root, "",
      {"name", "description", "priority", "max_attempts", "axes", "training"}));
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
  QKOV_CHECK(
      p.CheckKeys(axes, "axes",
                  {"parameterization", "lr_ratio", "eta_ov", "seed", "alpha"}));
  auto* a = spec.mutable_axes();
  if (const YAML::Node n = axes["parameterization"]) {
    if (!n.IsSequence() && !n.IsScalar())
      return p.Error(n, "axes.parameterization",
                     "must be a list of FAFO, FACO, CAFO, CACO");
    const size_t count = n.IsSequence() ? n.size() : 1;
    for (size_t k = 0; k < count; ++k) {
      const YAML::Node item = n.IsSequence() ? n[k] : n;
      const std::string field = absl::StrCat("axes.parameterization[", k, "]");
      if (!item.IsScalar())
        return p.Error(item, field, "must be FAFO, FACO, CAFO or CACO");
      v1::Parameterization v;
      if (!v1::Parameterization_Parse(absl::AsciiStrToUpper(item.Scalar()),
                                      &v) ||
          v == v1::PARAMETERIZATION_UNSPECIFIED) {
        return p.Error(item, field,
                       absl::StrCat("unknown parameterization '", item.Scalar(),
                                    "' (expected FAFO, FACO, CAFO or CACO)"));
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
  if (const YAML::Node t = root["training"])
    QKOV_CHECK(ParseTraining(p, t, spec.mutable_training()));
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
    if (absl::Status s = ApplyOverride(root, o); !s.ok()) return s;
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

}  // namespace qkov::client
