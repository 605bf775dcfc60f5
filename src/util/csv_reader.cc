#include "util/csv_reader.h"

#include <cmath>

#include <fmt/format.h>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {

std::vector<CsvRecord> ParseCsv(std::string_view text, const std::string& file_name) {
  std::vector<CsvRecord> out;
  CsvRecord rec;
  std::string field;
  int64_t line = 1;
  rec.line = 1;
  bool in_quotes = false, any = false;
  int64_t quote_line = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        quote_line = line;
        any = true;
        break;
      case ',':
        rec.fields.push_back(std::move(field));
        field.clear();
        any = true;
        break;
      case '\r': break;
      case '\n':
        if (any || !field.empty()) {
          rec.fields.push_back(std::move(field));
          out.push_back(std::move(rec));
        }
        field.clear();
        rec = CsvRecord{};
        ++line;
        rec.line = line;
        any = false;
        break;
      default: field += c; any = true;
    }
  }
  if (in_quotes) {
    ThrowUserError(SourceLocation{file_name, quote_line, -1, -1}, "",
                   "quoted field is never closed");
  }
  if (any || !field.empty()) {
    rec.fields.push_back(std::move(field));
    out.push_back(std::move(rec));
  }
  return out;
}

std::vector<CsvRecord> ReadCsvFile(const std::string& path) {
  return ParseCsv(ReadFile(path), path);
}

namespace {

// Blank lines (or lines of empty cells), and comment lines: a first cell starting with '#'
// (hand-written tables, such as GEMM timings, explain their source above the header).
bool Blank(const CsvRecord& r) {
  if (!r.fields.empty() && r.fields.front().starts_with('#')) return true;
  for (const std::string& f : r.fields) {
    if (f.find_first_not_of(" \t") != std::string::npos) return false;
  }
  return true;
}

}  // namespace

CsvTable CsvTable::Parse(std::string_view text, const std::string& file_name) {
  CsvTable t;
  t.file_ = file_name;
  // Excel and Windows tools start a UTF-8 CSV with a byte-order mark.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  auto records = ParseCsv(text, file_name);
  std::erase_if(records, Blank);
  if (records.empty()) ThrowUserError(SourceLocation{file_name, 1, -1, -1}, "", "empty CSV file");
  t.header_ = records.front().fields;
  for (size_t i = 0; i < t.header_.size(); ++i) t.index_[t.header_[i]] = i;
  for (size_t i = 1; i < records.size(); ++i) {
    // A row cut short or with cells past the header is misread column by column: say so.
    std::vector<std::string>& fields = records[i].fields;
    // Trailing empty cells past the header (a spreadsheet's stray commas) say nothing.
    while (fields.size() > t.header_.size() && fields.back().empty()) fields.pop_back();
    const size_t n = fields.size();
    if (n != t.header_.size()) {
      ThrowUserError(SourceLocation{file_name, records[i].line, -1, -1}, "",
                     fmt::format("{} fields, the header has {}", n, t.header_.size()));
    }
  }
  t.rows_.assign(std::make_move_iterator(records.begin() + 1),
                 std::make_move_iterator(records.end()));
  return t;
}

CsvTable CsvTable::Read(const std::string& path) { return Parse(ReadFile(path), path); }

const std::string& CsvTable::Get(size_t row, const std::string& column) const {
  static const std::string kEmpty;
  auto it = index_.find(column);
  if (it == index_.end()) {
    ThrowUserError(SourceLocation{file_, 1, -1, -1}, column, "no such column in the header");
  }
  const auto& fields = rows_.at(row).fields;
  return it->second < fields.size() ? fields[it->second] : kEmpty;
}

std::optional<double> ParseNumberCell(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace sextant
