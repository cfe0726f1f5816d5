// The needle task's entry in the task table (common/task_info.h): what the
// server, the CLI and the dashboard know of it. It is registered here, in
// its own folder, and linked only into the programs this folder builds
// (qkov-server-needle, qkov-worker-needle, qkov-needle); docs/adding-a-task.md
// walks through it.
//
// The task: a sequence of common tokens with one needle token among them;
// the model names the needle. One attention layer with a collapsed QK circuit
// (a score per token) and a collapsed OV circuit, trained at eta_QK =
// lr_ratio * eta_ov and eta_OV = eta_ov, so the ratio axis shapes how sharply
// it attends to the needle (needle_trainer.cc).
#include <limits>

#include "common/task_info.h"

namespace qkov::example {
namespace {

TaskInfo NeedleTask() {
  TaskInfo t;
  t.name = "needle";
  // A number outside config.proto's TaskKind values, for this task alone.
  t.kind = kFirstRegisteredTaskKind;
  // Its settings are qkov.v1.SyntheticTask's vocab_size, num_common and
  // seq_len: the server fills and checks them as the synthetic task's.
  t.settings = "synthetic";
  t.parameterized = false;  // one collapsed layer
  t.searchable = false;
  t.results = {{"accuracy", 0, 1},
               {"loss", 0, std::numeric_limits<double>::infinity()},
               {"needle_attention", 0, 1},
               {"steps", 0, std::numeric_limits<double>::infinity()}};
  t.curves = {"train_loss", "needle_attention"};
  t.views.results = {"steps", "accuracy", "loss", "needle_attention"};
  t.views.summary = {"accuracy", "needle_attention"};
  t.views.ratio = {"needle_attention"};
  t.views.curves = {"train_loss", "needle_attention"};
  t.views.latest = {"train_loss", "needle_attention"};
  t.views.figures = {"ratio", "curves"};
  // Two ratios, two seeds: 4 trials of 300 steps on a 20-token vocabulary
  // (well under a second each on one core). `qkov-needle presets` lists it.
  Preset ratio;
  ratio.name = "needle-ratio";
  ratio.summary = "the needle task at eta_QK/eta_OV 1 and 10, 2 seeds";
  ratio.yaml = R"(name: needle-ratio
axes:
  lr_ratio: [1, 10]
  eta_ov: [0.2]
  seed: [1, 2]
training:
  task: needle
  max_steps: 300
  batch_size: 32
  report_every: 50
  target_loss: -1
  synthetic: {vocab_size: 20, num_common: 12, num_classes: 2, distinct_per_class: 4, seq_len: 8}
  evaluation: {num_examples: 512}
)";
  ratio.quick = {"name=needle-ratio-quick"};
  t.presets = {ratio};
  return t;
}

const TaskRegistration kNeedle(NeedleTask());

}  // namespace
}  // namespace qkov::example
