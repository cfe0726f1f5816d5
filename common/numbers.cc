#include "common/numbers.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace qkov {

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Whole numbers (steps, counts) print in full.
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.4g", v);
}

std::string CsvNumber(double v) {
  return std::isfinite(v) ? absl::StrFormat("%.17g", v)
                          : (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
}

}  // namespace qkov
