// Plain-text tables for the terminal and CSV for files.
#ifndef QKOV_CLIENT_TABLE_H_
#define QKOV_CLIENT_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

#include "common/numbers.h"

namespace qkov::client {

class Table {
 public:
  explicit Table(std::vector<std::string> header)
      : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  // Columns padded to width; numbers (cells starting with a digit, '-' or
  // '.') right-aligned. Cells are printed TerminalSafe (common/text.h).
  void Print(std::ostream& out) const;
  // Cells as they are (quoted where CSV needs it): CSV is data for files.
  void PrintCsv(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The number formats (common/numbers.h), by their short names here.
using ::qkov::CsvNumber;
using ::qkov::FormatNumber;

}  // namespace qkov::client

#endif  // QKOV_CLIENT_TABLE_H_
