// RFC 4180 CSV reading (quoted fields, doubled quotes, newlines inside quotes), with the line
// number of every record so errors can point at it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

struct CsvRecord {
  int64_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// Throws UserError (file, line) on an unterminated quote.
std::vector<CsvRecord> ParseCsv(std::string_view text, const std::string& file_name);
std::vector<CsvRecord> ReadCsvFile(const std::string& path);

// A cell's whole text as a finite number ("12.5", "1e3"); nullopt for anything else (empty,
// trailing text, inf, nan, out of range).
std::optional<double> ParseNumberCell(const std::string& text);

// A CSV with a header row, addressed by column name. A UTF-8 byte-order mark, blank lines and
// comment lines (first cell starting with '#') are skipped; every other row must have the
// header's number of cells (trailing empty ones aside), or UserError names its line.
class CsvTable {
 public:
  static CsvTable Read(const std::string& path);
  static CsvTable Parse(std::string_view text, const std::string& file_name);

  const std::vector<std::string>& header() const { return header_; }
  size_t size() const { return rows_.size(); }
  int64_t line(size_t row) const { return rows_[row].line; }
  bool HasColumn(const std::string& column) const { return index_.count(column) > 0; }
  // Empty string for a missing cell; throws UserError naming the file for an unknown column.
  const std::string& Get(size_t row, const std::string& column) const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<std::string> header_;
  std::map<std::string, size_t> index_;
  std::vector<CsvRecord> rows_;
};

}  // namespace sextant
