// Text and Markdown tables: a list of results laid out once (the inputs and
// the columns that hold one value moved above the table, footnote markers),
// printed as an aligned text table or as GitHub-flavoured Markdown, whole or
// in blocks as results arrive (TableWriter).
#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/internal.hpp"
#include "report/render.hpp"

namespace dpb::report {
namespace {

using detail::columns_of;
using detail::in_text;
using detail::is_numeric;
using detail::to_text;

/// A text table laid out: the block above it (inputs and the columns moved
/// up), the columns left, the rows' cells with their footnote markers and
/// alignment. Text and Markdown print the same layout.
struct TextLayout {
  std::vector<std::pair<std::string, std::string>> block;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
};

/// `results` laid out as one table, `inputs` (if any) first above it; a
/// footnote not yet in `marked` is added to it, and its position gives the
/// cell's marker (`*`, `**`, ...).
TextLayout layout_text(const Record* inputs, const std::vector<Record>& results,
                       const TextStyle& style, std::vector<std::string>& marked) {
  const auto all_columns =
      columns_of(results, [&](const Cell& cell) { return in_text(cell, style); });
  auto cell_at = [&](std::size_t row, std::size_t column) -> const Cell* {
    const Cell* cell = results[row].find(all_columns[column]);
    return cell && in_text(*cell, style) ? cell : nullptr;
  };
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> right;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& row = rows.emplace_back();
    auto& align = right.emplace_back();
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      const Cell* cell = cell_at(i, c);
      row.push_back(cell ? escape_control(to_text(*cell, style)) : "");
      align.push_back(cell && is_numeric(*cell));
    }
  }
  TextLayout t;
  // Cells with a footnote get a marker (`*`, `**`, ...), one per distinct note.
  for (std::size_t i = 0; i < results.size(); ++i)
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      const Cell* cell = cell_at(i, c);
      if (!cell || cell->footnote.empty()) continue;
      auto it = std::find(marked.begin(), marked.end(), cell->footnote);
      if (it == marked.end()) it = marked.insert(marked.end(), cell->footnote);
      rows[i][c] += std::string(static_cast<std::size_t>(it - marked.begin()) + 1, '*');
    }
  // A hoisted column that holds one value in every row moves above the table.
  std::vector<bool> moved(all_columns.size(), false);
  if (!style.wide && rows.size() > 1)
    for (std::size_t c = 0; c < all_columns.size(); ++c) {
      bool same = true;
      for (std::size_t i = 0; same && i < rows.size(); ++i) {
        const Cell* cell = cell_at(i, c);
        same = cell && cell->hoist && rows[i][c] == rows[0][c];
      }
      moved[c] = same;
    }
  if (inputs)
    for (const auto& [key, cell] : inputs->cells)
      if (in_text(cell, style)) t.block.emplace_back(key, escape_control(to_text(cell, style)));
  for (std::size_t c = 0; c < all_columns.size(); ++c)
    if (moved[c]) t.block.emplace_back(all_columns[c], rows[0][c]);
  t.rows.resize(rows.size());
  t.right.resize(rows.size());
  for (std::size_t c = 0; c < all_columns.size(); ++c) {
    if (moved[c]) continue;
    t.columns.push_back(all_columns[c]);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      t.rows[i].push_back(rows[i][c]);
      t.right[i].push_back(right[i][c]);
    }
  }
  return t;
}

/// One laid-out table as text: the block above it, a blank line, the header
/// and the rows, aligned.
void print_text_table(const TextLayout& t, std::ostream& out, const TextStyle& style) {
  std::size_t name_width = 0;
  for (const auto& [key, value] : t.block) name_width = std::max(name_width, key.size());
  for (const auto& [key, value] : t.block)
    out << key << std::string(name_width - key.size() + 2, ' ') << value << '\n';
  if (!t.block.empty()) out << '\n';

  std::vector<std::size_t> width(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    width[c] = t.columns[c].size();
    for (const auto& row : t.rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells, const std::vector<bool>& align) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) s += "  ";
      s += align[c] ? pad + cells[c] : cells[c] + pad;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  const std::string header = line(t.columns, std::vector<bool>(t.columns.size(), false));
  out << (style.colour ? "\033[1m" + header + "\033[0m" : header) << '\n';
  for (std::size_t i = 0; i < t.rows.size(); ++i) out << line(t.rows[i], t.right[i]) << '\n';
}

/// The notes under a text table: each marker's, then the footnotes.
void print_text_notes(const std::vector<std::string>& marked,
                      const std::vector<std::string>& footnotes, std::ostream& out) {
  for (std::size_t m = 0; m < marked.size(); ++m)
    out << std::string(m + 1, '*') << ' ' << marked[m] << '\n';
  for (const auto& note : footnotes) out << escape_control(note) << '\n';
}

/// Text in a Markdown table cell or paragraph: characters with a meaning in
/// GitHub-flavoured Markdown are backslash-escaped (| ends a cell, * and _
/// emphasise, ` opens code, [ ] links, < > HTML), line breaks become spaces.
std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (std::string_view("\\|*_`[]<>#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

/// Markdown (GitHub-flavoured): the block above the text table as a
/// two-column table, then the results table (numbers right-aligned); the same
/// cells, rounding and layout as text.
void print_markdown_table(const TextLayout& t, std::ostream& out) {
  auto row = [&](const std::vector<std::string>& cells) {
    out << '|';
    for (const auto& c : cells) out << ' ' << markdown_escape(c) << " |";
    out << '\n';
  };
  if (!t.block.empty()) {
    row({"parameter", "value"});
    out << "|---|---|\n";
    for (const auto& [key, value] : t.block) row({key, value});
    out << '\n';
  }
  if (!t.columns.empty()) {
    row(t.columns);
    out << '|';
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      bool numeric = !t.rows.empty();
      for (std::size_t i = 0; i < t.rows.size(); ++i)
        numeric = numeric && (t.right[i][c] || t.rows[i][c].empty());
      out << (numeric ? "---:|" : "---|");
    }
    out << '\n';
    for (const auto& r : t.rows) row(r);
  }
}

/// The footnotes under Markdown tables, as a list.
void print_markdown_notes(const std::vector<std::string>& marked,
                          const std::vector<std::string>& footnotes, std::ostream& out) {
  if (!marked.empty() || !footnotes.empty()) out << '\n';
  for (std::size_t m = 0; m < marked.size(); ++m)
    out << "- " << markdown_escape(std::string(m + 1, '*') + " " + marked[m]) << '\n';
  for (const auto& note : footnotes) out << "- " << markdown_escape(escape_control(note)) << '\n';
}

}  // namespace

TableWriter::TableWriter(Format format, Record inputs, TextStyle style, std::size_t block_rows)
    : format_(format), inputs_(std::move(inputs)), style_(style), block_rows_(block_rows) {
  if (format != Format::text && format != Format::markdown)
    throw std::invalid_argument("TableWriter: text or markdown only");
}

void TableWriter::add(Record record, std::ostream& out) {
  held_.push_back(std::move(record));
  if (block_rows_ > 0 && held_.size() == block_rows_) flush(out);
}

void TableWriter::flush(std::ostream& out) {
  const TextLayout t = layout_text(blocks_ == 0 ? &inputs_ : nullptr, held_, style_, marked_);
  if (blocks_ > 0) out << '\n';  // a blank line between blocks
  if (format_ == Format::text)
    print_text_table(t, out, style_);
  else
    print_markdown_table(t, out);
  held_.clear();
  ++blocks_;
}

void TableWriter::finish(const std::vector<std::string>& footnotes, std::ostream& out) {
  if (blocks_ == 0 || !held_.empty()) flush(out);
  if (format_ == Format::text)
    print_text_notes(marked_, footnotes, out);
  else
    print_markdown_notes(marked_, footnotes, out);
}

}  // namespace dpb::report
