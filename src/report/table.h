// A result table that every output format can render: console, CSV, JSON, XLSX and HTML.
// Commands build Tables; writers in this folder turn them into bytes. A table is a list of
// typed columns and rows of cells; a cell is empty, an integer, a real number or text.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sextant {

using Cell = std::variant<std::monostate, int64_t, double, std::string>;

struct Column {
  std::string key;     // stable machine name: JSON key, CSV header ("time_ms")
  std::string header;  // what a person reads in console/HTML/XLSX ("time (ms)")
  int precision = 3;   // digits after the point when a real number is shown to a person
  // Sentences a person reads whole (a warning, a note): a page wraps them instead of cutting
  // them as it cuts long names (html_writer.h).
  bool prose = false;
};

class Table {
 public:
  Table() = default;
  // `name` is a short identifier used as file/sheet name ("gpu_timeline"); `title` is prose.
  Table(std::string name, std::string title, std::vector<Column> columns);

  const std::string& name() const { return name_; }
  const std::string& title() const { return title_; }
  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }

  // Adds a row; it must have exactly one cell per column (checked: a mismatch is a bug).
  void AddRow(std::vector<Cell> row);
  // Index of the column with this key, or -1.
  int ColumnIndex(const std::string& key) const;
  // Keeps the first `n` rows.
  void Truncate(size_t n);
  // Hands the rows over, leaving the table without any.
  std::vector<std::vector<Cell>> TakeRows() { return std::exchange(rows_, {}); }
  // Puts `value` in column `column` of every row (a per-rank table relabelled).
  void SetColumn(size_t column, const Cell& value);
  // A note printed under the table (assumptions, units, what was left out).
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }
  void SetNotes(std::vector<std::string> notes) { notes_ = std::move(notes); }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::string name_;
  std::string title_;
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
  std::vector<std::string> notes_;
};

// The rows of `parts` (tables of one name, e.g. one per rank) in one table. Parts may differ
// in their columns (a rank without recompute frames, a parameter no row of a rank has): the
// result has every column, in the order first seen, and a part's row leaves the columns it
// lacks empty. Title and name come from the first part; notes are kept once each.
Table ConcatenateTables(const std::vector<const Table*>& parts);
// The same, taking the parts' rows instead of copying them (the parts are left without rows):
// for parts not needed afterwards, whose rows may run to millions of cells.
Table ConcatenateTablesTakingRows(const std::vector<Table*>& parts);

// Text of a cell as a person reads it: integers plain, reals with the column's precision,
// empty cells as "".
std::string FormatCell(const Cell& cell, int precision);
// Text of a cell for machines (CSV): reals with full round-trip precision.
std::string FormatCellExact(const Cell& cell);

}  // namespace sextant
