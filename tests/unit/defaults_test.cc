// One table of defaults (common/trial_defaults.h): the server's completed
// spec, the worker's option structs and the example in docs/sweep-files.md
// say the same thing.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "client/sweep_file.h"
#include "server/core/sweep_spec.h"
#include "worker/agent/trial_options.h"
#include "worker/training/config.h"

namespace qkov {
namespace {

namespace v1 = ::qkov::v1;

TEST(DefaultsTest, TheWorkersOptionsAreTheServersDefaults) {
  v1::TrialConfig config;
  config.set_parameterization(v1::FAFO);
  config.set_lr_ratio(1);
  config.set_eta_ov(0.01);
  core::ApplyTrainingDefaults(config.mutable_training());
  absl::StatusOr<training::TrialOptions> from_server =
      agent::ToTrialOptions(config);
  ASSERT_TRUE(from_server.ok()) << from_server.status();
  const training::TrialOptions plain;  // the struct's own defaults
  const training::TrialOptions& s = *from_server;
  EXPECT_EQ(s.task.vocab_size, plain.task.vocab_size);
  EXPECT_EQ(s.task.num_common, plain.task.num_common);
  EXPECT_EQ(s.task.num_classes, plain.task.num_classes);
  EXPECT_EQ(s.task.distinct_per_class, plain.task.distinct_per_class);
  EXPECT_EQ(s.task.seq_len, plain.task.seq_len);
  EXPECT_EQ(s.optimizer.kind, plain.optimizer.kind);
  EXPECT_EQ(s.optimizer.momentum, plain.optimizer.momentum);
  EXPECT_EQ(s.optimizer.weight_decay, plain.optimizer.weight_decay);
  EXPECT_EQ(s.optimizer.adam_beta1, plain.optimizer.adam_beta1);
  EXPECT_EQ(s.optimizer.adam_beta2, plain.optimizer.adam_beta2);
  EXPECT_EQ(s.optimizer.adam_eps, plain.optimizer.adam_eps);
  EXPECT_EQ(s.optimizer.schedule, plain.optimizer.schedule);
  EXPECT_EQ(s.optimizer.warmup_steps, plain.optimizer.warmup_steps);
  EXPECT_EQ(s.init.qk, plain.init.qk);
  EXPECT_EQ(s.init.ov, plain.init.ov);
  EXPECT_EQ(s.init.identity_scale, plain.init.identity_scale);
  EXPECT_EQ(s.max_steps, plain.max_steps);
  EXPECT_EQ(s.batch_size, plain.batch_size);
  EXPECT_EQ(s.report_every, plain.report_every);
  EXPECT_EQ(s.target_loss, plain.target_loss);
  EXPECT_EQ(s.loss_window, plain.loss_window);
  EXPECT_EQ(s.eval.num_examples, plain.eval.num_examples);
  EXPECT_EQ(s.eval.eval_seed, plain.eval.eval_seed);
  EXPECT_EQ(s.eval.tau_attention, plain.eval.tau_attention);
  EXPECT_EQ(s.eval.tau_probability, plain.eval.tau_probability);
  EXPECT_EQ(s.eval.dtap_attention_edges, plain.eval.dtap_attention_edges);
  EXPECT_EQ(s.eval.dtap_probability_edges, plain.eval.dtap_probability_edges);
}

// The first ```yaml block of docs/sweep-files.md.
std::string DocsExample() {
  std::ifstream in(std::string(QKOV_SOURCE_DIR) + "/docs/sweep-files.md");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const size_t start = text.find("```yaml\n");
  if (start == std::string::npos) return "";
  const size_t end = text.find("```", start + 8);
  return text.substr(start + 8, end - start - 8);
}

TEST(DefaultsTest, TheDocsExampleShowsTheDefaults) {
  const std::string yaml = DocsExample();
  ASSERT_FALSE(yaml.empty()) << "no ```yaml block in docs/sweep-files.md";
  absl::StatusOr<v1::SweepSpec> documented =
      client::ParseSweepText(yaml, "docs/sweep-files.md");
  ASSERT_TRUE(documented.ok()) << documented.status();
  v1::Training defaults;
  core::ApplyTrainingDefaults(&defaults);
  std::string diff;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(defaults, documented->training()))
      << "docs/sweep-files.md and common/trial_defaults.h disagree:\n"
      << diff;
  EXPECT_EQ(documented->max_attempts(), defaults::kMaxAttempts);
}

}  // namespace
}  // namespace qkov
