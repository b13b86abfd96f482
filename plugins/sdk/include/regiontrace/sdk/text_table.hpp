// The one plain-text table regiontrace prints: the sinks' summaries and the
// CLI's reports. Columns are padded to their widest cell so digits line up,
// and every cell goes through terminal_text(), so a region or op name holding
// ESC or CR cannot recolour or overwrite the rows after it.
// Header-only, not part of the plugin ABI: nothing here crosses the boundary.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "regiontrace/sdk/text_format.hpp"

namespace regiontrace::sdk::text {

class Table {
 public:
  enum class Align { kLeft, kRight };
  static constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

  struct Column {
    std::string header;
    Align align = Align::kLeft;
    // Summaries written to files keep their column widths from run to run
    // when the numbers are short, so two of them diff line by line.
    std::size_t min_width = 0;
    // One long name should not push every other column off the screen.
    std::size_t max_width = kNoLimit;
    // A cell wider than max_width: cut to it, ending in "...", or (false)
    // printed whole, shifting the rest of its row.
    bool cut = false;
  };

  // Columns come from add_column(); `gap` spaces separate them.
  explicit Table(std::size_t gap = 2) : gap_(gap) {}

  // One header per column; `align` may be shorter (the rest is left-aligned).
  Table(std::vector<std::string> headers, std::vector<Align> align) : gap_(2) {
    align.resize(headers.size(), Align::kLeft);
    for (std::size_t c = 0; c < headers.size(); ++c) {
      add_column({std::move(headers[c]), align[c]});
    }
  }
  explicit Table(std::vector<std::string> headers) : Table(std::move(headers), {}) {}

  Table& add_column(Column column) {
    column.header = terminal_text(column.header);
    columns_.push_back(std::move(column));
    return *this;
  }

  // Missing cells are empty; extra ones are dropped.
  void add_row(std::vector<std::string> cells) { add(std::move(cells), false); }

  // A row whose last cell is a note rather than a value (why a region has no
  // numbers): it ends the row unpadded and does not widen its column.
  void add_run_on_row(std::vector<std::string> cells) { add(std::move(cells), true); }

  bool empty() const { return rows_.empty(); }

  // Header line, then one line per row, each starting with `indent`;
  // trailing spaces are dropped.
  std::string text(const std::string& indent = "  ") const {
    std::vector<std::size_t> width(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      width[c] = std::max(columns_[c].min_width, columns_[c].header.size());
      for (const Row& row : rows_) {
        if (c < row.cells.size() && !(row.run_on && c + 1 == row.cells.size())) {
          width[c] = std::max(width[c], row.cells[c].size());
        }
      }
      width[c] = std::min(width[c], std::max(columns_[c].max_width, columns_[c].min_width));
    }
    std::string out;
    std::vector<std::string> header(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) header[c] = columns_[c].header;
    line(out, indent, width, header, false);
    for (const Row& row : rows_) line(out, indent, width, row.cells, row.run_on);
    return out;
  }

  void print(std::ostream& out, const std::string& indent = "  ") const { out << text(indent); }

 private:
  struct Row {
    std::vector<std::string> cells;
    bool run_on = false;
  };

  void add(std::vector<std::string> cells, bool run_on) {
    if (cells.size() > columns_.size() || !run_on) cells.resize(columns_.size());
    for (std::string& cell : cells) cell = terminal_text(cell);
    const bool runs_on = run_on && !cells.empty();
    rows_.push_back({std::move(cells), runs_on});
  }

  void line(std::string& out, const std::string& indent, const std::vector<std::size_t>& width,
            const std::vector<std::string>& cells, bool run_on) const {
    std::string text = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      std::string cell = cells[c];
      if (last && run_on) {
        text += cell;
        break;
      }
      if (cell.size() > width[c] && columns_[c].cut) {
        cell = width[c] > 3 ? cell.substr(0, width[c] - 3) + "..." : cell.substr(0, width[c]);
      }
      const std::size_t pad = width[c] > cell.size() ? width[c] - cell.size() : 0;
      if (columns_[c].align == Align::kRight) text.append(pad, ' ');
      text += cell;
      if (last) break;
      if (columns_[c].align == Align::kLeft) text.append(pad, ' ');
      text.append(gap_, ' ');
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out += text;
    out += '\n';
  }

  std::size_t gap_;
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace regiontrace::sdk::text
