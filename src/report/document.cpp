#include "report/document.hpp"

#include <algorithm>
#include <sstream>
#include <string>

namespace dpb::report {
namespace {

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out.empty() ? " " : out;
}

void markdown_table(const Table& t, std::ostream& out) {
  out << '|';
  for (const auto& h : t.header) out << ' ' << markdown_cell(h) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i)
    out << (i < t.numeric.size() && t.numeric[i] ? "---:|" : "---|");
  out << '\n';
  for (const auto& row : t.rows) {
    out << '|';
    for (std::size_t i = 0; i < t.header.size(); ++i)
      out << ' ' << markdown_cell(i < row.size() ? row[i] : "") << " |";
    out << '\n';
  }
  out << '\n';
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void html_table(const Table& t, std::ostream& out) {
  out << "<table>\n<thead><tr>";
  for (std::size_t i = 0; i < t.header.size(); ++i)
    out << "<th" << (i < t.numeric.size() && t.numeric[i] ? " class=\"n\"" : "") << '>'
        << html_escape(t.header[i]) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < t.header.size(); ++i)
      out << "<td" << (i < t.numeric.size() && t.numeric[i] ? " class=\"n\"" : "") << '>'
          << html_escape(i < row.size() ? row[i] : "") << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

/// The SVG document without its XML declaration, to sit inside the page;
/// its element ids get `suffix`, so several drawings keep distinct ids.
std::string inline_svg(const Chart& chart, const std::string& suffix) {
  std::ostringstream svg;
  render_svg(chart, svg);
  std::string s = svg.str();
  if (s.rfind("<?xml", 0) == 0) s.erase(0, s.find("?>") + 2);
  while (!s.empty() && (s.front() == '\n' || s.front() == '\r')) s.erase(0, 1);
  // Append `suffix` to every id="..." and url(#...) name (rebuilt, not
  // edited in place).
  std::string out;
  out.reserve(s.size() + 64);
  std::size_t pos = 0;
  for (;;) {
    const std::size_t a = s.find("id=\"", pos), b = s.find("url(#", pos);
    const std::size_t at = std::min(a, b);
    if (at == std::string::npos) break;
    const std::size_t start = at + (at == a ? 4 : 5);
    const std::size_t end = s.find_first_of("\")", start);
    if (end == std::string::npos) break;
    out.append(s, pos, end - pos);
    out += suffix;
    pos = end;
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
  return s;
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:56em;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em "
    ".6em;text-align:left}td.n,th.n{text-align:right}"
    ".warning{border-left:4px solid #c60;background:#fff4e5;padding:.5em 1em}"
    "figure{margin:1em 0}figcaption{font-size:90%;color:#555}svg{max-width:100%;height:auto}";

}  // namespace

void render_markdown(const Document& doc, std::ostream& out) {
  out << "# " << doc.title << "\n\n";
  for (const Block& b : doc.blocks) {
    if (const auto* h = std::get_if<Heading>(&b)) {
      out << std::string(static_cast<std::size_t>(h->level), '#') << ' ' << h->text << "\n\n";
    } else if (const auto* p = std::get_if<Paragraph>(&b)) {
      out << p->text << "\n\n";
    } else if (const auto* w = std::get_if<Warning>(&b)) {
      out << "> **Warning:** " << w->text << "\n\n";
    } else if (const auto* l = std::get_if<BulletList>(&b)) {
      for (const auto& item : l->items) out << "- " << item << '\n';
      out << '\n';
    } else if (const auto* t = std::get_if<Table>(&b)) {
      markdown_table(*t, out);
    } else if (const auto* f = std::get_if<Figure>(&b)) {
      out << f->caption << " (drawn in the HTML report, `--format html`):\n\n";
      markdown_table(f->fallback, out);
    }
  }
}

void render_html(const Document& doc, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      << "<meta charset=\"utf-8\"/>\n<title>" << html_escape(doc.title) << "</title>\n<style>"
      << kStyle << "</style>\n</head>\n<body>\n<h1>" << html_escape(doc.title) << "</h1>\n";
  int figures = 0;
  for (const Block& b : doc.blocks) {
    if (const auto* h = std::get_if<Heading>(&b)) {
      out << "<h" << h->level << '>' << html_escape(h->text) << "</h" << h->level << ">\n";
    } else if (const auto* p = std::get_if<Paragraph>(&b)) {
      out << "<p>" << html_escape(p->text) << "</p>\n";
    } else if (const auto* w = std::get_if<Warning>(&b)) {
      out << "<p class=\"warning\"><strong>Warning:</strong> " << html_escape(w->text) << "</p>\n";
    } else if (const auto* l = std::get_if<BulletList>(&b)) {
      out << "<ul>\n";
      for (const auto& item : l->items) out << "<li>" << html_escape(item) << "</li>\n";
      out << "</ul>\n";
    } else if (const auto* t = std::get_if<Table>(&b)) {
      html_table(*t, out);
    } else if (const auto* f = std::get_if<Figure>(&b)) {
      std::string suffix(1, '-');
      suffix += std::to_string(++figures);
      out << "<figure>\n"
          << inline_svg(f->chart, suffix) << "\n<figcaption>" << html_escape(f->caption)
          << "</figcaption>\n</figure>\n";
    }
  }
  out << "</body>\n</html>\n";
}

}  // namespace dpb::report
