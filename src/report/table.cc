#include "report/table.h"

#include <stdexcept>

#include <fmt/format.h>

namespace sextant {

Table::Table(std::string name, std::string title, std::vector<Column> columns)
    : name_(std::move(name)), title_(std::move(title)), columns_(std::move(columns)) {}

void Table::AddRow(std::vector<Cell> row) {
  if (row.size() != columns_.size()) {
    throw std::logic_error(fmt::format("table '{}': row has {} cells, table has {} columns", name_,
                                       row.size(), columns_.size()));
  }
  rows_.push_back(std::move(row));
}

int Table::ColumnIndex(const std::string& key) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

void Table::Truncate(size_t n) {
  if (rows_.size() > n) rows_.resize(n);
}

std::string FormatCell(const Cell& cell, int precision) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&cell)) return fmt::format("{:.{}f}", *d, precision);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

std::string FormatCellExact(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&cell)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

}  // namespace sextant
