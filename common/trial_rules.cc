#include "common/trial_rules.h"

#include <cmath>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qkov::rules {
namespace {

std::string Num(double x) { return absl::StrFormat("%g", x); }

}  // namespace

absl::Status Invalid(absl::string_view prefix, absl::string_view field,
                     absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, field, ": ", reason));
}

absl::Status Check(absl::string_view prefix, const IntRule& rule,
                   int64_t value) {
  if (value < rule.lo || value > rule.hi) {
    return Invalid(prefix, rule.field,
                   absl::StrCat("must be in [", rule.lo, ", ", rule.hi,
                                "] (got ", value, ")"));
  }
  return absl::OkStatus();
}

absl::Status Check(absl::string_view prefix, const RealRule& rule,
                   double value) {
  if (rule.rate && !(std::isfinite(value) && value > 0)) {
    return Invalid(
        prefix, rule.field,
        absl::StrCat("must be finite and > 0 (got ", Num(value), ")"));
  }
  if (rule.rate && value > rule.hi) {
    return Invalid(
        prefix, rule.field,
        absl::StrCat("must be <= ", Num(rule.hi), " (got ", Num(value), ")"));
  }
  if (!std::isfinite(value) || value < rule.lo || value > rule.hi ||
      (rule.lo_open && value == rule.lo)) {
    return Invalid(
        prefix, rule.field,
        absl::StrCat("must be in ", rule.lo_open ? "(" : "[", Num(rule.lo),
                     ", ", Num(rule.hi), "] (got ", Num(value), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckSyntheticShape(absl::string_view prefix, int64_t vocab_size,
                                 int64_t num_common, int64_t num_classes,
                                 int64_t distinct_per_class, int64_t seq_len) {
  for (auto [rule, value] :
       {std::pair{kVocabSize, vocab_size}, std::pair{kNumClasses, num_classes},
        std::pair{kDistinctPerClass, distinct_per_class},
        std::pair{kSeqLen, seq_len}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (num_common < 2 * (num_classes + 1)) {
    return Invalid(
        prefix, "synthetic.num_common",
        absl::StrCat(
            "must be >= 2 * (num_classes + 1) = ", 2 * (num_classes + 1),
            " (labels and query tokens are common tokens)"));
  }
  if (num_common + num_classes * distinct_per_class > vocab_size) {
    return Invalid(prefix, "synthetic.vocab_size",
                   "must be >= num_common + num_classes * distinct_per_class");
  }
  return absl::OkStatus();
}

absl::Status CheckRun(absl::string_view prefix, int64_t max_steps,
                      int64_t batch_size, int64_t report_every,
                      int64_t loss_window, double target_loss,
                      int64_t warmup_steps) {
  for (auto [rule, value] :
       {std::pair{kMaxSteps, max_steps}, std::pair{kBatchSize, batch_size},
        std::pair{kReportEvery, report_every},
        std::pair{kLossWindow, loss_window}}) {
    if (absl::Status s = Check(prefix, rule, value); !s.ok()) return s;
  }
  if (!std::isfinite(target_loss)) {
    return Invalid(prefix, "target_loss",
                   absl::StrCat("must be finite (got ", Num(target_loss),
                                "; negative: never stop early)"));
  }
  return Check(prefix, IntRule{"optimizer.warmup_steps", 0, max_steps},
               warmup_steps);
}

absl::Status CheckOneCycle(absl::string_view prefix, bool one_cycle,
                           bool squad_task) {
  if (one_cycle && !squad_task)
    return Invalid(prefix, "optimizer.schedule",
                   "one_cycle is for task squad only");
  return absl::OkStatus();
}

absl::Status CheckEdges(absl::string_view prefix, const char* field,
                        absl::Span<const double> e) {
  if (e.size() < 2) return Invalid(prefix, field, "needs at least 2 edges");
  for (size_t i = 0; i < e.size(); ++i) {
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (!std::isfinite(e[i])) return Invalid(prefix, at, "must be finite");
    if (i > 0 && !(e[i - 1] < e[i]))
      return Invalid(prefix, at, "edges must be strictly increasing");
  }
  return absl::OkStatus();
}

}  // namespace qkov::rules
