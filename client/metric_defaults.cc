#include "client/metric_defaults.h"

namespace qkov::client {

const MetricDefaults& MetricDefaultsFor(v1::TaskKind task) {
  static const MetricDefaults* const synthetic =
      new MetricDefaults{{"steps", "accuracy", "loss", "distinct_attention",
                          "ac", "acmc", "separability"},
                         {"accuracy", "distinct_attention", "ac", "acmc"},
                         {"distinct_attention", "ac", "accuracy"},
                         {"train_loss", "distinct_attention"},
                         {"train_loss", "train_accuracy", "distinct_attention"},
                         {"ratio", "search", "dtap", "curves"}};
  // The ODE and fixed attention report the synthetic task's numbers and
  // draw their own figures (the paper's Figs. 4 and 3).
  static const MetricDefaults* const theory = [] {
    auto* d = new MetricDefaults(*synthetic);
    d->figures = {"theory"};
    return d;
  }();
  static const MetricDefaults* const fixed = [] {
    auto* d = new MetricDefaults(*synthetic);
    d->figures = {"fixed"};
    return d;
  }();
  static const MetricDefaults* const text = new MetricDefaults{
      {"steps", "test_accuracy", "test_rationale_mass_head0",
       "test_rationale_mass_rollout", "test_comprehensiveness",
       "test_sufficiency", "test_ac"},
      {"test_accuracy", "test_rationale_mass_head0", "test_comprehensiveness",
       "test_sufficiency"},
      {"test_rationale_mass_head0", "test_ac", "test_accuracy"},
      {"train_loss", "train_accuracy"},
      {"train_loss", "train_accuracy", "epoch"},
      {"ratio", "search", "dtap", "curves"}};
  static const MetricDefaults* const squad = new MetricDefaults{
      {"steps", "eval_f1", "eval_em", "eval_answer_mass_rollout",
       "eval_answer_mass_layer_max", "eval_ac", "eval_comprehensiveness",
       "eval_sufficiency"},
      {"eval_f1", "eval_em", "eval_answer_mass_rollout", "eval_ac"},
      {"eval_answer_mass_rollout", "eval_ac", "eval_f1"},
      {"train_loss"},
      {"train_loss", "epoch"},
      {"ratio", "search", "dtap", "curves"}};
  switch (task) {
    case v1::TASK_THEORY:
      return *theory;
    case v1::TASK_FIXED_ATTENTION:
      return *fixed;
    case v1::TASK_SQUAD:
      return *squad;
    case v1::TASK_TEXT:
    case v1::TASK_HATEXPLAIN:
    case v1::TASK_SVA:
      return *text;
    default:
      return *synthetic;
  }
}

const MetricDefaults& MetricDefaultsFor(
    const std::vector<v1::ResultRow>& rows) {
  return MetricDefaultsFor(rows.empty()
                               ? v1::TASK_SYNTHETIC
                               : rows.front().config().training().task());
}

}  // namespace qkov::client
