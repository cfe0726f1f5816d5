// Sweep specs: defaults, validation messages naming the field, expansion,
// and trial ids that do not depend on grid order.
#include "server/core/sweep_spec.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "qkov/v1/worker.pb.h"
#include "server/core/trial_memory.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;

v1::SweepSpec Demo() {
  v1::SweepSpec s;
  s.set_name("demo");
  for (auto p : {v1::FAFO, v1::FACO, v1::CAFO, v1::CACO})
    s.mutable_axes()->add_parameterizations(p);
  s.mutable_axes()->add_lr_ratios(1);
  s.mutable_axes()->add_lr_ratios(20);
  s.mutable_axes()->add_eta_ovs(0.1);
  s.mutable_axes()->add_seeds(1234);
  s.mutable_axes()->add_seeds(1235);
  ApplySpecDefaults(&s);
  return s;
}

std::string ErrorOf(const v1::SweepSpec& s) {
  absl::Status st = ValidateSweepSpec(s, SpecLimits{});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  return std::string(st.message());
}

TEST(SweepSpecTest, DefaultsArePapersSyntheticSetup) {
  v1::SweepSpec s = Demo();
  const auto& t = s.training();
  EXPECT_EQ(t.task(), v1::TASK_SYNTHETIC);
  EXPECT_EQ(t.synthetic().vocab_size(), 50);
  EXPECT_EQ(t.synthetic().seq_len(), 64);
  EXPECT_EQ(t.batch_size(), 32);
  EXPECT_EQ(t.optimizer().kind(), v1::SGD);
  EXPECT_DOUBLE_EQ(t.init().identity_scale(), 1e-6);
  EXPECT_DOUBLE_EQ(t.target_loss(), 1e-3);
  EXPECT_EQ(t.evaluation().dtap_attention_edges_size(), 6);
  EXPECT_TRUE(ValidateSweepSpec(s, SpecLimits{}).ok());
}

TEST(SweepSpecTest, ExpandsCartesianProductInAxisOrder) {
  auto trials = ExpandSweep(Demo());
  ASSERT_EQ(trials.size(), 16u);
  EXPECT_EQ(trials[0].config.parameterization(), v1::FAFO);
  EXPECT_EQ(trials[0].config.seed(), 1234u);
  EXPECT_EQ(trials[1].config.seed(), 1235u);
  EXPECT_DOUBLE_EQ(trials[2].config.lr_ratio(), 20);
  EXPECT_EQ(trials[15].config.parameterization(), v1::CACO);
  std::set<std::string> hashes;
  for (const auto& t : trials) {
    hashes.insert(t.config_hash);
    EXPECT_EQ(t.config_hash, Sha256Hex(t.config_json));
    EXPECT_NE(t.config_json.find("\"training\""), std::string::npos);
  }
  EXPECT_EQ(hashes.size(), 16u);
}

// Re-submission matches points by config_hash, so the hash of a point must
// not depend on the axis order, the run, or the sweep's name.
TEST(SweepSpecTest, HashesAreStableAcrossRunsOrderingsAndNames) {
  v1::SweepSpec a = Demo();
  v1::SweepSpec b = Demo();
  // Reverse every axis.
  auto* ax = b.mutable_axes();
  std::reverse(ax->mutable_parameterizations()->begin(),
               ax->mutable_parameterizations()->end());
  std::reverse(ax->mutable_lr_ratios()->begin(),
               ax->mutable_lr_ratios()->end());
  std::reverse(ax->mutable_seeds()->begin(), ax->mutable_seeds()->end());
  std::map<std::string, std::string> by_config_a, by_config_b;
  for (const auto& t : ExpandSweep(a))
    by_config_a[t.config_json] = t.config_hash;
  for (const auto& t : ExpandSweep(b))
    by_config_b[t.config_json] = t.config_hash;
  EXPECT_EQ(by_config_a, by_config_b);
  // Same run twice: same hashes, in the same order.
  auto x = ExpandSweep(a), y = ExpandSweep(a);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(x[i].config_hash, y[i].config_hash);
  // A known value, so a change in canonical form cannot pass unnoticed.
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Another sweep name, same configs: same hashes.
  v1::SweepSpec c = Demo();
  c.set_name("other");
  EXPECT_EQ(ExpandSweep(c)[0].config_hash, x[0].config_hash);
}

// Each trial's assembled JSON, and its binary (axes + the spec's training),
// equal the canonical JSON printed from the full config.
void ExpectConfigsAsPrinted(const v1::SweepSpec& spec,
                            const std::vector<ExpandedTrial>& trials) {
  for (const auto& t : trials) {
    v1::TrialConfig full = t.config;
    *full.mutable_training() = spec.training();
    EXPECT_EQ(t.config_json, CanonicalJson(full));
    v1::TrialConfig from_pb;
    ASSERT_TRUE(from_pb.ParseFromString(t.axes_pb + TrainingPb(spec)));
    EXPECT_EQ(CanonicalJson(from_pb), t.config_json);
  }
}

TEST(SweepSpecTest, AssembledJsonAndBinaryEqualPrintedCanonicalJson) {
  v1::SweepSpec s = Demo();
  s.mutable_axes()->add_lr_ratios(0.1 +
                                  0.2);  // a value with a long shortest form
  s.mutable_axes()->add_seeds(18446744073709551615ull);
  s.mutable_axes()->add_seeds(0);
  s.set_description("quotes \" and , commas");
  ExpectConfigsAsPrinted(s, ExpandSweep(s));
}

TEST(SweepSpecTest, ConfigChangeChangesHash) {
  v1::SweepSpec a = Demo(), b = Demo();
  b.mutable_training()->set_max_steps(a.training().max_steps() + 1);
  EXPECT_NE(ExpandSweep(a)[0].config_hash, ExpandSweep(b)[0].config_hash);
}

TEST(SweepSpecTest, RefusalsNameTheField) {
  v1::SweepSpec s = Demo();
  s.mutable_axes()->set_parameterizations(2,
                                          static_cast<v1::Parameterization>(7));
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.parameterizations[2]: unknown parameterization 7 "
            "(expected FAFO, FACO, CAFO or CACO)");

  s = Demo();
  s.mutable_axes()->set_lr_ratios(1, -3);
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.lr_ratios[1]: must be finite and > 0 (got -3)");

  s = Demo();
  s.mutable_axes()->set_eta_ovs(0, std::nan(""));
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.eta_ovs[0]: must be finite and > 0 (got nan)");

  s = Demo();
  s.mutable_axes()->clear_seeds();
  EXPECT_EQ(ErrorOf(s), "spec.axes.seeds: axis is empty");

  s = Demo();
  s.mutable_axes()->clear_parameterizations();
  EXPECT_NE(ErrorOf(s).find("spec.axes.parameterizations: axis is empty"),
            std::string::npos);

  s = Demo();
  s.mutable_axes()->add_lr_ratios(20);
  EXPECT_EQ(ErrorOf(s), "spec.axes.lr_ratios[2]: duplicate value");

  s = Demo();
  s.set_name("bad name!");
  EXPECT_NE(ErrorOf(s).find("spec.name"), std::string::npos);

  // The preset a sweep came from is a preset's name (and " --quick").
  s = Demo();
  s.set_preset("paper-ratio --quick");
  EXPECT_TRUE(ValidateSweepSpec(s, SpecLimits{}).ok());
  s.set_preset("paper<script>");
  EXPECT_EQ(ErrorOf(s),
            "spec.preset: may contain only letters, digits, '_', '-', '.', ' ' "
            "(got '<')");
  s.set_preset(std::string(129, 'p'));
  EXPECT_EQ(ErrorOf(s), "spec.preset: must be at most 128 characters");

  s = Demo();
  s.mutable_training()->set_batch_size(-1);
  EXPECT_EQ(ErrorOf(s),
            "spec.training.batch_size: must be in [1, 65536] (got -1)");

  s = Demo();
  s.mutable_training()->mutable_optimizer()->set_momentum(std::nan(""));
  EXPECT_NE(ErrorOf(s).find("spec.training.optimizer.momentum"),
            std::string::npos);

  s = Demo();
  s.mutable_training()->mutable_evaluation()->set_dtap_attention_edges(2, 0.1);
  EXPECT_EQ(ErrorOf(s),
            "spec.training.evaluation.dtap_attention_edges[2]: edges must be "
            "strictly increasing");

  s = Demo();
  s.mutable_training()->set_task(v1::TASK_THEORY);
  EXPECT_NE(ErrorOf(s).find("spec.axes.parameterizations: the theory task"),
            std::string::npos);

  s = Demo();
  s.mutable_training()->set_task(static_cast<v1::TaskKind>(9));
  EXPECT_NE(ErrorOf(s).find("spec.training.task: unknown task 9"),
            std::string::npos);

  s = Demo();
  s.mutable_axes()->add_alphas(0.5);
  EXPECT_EQ(ErrorOf(s), "spec.axes.alphas: the synthetic task takes no alphas");

  s = Demo();
  s.mutable_training()->set_task(v1::TASK_FIXED_ATTENTION);
  s.mutable_axes()->add_alphas(1.5);
  EXPECT_EQ(ErrorOf(s), "spec.axes.alphas[0]: must be in (0, 1] (got 1.5)");
}

TEST(SweepSpecTest, Utf8Check) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xce\xb7_QK / \xce\xb7_OV"));  // eta
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff\xfe"));
  EXPECT_FALSE(IsValidUtf8("\xce"));      // truncated
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));  // truncated
  EXPECT_FALSE(
      IsValidUtf8("a\x80"
                  "b"));  // stray continuation
}

TEST(SweepSpecTest, TheoryAndFixedAttentionGrids) {
  v1::SweepSpec theory;
  theory.set_name("theory");
  theory.mutable_training()->set_task(v1::TASK_THEORY);
  for (double r : {0.1, 1.0, 10.0}) theory.mutable_axes()->add_lr_ratios(r);
  theory.mutable_axes()->add_eta_ovs(1);
  ApplySpecDefaults(&theory);
  ASSERT_TRUE(ValidateSweepSpec(theory, SpecLimits{}).ok())
      << ValidateSweepSpec(theory, SpecLimits{});
  EXPECT_DOUBLE_EQ(theory.training().theory().m(), 5);
  EXPECT_DOUBLE_EQ(theory.training().theory().num_classes(), 20);
  auto trials = ExpandSweep(theory);
  ASSERT_EQ(trials.size(), 3u);
  EXPECT_EQ(trials[0].config.parameterization(),
            v1::PARAMETERIZATION_UNSPECIFIED);

  v1::SweepSpec fixed;
  fixed.set_name("fixed");
  fixed.mutable_training()->set_task(v1::TASK_FIXED_ATTENTION);
  fixed.mutable_axes()->add_parameterizations(v1::CACO);
  fixed.mutable_axes()->add_parameterizations(v1::FAFO);
  for (double a : {0.2, 0.6, 1.0}) fixed.mutable_axes()->add_alphas(a);
  fixed.mutable_axes()->add_eta_ovs(0.01);
  fixed.mutable_axes()->add_seeds(1234);
  ApplySpecDefaults(&fixed);
  ASSERT_TRUE(ValidateSweepSpec(fixed, SpecLimits{}).ok())
      << ValidateSweepSpec(fixed, SpecLimits{});
  trials = ExpandSweep(fixed);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_DOUBLE_EQ(trials[1].config.alpha(), 0.6);
  ExpectConfigsAsPrinted(fixed, trials);
}

TEST(SweepSpecTest, GridLimitIsEnforced) {
  v1::SweepSpec s = Demo();
  SpecLimits limits;
  limits.max_trials = 15;
  absl::Status st = ValidateSweepSpec(s, limits);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("grid has 16 trials"), std::string::npos);
}

// What protobuf's own JSON printer gives with CanonicalJson's options.
std::string LibraryJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  EXPECT_TRUE(
      google::protobuf::util::MessageToJsonString(m, &out, options).ok());
  return out;
}

// CanonicalJson writes flat messages (heatmaps, provenance) itself, for
// speed; it must give the library's bytes for every message, including the
// ones it hands back to the library (escapes, non-ASCII, NaN, infinities).
TEST(SweepSpecTest, CanonicalJsonEqualsLibraryJsonOnRandomMessages) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> strings = {
      "",      "dtap",      "x label (%)", "quote \" in", "back\\slash",
      "<tag>", "tab\there", "new\nline",   "caf\xc3\xa9", "\xe2\x80\xa8",
      "\x7f",  "ctrl\x01",  "node-017",    "GCC 12.2.0",  "{\"json\":1}"};
  const std::vector<double> doubles = {
      0,
      -0.0,
      4,
      0.1,
      0.2,
      1.0 / 3,
      1e-300,
      5e-324,
      1e300,
      -2.5,
      123456789.0,
      0.1 + 0.2,
      std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity()};
  auto pick_string = [&]() { return strings[rng() % strings.size()]; };
  auto pick_double = [&]() {
    return rng() % 3 == 0 ? doubles[rng() % doubles.size()]
                          : std::ldexp(static_cast<double>(rng() >> 11) - 4e15,
                                       static_cast<int>(rng() % 80) - 60);
  };
  for (int i = 0; i < 3000; ++i) {
    v1::Heatmap h;
    h.set_name(pick_string());
    h.set_x_label(pick_string());
    if (rng() % 4) h.set_y_label(pick_string());
    for (int k = static_cast<int>(rng() % 8); k > 0; --k)
      h.add_x_edges(pick_double());
    for (int k = static_cast<int>(rng() % 8); k > 0; --k)
      h.add_y_edges(pick_double());
    for (int k = static_cast<int>(rng() % 30); k > 0; --k)
      h.add_values(pick_double());
    ASSERT_EQ(CanonicalJson(h), LibraryJson(h)) << h.DebugString();
    v1::Provenance p;
    p.set_code_version(pick_string());
    p.set_hostname(pick_string());
    if (rng() % 2) p.set_blas(pick_string());
    p.set_torch_threads(static_cast<int32_t>(rng()));
    p.set_flush_denormals(rng() % 2 == 0);
    ASSERT_EQ(CanonicalJson(p), LibraryJson(p)) << p.DebugString();
  }
  // Messages it leaves to the library (nested, enums, int64) also agree.
  v1::SweepSpec spec = Demo();
  EXPECT_EQ(CanonicalJson(spec), LibraryJson(spec));
}

}  // namespace
}  // namespace qkov::core

namespace qkov::core {
namespace {

TEST(SweepSpecTest, RefusesTrialsThatCannotFit) {
  v1::SweepSpec s = Demo();
  // The paper's setup is small.
  EXPECT_LT(EstimateTrialMemoryBytes(s.training()), 2 << 20);
  EXPECT_TRUE(ValidateSweepSpec(s, SpecLimits{}).ok());
  // Each within its own range, together far past any worker.
  s.mutable_training()->set_batch_size(65536);
  s.mutable_training()->mutable_synthetic()->set_seq_len(100000);
  s.mutable_training()->mutable_synthetic()->set_vocab_size(100000);
  const std::string error = ErrorOf(s);
  EXPECT_EQ(error.rfind("spec.training: one trial would need about", 0), 0u)
      << error;
  for (const char* field :
       {"batch_size 65536", "synthetic.seq_len 100000",
        "synthetic.vocab_size 100000", "limit is 16.0 GB"}) {
    EXPECT_NE(error.find(field), std::string::npos) << error;
  }
  // The limit is the server's: a smaller one refuses a smaller trial.
  v1::SweepSpec mid = Demo();
  mid.mutable_training()->mutable_synthetic()->set_vocab_size(5000);
  EXPECT_TRUE(ValidateSweepSpec(mid, SpecLimits{}).ok());
  SpecLimits small;
  small.max_trial_memory_bytes = 1 << 30;
  EXPECT_EQ(ValidateSweepSpec(mid, small).code(),
            absl::StatusCode::kInvalidArgument);
}

// A lease holds one trial's whole estimate plus a stacked share for each
// further one, within the worker's budget.
TEST(SweepSpecTest, TrialsThatFitAWorkersBudget) {
  const v1::Training t = Demo().training();
  const int64_t first = EstimateTrialMemoryBytes(t);
  const int64_t each = EstimateStackedTrialBytes(t);
  // V = 50, B = 32, T = 64: 18 V^2 + 16 B V + 4 B T floats, 2 B T int64,
  // 64 KiB.
  EXPECT_EQ(each, 4 * (18 * 50 * 50 + 16 * 32 * 50 + 4 * 32 * 64) +
                      16 * 32 * 64 + 65536);
  EXPECT_EQ(TrialsThatFit(t, first + 3 * each, 256, false), 4);
  EXPECT_EQ(TrialsThatFit(t, first + 3 * each - 1, 256, false), 3);
  EXPECT_EQ(TrialsThatFit(t, first + 3 * each, 2, false), 2);  // max_trials
  EXPECT_EQ(TrialsThatFit(t, first + 3 * each, 256, true), 4);
  EXPECT_EQ(TrialsThatFit(t, first - 1, 256, false), 1);  // never none
  EXPECT_EQ(TrialsThatFit(t, 0, 8, false), 8);            // budget unknown
  EXPECT_EQ(TrialsThatFit(t, int64_t{1} << 50, 256, true), 256);
  // The stacked share grows with the circuits (V^2).
  v1::Training wide = t;
  wide.mutable_synthetic()->set_vocab_size(500);
  EXPECT_GT(EstimateStackedTrialBytes(wide), 40 * each);

  // Kinds that train one trial at a time do not stack: one a lease, so
  // that idle workers get the others.
  for (v1::TaskKind kind :
       {v1::TASK_HATEXPLAIN, v1::TASK_SQUAD, v1::TASK_THEORY}) {
    v1::Training other = t;
    other.set_task(kind);
    EXPECT_EQ(EstimateStackedTrialBytes(other), 0) << kind;
    EXPECT_EQ(TrialsThatFit(other, int64_t{1} << 40, 256, true), 1) << kind;
    EXPECT_EQ(TrialsThatFit(other, int64_t{1} << 40, 8, false), 1) << kind;
    EXPECT_EQ(TrialsThatFit(other, 0, 8, false), 1) << kind;
  }
}

}  // namespace
}  // namespace qkov::core

namespace qkov::core {
namespace {

// Re-submissions find their trials by config_hash. These values were
// produced by the code that stored the databases in use: a change to the
// canonical JSON (a protobuf upgrade printing numbers differently, a new
// default) would silently stop re-submissions from matching, so it must
// fail here first.
TEST(SweepSpecTest, ConfigHashesOfRealConfigsArePinned) {
  v1::SweepSpec demo = Demo();
  std::vector<ExpandedTrial> trials = ExpandSweep(demo);
  ASSERT_EQ(trials.size(), 16u);
  EXPECT_EQ(trials[0].config_hash,
            "8dcadb76c474768c396d1bde06a821d7e7668fc56de25e6ea811081f04c32d9e")
      << trials[0].config_json;
  EXPECT_EQ(trials[15].config_hash,
            "592724a8cca168378a06c77689f19be0adf6f55afdacaef5f179ac2cdf8c49e3")
      << trials[15].config_json;

  v1::SweepSpec theory;
  theory.set_name("theory");
  theory.mutable_training()->set_task(v1::TASK_THEORY);
  theory.mutable_axes()->add_lr_ratios(0.1 + 0.2);
  theory.mutable_axes()->add_eta_ovs(1);
  theory.mutable_axes()->add_seeds(0);
  ApplySpecDefaults(&theory);
  ASSERT_TRUE(ValidateSweepSpec(theory, SpecLimits{}).ok());
  EXPECT_EQ(ExpandSweep(theory)[0].config_hash,
            "f5818687c2dc3040624f85197e629d96056f22e3783160d5d5be677eb3aded8e")
      << ExpandSweep(theory)[0].config_json;
}

}  // namespace
}  // namespace qkov::core
