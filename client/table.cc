#include "client/table.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_format.h"
#include "common/text.h"

namespace qkov::client {
namespace {

bool LooksNumeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
                        s[0] == '-' || s[0] == '.' || s == "nan" || s == "inf");
}

std::string CsvEscape(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void Table::Print(std::ostream& out) const {
  // Cells come from the wire: made terminal-safe before they are measured.
  auto safe = [](const std::vector<std::string>& r) {
    std::vector<std::string> out;
    out.reserve(r.size());
    for (const std::string& cell : r) out.push_back(TerminalSafe(cell));
    return out;
  };
  const std::vector<std::string> header = safe(header_);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size());
  for (const auto& r : rows_) rows.push_back(safe(r));
  std::vector<size_t> width(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& r, bool header) {
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const bool right = !header && LooksNumeric(cell);
      if (i > 0) out << "  ";
      const std::string pad(width[i] - cell.size(), ' ');
      out << (right ? pad + cell : (i + 1 == width.size() ? cell : cell + pad));
    }
    out << "\n";
  };
  line(header, true);
  for (const auto& r : rows) line(r, false);
}

void Table::PrintCsv(std::ostream& out) const {
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size(); ++i)
      out << (i ? "," : "") << CsvEscape(r[i]);
    out << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

}  // namespace qkov::client
