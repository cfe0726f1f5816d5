#include "common/result_names.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace qkov {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Bounded results: fractions and probabilities in [0, 1]; differences of
// probabilities in [-1, 1]; counts and norms >= 0; losses >= 0.
void Add(std::vector<ResultName>* out, const std::string& name, double lo,
         double hi) {
  out->push_back({name, lo, hi});
}

}  // namespace

std::vector<ResultName> FinalResultNames(absl::string_view task) {
  std::vector<ResultName> out;
  if (task == "synthetic") {
    for (const char* n : {"accuracy", "gold_probability", "distinct_attention",
                          "ac", "acmc", "converged"})
      Add(&out, n, 0, 1);
    for (const char* n : {"separability", "comprehensiveness", "sufficiency"})
      Add(&out, n, -1, 1);
    for (const char* n : {"loss", "train_loss", "top_k", "steps", "qk_norm",
                          "ov_norm", "qk_balancedness", "ov_balancedness"})
      Add(&out, n, 0, kInf);
  } else if (task == "theory") {
    Add(&out, "alpha", 0, 1);
    Add(&out, "converged", 0, 1);
    Add(&out, "mu_ov", -kInf, kInf);
    Add(&out, "mu_qk", -kInf, kInf);
    Add(&out, "loss", 0, kInf);
    Add(&out, "tau", 0, kInf);
  } else if (task == "fixed_attention") {
    Add(&out, "accuracy", 0, 1);
    Add(&out, "alpha", 0, 1);
    Add(&out, "loss", 0, kInf);
    Add(&out, "steps", 0, kInf);
  } else if (task == "text" || task == "hatexplain" || task == "sva") {
    for (const char* split : {"validation", "test"}) {
      for (const char* n :
           {"accuracy", "gold_probability", "rationale_mass_head0",
            "rationale_mass", "rationale_mass_layer_max",
            "rationale_mass_rollout", "rationale_mass_readout", "ac", "acmc"})
        Add(&out, absl::StrCat(split, "_", n), 0, 1);
      for (const char* n : {"comprehensiveness", "sufficiency"})
        Add(&out, absl::StrCat(split, "_", n), -1, 1);
      for (const char* n : {"loss", "top_k", "examples"})
        Add(&out, absl::StrCat(split, "_", n), 0, kInf);
    }
    Add(&out, "train_accuracy", 0, 1);
    Add(&out, "train_truncated_fraction", 0, 1);
    Add(&out, "converged", 0, 1);
    for (const char* n : {"steps", "epochs", "train_examples",
                          "dropped_examples", "vocab_rows"})
      Add(&out, n, 0, kInf);
  } else if (task == "squad") {
    for (const char* n :
         {"f1", "em", "answer_mass_rollout", "answer_mass_layer_mean",
          "answer_mass_layer_max", "gold_probability", "ac", "acmc"})
      Add(&out, absl::StrCat("eval_", n), 0, 1);
    for (const char* n : {"comprehensiveness", "sufficiency"})
      Add(&out, absl::StrCat("eval_", n), -1, 1);
    Add(&out, "eval_examples", 0, kInf);
    Add(&out, "converged", 0, 1);
    for (const char* n : {"steps", "epochs", "train_questions", "train_skipped",
                          "train_unanswerable", "eval_skipped", "glove_matched",
                          "selected_step"})
      Add(&out, n, 0, kInf);
    Add(&out, "selected_val_f1", 0, 1);
    Add(&out, "train_f1", 0, 1);
  }
  return out;
}

std::vector<std::string> ReportedCurveNames(absl::string_view task) {
  if (task == "synthetic") {
    return {
        "train_loss", "train_accuracy", "distinct_attention", "separability",
        "qk_norm",    "ov_norm",        "qk_balancedness",    "ov_balancedness",
        "lr_qk",      "lr_ov"};
  }
  if (task == "fixed_attention") return {"train_loss", "train_accuracy"};
  if (task == "text" || task == "hatexplain" || task == "sva") {
    return {"train_loss",
            "train_accuracy",
            "lr_qk",
            "lr_ov",
            "epoch",
            "val_loss",
            "val_accuracy",
            "val_gold_probability",
            "val_rationale_mass_head0",
            "val_rationale_mass",
            "val_rationale_mass_rollout",
            "val_ac"};
  }
  if (task == "squad") {
    return {"train_loss",
            "lr_qk",
            "lr_ov",
            "epoch",
            "selection_f1",
            "val_f1",
            "val_em",
            "val_answer_mass_rollout",
            "val_answer_mass_layer_mean",
            "val_answer_mass_layer_max",
            "val_ac",
            "val_gold_probability"};
  }
  return {};
}

}  // namespace qkov
