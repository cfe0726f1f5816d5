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
  return t;
}

const TaskRegistration kNeedle(NeedleTask());

}  // namespace
}  // namespace qkov::example
