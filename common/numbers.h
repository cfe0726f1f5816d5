// Numbers as qkov shows them: the CLI's tables, the report, CSV files.
#ifndef QKOV_COMMON_NUMBERS_H_
#define QKOV_COMMON_NUMBERS_H_

#include <string>

namespace qkov {

// %.4g; whole numbers (steps, counts) in full; "nan" / "inf" spelled out.
std::string FormatNumber(double v);
// Every digit that tells the double apart (%.17g; nan, inf, -inf): what
// the CLI's CSV output prints, so a CSV reads back to the same doubles.
std::string CsvNumber(double v);

}  // namespace qkov

#endif  // QKOV_COMMON_NUMBERS_H_
