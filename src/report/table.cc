#include "report/table.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

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

void Table::SetColumn(size_t column, const Cell& value) {
  for (auto& row : rows_) row.at(column) = value;
}

void Table::Truncate(size_t n) {
  if (rows_.size() > n) rows_.resize(n);
}

namespace {

// ConcatenateTables with the rows copied (Part = const Table) or taken (Part = Table).
template <typename Part>
Table Concatenate(const std::vector<Part*>& parts) {
  if (parts.empty()) return Table();
  std::vector<Column> columns;
  for (const Table* part : parts) {
    for (const Column& c : part->columns()) {
      const bool known = std::any_of(columns.begin(), columns.end(),
                                     [&](const Column& have) { return have.key == c.key; });
      if (!known) columns.push_back(c);
    }
  }
  Table out(parts[0]->name(), parts[0]->title(), columns);
  std::vector<std::string> notes;
  for (Part* part : parts) {
    std::vector<int> where;  // the result's column of each of the part's columns
    bool same_columns = part->columns().size() == columns.size();
    for (const Column& c : part->columns()) {
      where.push_back(out.ColumnIndex(c.key));
      same_columns = same_columns && where.back() == static_cast<int>(where.size() - 1);
    }
    auto place = [&](auto& row) {
      if constexpr (!std::is_const_v<Part>) {
        if (same_columns) return out.AddRow(std::move(row));  // the row as it is
      }
      std::vector<Cell> cells(columns.size());
      for (size_t i = 0; i < row.size(); ++i) {
        if constexpr (std::is_const_v<Part>) {
          cells[static_cast<size_t>(where[i])] = row[i];
        } else {
          cells[static_cast<size_t>(where[i])] = std::move(row[i]);
        }
      }
      out.AddRow(std::move(cells));
    };
    if constexpr (std::is_const_v<Part>) {
      for (const auto& row : part->rows()) place(row);
    } else {
      for (auto& row : part->TakeRows()) place(row);
    }
    for (const std::string& note : part->notes()) {
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    }
  }
  for (std::string& note : notes) out.AddNote(std::move(note));
  return out;
}

}  // namespace

Table ConcatenateTables(const std::vector<const Table*>& parts) { return Concatenate(parts); }

Table ConcatenateTablesTakingRows(const std::vector<Table*>& parts) { return Concatenate(parts); }

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
