#pragma once
// A short prose document (the privacy statement of `dpbudget report`):
// headings, paragraphs, warnings, bullet lists, tables of preformatted cells
// and figures, rendered as GitHub-flavoured Markdown or as one self-contained
// HTML page (inline SVG, inline style, no external references). Pure
// rendering: every number arrives formatted.
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "report/svg.hpp"

namespace dpb::report {

struct Heading {
  int level = 2;  ///< 1: the title
  std::string text;
};
struct Paragraph {
  std::string text;
};
/// A paragraph the reader must not miss (Markdown: a "> **Warning:**" quote).
struct Warning {
  std::string text;
};
struct BulletList {
  std::vector<std::string> items;
};
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;  ///< right-aligned columns (empty: none)
};
/// A chart: inline SVG in HTML; in Markdown, which cannot hold one, its
/// caption and the `fallback` table of its points.
struct Figure {
  Chart chart;
  std::string caption;
  Table fallback;
};

using Block = std::variant<Heading, Paragraph, Warning, BulletList, Table, Figure>;

struct Document {
  std::string title;
  std::vector<Block> blocks;
};

/// GitHub-flavoured Markdown (pipes and backslashes in cells escaped).
void render_markdown(const Document& doc, std::ostream& out);
/// One HTML5 page that is also well-formed XML (xmllint --noout accepts it).
void render_html(const Document& doc, std::ostream& out);

}  // namespace dpb::report
