#include "worker/training/config.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace qkov::training {

const char* ParameterizationName(Parameterization p) {
  switch (p) {
    case Parameterization::kFafo:
      return "FAFO";
    case Parameterization::kFaco:
      return "FACO";
    case Parameterization::kCafo:
      return "CAFO";
    case Parameterization::kCaco:
      return "CACO";
  }
  return "?";
}

absl::StatusOr<Parameterization> ParseParameterization(
    const std::string& name) {
  if (name == "FAFO") return Parameterization::kFafo;
  if (name == "FACO") return Parameterization::kFaco;
  if (name == "CAFO") return Parameterization::kCafo;
  if (name == "CACO") return Parameterization::kCaco;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown parameterization '", name,
                   "' (expected FAFO, FACO, CAFO or CACO)"));
}

absl::Status SyntheticTaskOptions::Validate() const {
  if (vocab_size < 2 || vocab_size > 100000)
    return absl::InvalidArgumentError("vocab_size must be in [2, 100000]");
  if (num_classes < 1)
    return absl::InvalidArgumentError("num_classes must be >= 1");
  if (distinct_per_class < 1)
    return absl::InvalidArgumentError("distinct_per_class must be >= 1");
  if (num_common < 2 * (num_classes + 1))
    return absl::InvalidArgumentError(
        "num_common must be >= 2 * (num_classes + 1): labels 1..C and query "
        "tokens num_common/2.. are common tokens");
  if (num_common + num_classes * distinct_per_class > vocab_size)
    return absl::InvalidArgumentError(
        "num_common + num_classes * distinct_per_class exceeds vocab_size");
  if (seq_len < 3 || seq_len > 100000)
    return absl::InvalidArgumentError("seq_len must be in [3, 100000]");
  return absl::OkStatus();
}

absl::Status TrialOptions::Validate() const {
  if (absl::Status s = task.Validate(); !s.ok()) return s;
  auto positive = [](double x) { return std::isfinite(x) && x > 0; };
  if (!positive(lr_ratio))
    return absl::InvalidArgumentError("lr_ratio must be finite and > 0");
  if (!positive(eta_ov))
    return absl::InvalidArgumentError("eta_ov must be finite and > 0");
  if (max_steps < 1)
    return absl::InvalidArgumentError("max_steps must be >= 1");
  if (batch_size < 1)
    return absl::InvalidArgumentError("batch_size must be >= 1");
  if (report_every < 1)
    return absl::InvalidArgumentError("report_every must be >= 1");
  if (loss_window < 1)
    return absl::InvalidArgumentError("loss_window must be >= 1");
  if (!std::isfinite(target_loss))
    return absl::InvalidArgumentError(
        "target_loss must be finite (negative: never stop early)");
  if (eval.num_examples < 1)
    return absl::InvalidArgumentError("eval.num_examples must be >= 1");
  if (eval.dtap_attention_edges.size() < 2 ||
      eval.dtap_probability_edges.size() < 2)
    return absl::InvalidArgumentError("DTAP edges need at least 2 values");
  for (const auto* edges :
       {&eval.dtap_attention_edges, &eval.dtap_probability_edges}) {
    for (size_t i = 0; i + 1 < edges->size(); ++i) {
      if (!((*edges)[i] < (*edges)[i + 1]))
        return absl::InvalidArgumentError(
            "DTAP edges must be strictly increasing");
    }
  }
  if (!std::isfinite(optimizer.momentum) || optimizer.momentum < 0 ||
      optimizer.momentum >= 1)
    return absl::InvalidArgumentError("momentum must be in [0, 1)");
  if (!std::isfinite(optimizer.weight_decay) || optimizer.weight_decay < 0)
    return absl::InvalidArgumentError("weight_decay must be finite and >= 0");
  if (!std::isfinite(init.identity_scale))
    return absl::InvalidArgumentError("init.identity_scale must be finite");
  return absl::OkStatus();
}

}  // namespace qkov::training
