// Sweep files: YAML/JSON to SweepSpec, errors with line numbers.
#include "common/sweep_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qkov {
namespace {

constexpr char kDemo[] = R"(name: demo
axes:
  parameterization: [FAFO, faco, CAFO, CACO]
  lr_ratio: {logspace: [1, 100, 3]}
  eta_ov: [0.1]
  seed: [1234, 1235]
training:
  max_steps: 30000
  optimizer: {kind: sgd, schedule: qk_ramp}
  init: {qk: identity, ov: default}
  evaluation: {tau_attention: 0.5}
)";

TEST(SweepFileTest, ParsesEverySection) {
  auto s = ParseSweepText(kDemo, "demo.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name(), "demo");
  EXPECT_EQ(s->axes().parameterizations_size(), 4);
  EXPECT_EQ(s->axes().parameterizations(1), qkov::v1::FACO);
  ASSERT_EQ(s->axes().lr_ratios_size(), 3);
  EXPECT_DOUBLE_EQ(s->axes().lr_ratios(0), 1);
  EXPECT_NEAR(s->axes().lr_ratios(1), 10, 1e-12);
  EXPECT_NEAR(s->axes().lr_ratios(2), 100, 1e-9);
  EXPECT_EQ(s->axes().seeds(1), 1235u);
  EXPECT_EQ(s->training().max_steps(), 30000);
  EXPECT_EQ(s->training().optimizer().schedule(), qkov::v1::QK_RAMP);
  EXPECT_EQ(s->training().init().ov(), qkov::v1::INIT_DEFAULT_LINEAR);
  EXPECT_DOUBLE_EQ(s->training().evaluation().tau_attention(), 0.5);
}

// training: is read by qkov.v1.Training's descriptor: enum names come from
// the proto (prefix dropped, plus aliases), integers keep to their field's
// width, and a wrong enum name lists the accepted ones.
TEST(SweepFileTest, TrainingIsReadByTheProtoDescriptor) {
  std::string text = kDemo;
  text.replace(text.find("ov: default}"), 12, "ov: DEFAULT_LINEAR}");
  text += "  task: fixed_attention\n  theory: {num_samples: 7}\n";
  auto s = ParseSweepText(text, "demo.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->training().init().ov(), qkov::v1::INIT_DEFAULT_LINEAR);
  EXPECT_EQ(s->training().task(), qkov::v1::TASK_FIXED_ATTENTION);
  EXPECT_EQ(s->training().theory().num_samples(), 7);

  text = kDemo;
  text.replace(text.find("max_steps: 30000"), 16, "batch_size: 5000000000");
  s = ParseSweepText(text, "demo.yaml");
  EXPECT_EQ(s.status().message(),
            "demo.yaml:8: training.batch_size: 5000000000 is out of range "
            "for a 32-bit integer");

  text = kDemo;
  text.replace(text.find("kind: sgd"), 9, "kind: adam");
  s = ParseSweepText(text, "demo.yaml");
  EXPECT_EQ(s.status().message(),
            "demo.yaml:9: training.optimizer.kind: unknown value 'adam' "
            "(expected adamw, sgd)");
}

TEST(SweepFileTest, JsonIsAccepted) {
  auto s = ParseSweepText(
      R"({"name": "j", "axes": {"parameterization": ["CACO"], "lr_ratio": [1], "eta_ov": [0.01], "seed": [1]}})",
      "j.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->axes().parameterizations(0), qkov::v1::CACO);
}

TEST(SweepFileTest, UnknownParameterizationNamesLineAndField) {
  std::string text = kDemo;
  text.replace(text.find("CAFO"), 4, "FOOO");
  auto s = ParseSweepText(text, "demo.yaml");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(),
            "demo.yaml:3: axes.parameterization[2]: unknown parameterization "
            "'FOOO' (expected FAFO, FACO, CAFO or CACO)");
}

TEST(SweepFileTest, UnknownKeyNamesLine) {
  std::string text = std::string(kDemo) + "  max_stepz: 3\n";
  auto s = ParseSweepText(text, "demo.yaml");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find(
                "demo.yaml:12: training.max_stepz: unknown key"),
            std::string::npos)
      << s.status();
}

TEST(SweepFileTest, BadYamlNamesLine) {
  auto s = ParseSweepText("name: x\naxes: [1, 2\nfoo: bar\n", "bad.yaml");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("bad.yaml:"), std::string::npos);
  EXPECT_NE(s.status().message().find("not valid YAML"), std::string::npos)
      << s.status();
}

TEST(SweepFileTest, NanAndNegativePassThroughForTheServerToRefuse) {
  std::string text = kDemo;
  text.replace(text.find("eta_ov: [0.1]"), 13, "eta_ov: [.nan]");
  auto s = ParseSweepText(text, "demo.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(std::isnan(s->axes().eta_ovs(0)));
}

TEST(SweepFileTest, NotANumberIsRefused) {
  std::string text = kDemo;
  text.replace(text.find("max_steps: 30000"), 16, "max_steps: lots");
  auto s = ParseSweepText(text, "demo.yaml");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(),
            "demo.yaml:8: training.max_steps: 'lots' is not an integer");
}

TEST(SweepFileTest, SetOverridesApplyBeforeConversion) {
  auto s = ParseSweepText(kDemo, "demo.yaml",
                          {"training.max_steps=500", "axes.seed=[1,2,3]",
                           "training.synthetic.seq_len=128", "name=x"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->training().max_steps(), 500);
  EXPECT_EQ(s->axes().seeds_size(), 3);
  EXPECT_EQ(s->training().synthetic().seq_len(), 128);
  EXPECT_EQ(s->name(), "x");
  EXPECT_EQ(s->training().optimizer().schedule(),
            qkov::v1::QK_RAMP);  // untouched siblings kept
  EXPECT_FALSE(ParseSweepText(kDemo, "demo.yaml", {"novalue"}).ok());
}

// A key that is not a scalar in the file (`[a, b]: 1`) makes yaml-cpp throw
// TypedBadConversion while --set is applied: a refusal naming the override
// and the file, never an exception out of ParseSweepText.
TEST(SweepFileTest, OverrideBesideANonScalarKeyIsRefused) {
  const auto s = ParseSweepText("name: o\n[o, e]: 1\n", "odd.yaml",
                                {"training.max_steps=50"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message().rfind("--set training.max_steps=50: ", 0), 0u)
      << s.status();
  EXPECT_NE(s.status().message().find("odd.yaml"), std::string::npos);
}

// A --set key of hundreds of levels took longer than the fuzzer's 10 s
// budget (each level clones the node below it): keys deeper than a sweep
// file can nest, and empty key names, are refused at once, naming the key.
TEST(SweepFileTest, OverrideKeysTooDeepOrEmptyAreRefused) {
  std::string deep = "training";
  for (int i = 0; i < 300; ++i) deep += ".x";
  for (const std::string& key :
       {deep, std::string("training..max_steps"), std::string(".training"),
        std::string("training.")}) {
    const auto s = ParseSweepText(kDemo, "demo.yaml", {key + "=5"});
    ASSERT_FALSE(s.ok()) << key;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.status().message().rfind("--set " + key + ": ", 0), 0u)
        << s.status();
  }
  // Sixteen levels are still applied (and then refused by the schema, as
  // any unknown field is).
  std::string sixteen = "training";
  for (int i = 0; i < 15; ++i) sixteen += ".x";
  const auto s = ParseSweepText(kDemo, "demo.yaml", {sixteen + "=5"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().find("levels of keys"), std::string::npos)
      << s.status();
}

// search: is read by qkov.v1.RatioSearch's descriptor; `search: null` (what
// --set search=null writes) leaves a grid.
TEST(SweepFileTest, SearchIsReadAndNullMeansAGrid) {
  constexpr char kSearch[] = R"(name: s
axes: {parameterization: [FAFO], eta_ov: [0.1]}
search: {metric: ac, op: "<=", target: 0.5, lo: 2, hi: 50, resolution: 1.5,
         coarse_points: 3, seeds_per_probe: 4}
)";
  auto s = ParseSweepText(kSearch, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->has_search());
  EXPECT_EQ(s->search().metric(), "ac");
  EXPECT_EQ(s->search().op(), "<=");
  EXPECT_DOUBLE_EQ(s->search().target(), 0.5);
  EXPECT_DOUBLE_EQ(s->search().lo(), 2);
  EXPECT_DOUBLE_EQ(s->search().hi(), 50);
  EXPECT_DOUBLE_EQ(s->search().resolution(), 1.5);
  EXPECT_EQ(s->search().coarse_points(), 3);
  EXPECT_EQ(s->search().seeds_per_probe(), 4);
  auto grid = ParseSweepText(kSearch, "s.yaml",
                             {"search=null", "axes.lr_ratio=[1, 2]"});
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_FALSE(grid->has_search());
  EXPECT_EQ(grid->axes().lr_ratios_size(), 2);
  auto bad = ParseSweepText(kSearch, "s.yaml", {"search.metrc=ac"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("search.metrc"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace qkov

namespace qkov {
namespace {

TEST(SweepFileTest, AnOversizedFileIsRefusedBeforeItIsRead) {
  char tmpl[] = "/tmp/qkov-sweepfile-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/huge.yaml";
  {
    std::ofstream out(path);
    out << "name: huge\n# " << std::string(kMaxSweepFileBytes, 'x') << "\n";
  }
  absl::StatusOr<qkov::v1::SweepSpec> spec = LoadSweepFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("a sweep file may be at most"),
            std::string::npos)
      << spec.status();
  spec = LoadSweepFile(dir);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qkov

namespace qkov {
namespace {

constexpr char kArms[] = R"(name: arms
axes:
  parameterization: [FAFO]
  eta_ov: [5.0e-5]
  seed: [1, 2]
  arm:
    - name: baseline
      lr_ratio: 1
      training: {optimizer: {weight_decay: 1.0e-4}}
    - name: faster
      lr_ratio: 30
      training:
        optimizer: {weight_decay: 1.0e-3, momentum: 0}
        text: {mlp_lr_multiplier: 0}
training:
  task: hatexplain
  optimizer: {kind: adamw, weight_decay: 0.5}
)";

// Each arm: its name, its ratio, its settings and the paths of exactly the
// settings it gives (a value of zero is given too).
TEST(SweepFileTest, ArmsAreReadWithTheFieldsTheyGive) {
  auto s = ParseSweepText(kArms, "arms.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->axes().arms_size(), 2);
  const auto& base = s->axes().arms(0);
  EXPECT_EQ(base.name(), "baseline");
  EXPECT_DOUBLE_EQ(base.lr_ratio(), 1);
  EXPECT_FALSE(base.has_eta_ov());
  EXPECT_DOUBLE_EQ(base.training().optimizer().weight_decay(), 1e-4);
  EXPECT_EQ(std::vector<std::string>(base.training_fields().paths().begin(),
                                     base.training_fields().paths().end()),
            std::vector<std::string>{"optimizer.weight_decay"});
  const auto& fast = s->axes().arms(1);
  EXPECT_DOUBLE_EQ(fast.lr_ratio(), 30);
  EXPECT_TRUE(fast.training().text().has_mlp_lr_multiplier());
  EXPECT_EQ(
      std::vector<std::string>(fast.training_fields().paths().begin(),
                               fast.training_fields().paths().end()),
      (std::vector<std::string>{"optimizer.weight_decay", "optimizer.momentum",
                                "text.mlp_lr_multiplier"}));
  EXPECT_TRUE(s->axes().lr_ratios().empty());
  // What `qkov status` lists for each arm.
  EXPECT_EQ(ArmSettingsText(base), "optimizer.weight_decay=0.0001");
  EXPECT_EQ(ArmSettingsText(fast),
            "optimizer.weight_decay=0.001, optimizer.momentum=0, "
            "text.mlp_lr_multiplier=0");
  // The sweep's own settings are left alone.
  EXPECT_DOUBLE_EQ(s->training().optimizer().weight_decay(), 0.5);
}

TEST(SweepFileTest, AnArmsUnknownKeyNamesTheArmAndTheKey) {
  std::string text = kArms;
  text.replace(text.find("momentum: 0"), 11, "momentm: 0");
  auto s = ParseSweepText(text, "arms.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(
                "arms.yaml:13: axes.arm[faster].training.optimizer.momentm: "
                "unknown key"),
            std::string::npos)
      << s.status();
  text = kArms;
  text.replace(text.find("lr_ratio: 30"), 12, "ratio: 30");
  s = ParseSweepText(text, "arms.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("axes.arm[faster].ratio: unknown key"),
            std::string::npos)
      << s.status();
  s = ParseSweepText("name: a\naxes: {arm: [{lr_ratio: 2}]}\n", "a.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("axes.arm[0].name: is required"),
            std::string::npos)
      << s.status();
  s = ParseSweepText(
      "name: a\naxes: {arm: [{name: x, training: {task: theory}}]}\n",
      "a.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(
                "axes.arm[x].training.task: an arm cannot change the task"),
            std::string::npos)
      << s.status();
}

// A trial of arm "faster": ratio 30, eta_ov 5e-5, seed 7, weight decay
// 1e-3.
v1::TrialConfig ArmTrialConfig(v1::Parameterization p) {
  v1::TrialConfig c;
  c.set_parameterization(p);
  c.set_lr_ratio(30);
  c.set_eta_ov(5e-5);
  c.set_seed(7);
  c.set_arm("faster");
  c.mutable_training()->mutable_optimizer()->set_weight_decay(1e-3);
  return c;
}

// `qkov trial` prints a trial as a sweep file of one point: an arm's trial
// names its arm, and reads back as the same config.
TEST(SweepFileTest, AnArmsTrialPrintsAsASweepOfItsArm) {
  const v1::TrialConfig c = ArmTrialConfig(v1::FAFO);
  const std::string text = TrialSweepText("arms", c);
  auto s = ParseSweepText(text, "trial.yaml");
  ASSERT_TRUE(s.ok()) << s.status() << "\n" << text;
  ASSERT_EQ(s->axes().arms_size(), 1);
  EXPECT_EQ(s->axes().arms(0).name(), "faster");
  EXPECT_TRUE(s->axes().arms(0).training_fields().paths().empty());
  EXPECT_DOUBLE_EQ(s->training().optimizer().weight_decay(), 1e-3);
  EXPECT_DOUBLE_EQ(s->axes().lr_ratios(0), 30);
}

// ConfigSettings names each setting by the key a sweep file and `--set`
// take: every training key, with its value written back as an override,
// reads back to the same value; the axes by their own names; enums by their
// sweep-file names; an unset optional setting left out.
TEST(SweepFileTest, ConfigSettingsAreTheSweepFilesKeys) {
  v1::TrialConfig c = ArmTrialConfig(v1::CAFO);
  c.mutable_training()->set_task(v1::TASK_HATEXPLAIN);
  c.mutable_training()->set_max_steps(1234);
  const std::vector<ConfigSetting> settings = ConfigSettings(c);
  std::map<std::string, ConfigSetting> by_key;
  for (const ConfigSetting& s : settings) {
    EXPECT_TRUE(by_key.emplace(s.key, s).second) << "twice: " << s.key;
  }
  ASSERT_EQ(settings[0].key, "parameterization");
  EXPECT_EQ(settings[0].text, "CAFO");
  EXPECT_DOUBLE_EQ(by_key.at("lr_ratio").number, 30);
  EXPECT_EQ(by_key.at("seed").type, ConfigSetting::Type::kInteger);
  EXPECT_EQ(by_key.at("seed").integer, 7);
  EXPECT_EQ(by_key.at("arm").text, "faster");
  EXPECT_EQ(by_key.at("training.task").text, "hatexplain");
  EXPECT_EQ(by_key.at("training.max_steps").integer, 1234);
  EXPECT_DOUBLE_EQ(by_key.at("training.optimizer.weight_decay").number, 1e-3);
  EXPECT_FALSE(by_key.count("alpha")) << "hatexplain takes no alpha";

  const std::string base = TrialSweepText("keys", c);
  int training_keys = 0;
  for (const ConfigSetting& s : settings) {
    if (s.key.rfind("training.", 0) != 0 || s.key == "training.task") continue;
    ++training_keys;
    std::string value;
    switch (s.type) {
      case ConfigSetting::Type::kNumber:
        value = absl::StrFormat("%.17g", s.number);
        break;
      case ConfigSetting::Type::kInteger:
        value = absl::StrCat(s.integer);
        break;
      case ConfigSetting::Type::kText:
        value = s.text.empty() ? "''" : s.text;
        break;
      case ConfigSetting::Type::kFlag:
        value = s.flag ? "true" : "false";
        break;
    }
    auto spec =
        ParseSweepText(base, "keys.yaml", {absl::StrCat(s.key, "=", value)});
    ASSERT_TRUE(spec.ok()) << s.key << "=" << value << ": " << spec.status();
    v1::TrialConfig back = c;
    *back.mutable_training() = spec->training();
    bool same = false;
    for (const ConfigSetting& b : ConfigSettings(back)) {
      if (b.key != s.key) continue;
      same = b.type == s.type && b.number == s.number &&
             b.integer == s.integer && b.text == s.text && b.flag == s.flag;
    }
    EXPECT_TRUE(same) << s.key;
  }
  EXPECT_GT(training_keys, 3);
}

// A sweep by source, as the server reads one for the notebook client.
TEST(SweepFileTest, SpecFromSourceReadsTextOrAPreset) {
  SweepFileSource text;
  text.text = "name: t\naxes: {parameterization: [FAFO]}\n";
  text.source_name = "t.yaml";
  text.overrides = {"training.max_steps=9"};
  auto spec = SpecFromSource(text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training().max_steps(), 9);
  EXPECT_TRUE(spec->preset().empty());
  SweepFileSource preset;
  preset.preset = "paper-ratio";
  preset.quick = true;
  spec = SpecFromSource(preset);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->preset(), "paper-ratio --quick");
  EXPECT_EQ(spec->name(), "paper-ratio-quick");
  EXPECT_EQ(SpecFromSource(SweepFileSource()).status().code(),
            absl::StatusCode::kInvalidArgument);
  SweepFileSource both = text;
  both.preset = "paper-ratio";
  EXPECT_EQ(SpecFromSource(both).status().code(),
            absl::StatusCode::kInvalidArgument);
  SweepFileSource quick_text = text;
  quick_text.quick = true;
  EXPECT_EQ(SpecFromSource(quick_text).status().code(),
            absl::StatusCode::kInvalidArgument);
  SweepFileSource big;
  big.text = std::string(kMaxSweepFileBytes + 1, '#');
  absl::Status s = SpecFromSource(big).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most"), std::string::npos) << s;
}

}  // namespace
}  // namespace qkov
