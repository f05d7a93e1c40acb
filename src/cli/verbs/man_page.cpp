#include "cli/verbs/man_page.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/verbs.hpp"

// In a namespace of their own: the CLI's sources are compiled in batches
// (CMakeLists.txt, unity builds), where another file's internal names would
// meet these.
namespace dpb::cli::man_page {
namespace {

/// One flag as the page lists it.
struct Item {
  std::vector<std::string> names;  ///< short ones first, as --help shows them
  std::string value;               ///< the value's placeholder; empty for a switch
  std::string help;                ///< the option's description, on one line
  bool operator==(const Item& other) const { return names == other.names && help == other.help; }
};

/// The placeholder of an option's value: FILE for a file, else its first long
/// name in capitals (--sampling-rate SAMPLING_RATE), as argparse writes it.
std::string placeholder(CLI::Option& opt) {
  if (names_file(opt)) return "FILE";
  std::string name = opt.get_lnames().empty() ? opt.get_snames().front() : opt.get_lnames().front();
  for (char& c : name) c = c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return name;
}

/// The named options of `app` in declaration order; its help flag only when
/// `with_help`.
std::vector<Item> items_of(CLI::App& app, bool with_help) {
  std::vector<Item> items;
  for (CLI::Option* opt : app.get_options()) {
    if (opt == app.get_help_ptr() && !with_help) continue;
    Item item;
    for (const auto& s : opt->get_snames()) item.names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) item.names.push_back("--" + l);
    if (item.names.empty()) continue;  // a positional
    if (opt->get_expected_max() > 0) item.value = placeholder(*opt);
    item.help = opt->get_description();
    std::replace(item.help.begin(), item.help.end(), '\n', ' ');
    items.push_back(std::move(item));
  }
  return items;
}

/// A group of flags several verbs share, listed once in its own section.
struct Group {
  std::string_view id;       ///< the marker's argument
  std::string_view label;    ///< how a verb's "Also:" paragraph names it
  std::string_view section;  ///< the section that lists it
  std::vector<Item> items;
};

/// The shared groups, each as the function that declares it on every verb
/// declares it (on a parser of its own).
std::vector<Group> shared_groups() {
  std::vector<Group> groups;
  {
    DpSgdFlags flags;
    CLI::App app;
    add_dp_sgd_flags(app, flags);
    groups.push_back(
        {"run-parameters", "the run parameters", "RUN PARAMETERS", items_of(app, false)});
  }
  {
    AccountantFlags flags;
    CLI::App app;
    add_accountant_flags(app, flags);
    groups.push_back(
        {"accountant", "the accountant flags", "ACCOUNTANT OPTIONS", items_of(app, false)});
  }
  {
    OutputFlags flags;
    CLI::App app;
    add_output_flags(app, flags);
    add_wide_flag(app, flags);
    groups.push_back({"output", "the output flags", "OUTPUT OPTIONS", items_of(app, false)});
  }
  return groups;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

/// The UTF-8 sequence that starts at text[i] as \[uXXXX]; `i` is left on its
/// last byte.
void append_utf8_escape(std::string& out, const std::string& text, std::size_t& i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const int extra = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : byte >= 0xC0 ? 1 : 0;
  unsigned code = extra == 3 ? byte & 0x07u : extra == 2 ? byte & 0x0Fu : byte & 0x1Fu;
  for (int k = 0; k < extra && i + 1 < text.size(); ++k)
    code = (code << 6) | (static_cast<unsigned char>(text[++i]) & 0x3Fu);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\[u%04X]", extra ? code : 0xFFFDu);
  out += buffer;
}

/// The characters roff reads as something else, and how to write them.
constexpr std::array<std::pair<char, std::string_view>, 6> kRoffEscapes{{
    {'\\', "\\e"},
    {'-', "\\-"},  // a minus (copies as typed), not a hyphen
    {'\'', "\\(aq"},
    {'`', "\\(ga"},
    {'^', "\\(ha"},
    {'~', "\\(ti"},
}};

/// `text` escaped for roff, but not yet guarded as a line's start; other
/// control characters (tabs, newlines) as spaces.
std::string escape_body(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto e = std::find_if(kRoffEscapes.begin(), kRoffEscapes.end(),
                                [c](const auto& entry) { return entry.first == c; });
    if (e != kRoffEscapes.end())
      out += e->second;
    else if (static_cast<unsigned char>(c) >= 0x80)
      append_utf8_escape(out, text, i);
    else
      out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c;
  }
  return out;
}

/// A line that would start with a dot (a request) starts with \& instead.
std::string guard_line(std::string line) {
  if (!line.empty() && line.front() == '.') line.insert(0, "\\&");
  return line;
}

/// Whether `c` may come just before a flag name in running text.
bool before_flag(char c) {
  return std::string_view(" (\"'[,/|=").find(c) != std::string_view::npos;
}

/// `text` escaped, each name in `flags` that starts a word set in bold.
std::string roff_text(const std::string& text, const std::set<std::string>& flags) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '-' && (i == 0 || before_flag(text[i - 1]))) {
      std::size_t end = i;
      while (end < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-'))
        ++end;
      const std::string word = text.substr(i, end - i);
      if (flags.count(word)) {
        out += "\\fB" + escape_body(word) + "\\fR";
        i = end;
        continue;
      }
    }
    const std::size_t start = i;
    while (++i < text.size() && text[i] != '-') {
    }
    out += escape_body(text.substr(start, i - start));
  }
  return guard_line(out);
}

/// `.TP` and the item's names (bold) with its placeholder (italic), then its help.
void write_item(const Item& item, const std::set<std::string>& flags, std::ostream& out) {
  std::vector<std::string> names;
  for (const auto& n : item.names) names.push_back("\\fB" + roff_escape(n) + "\\fR");
  out << ".TP\n" << join(names, ", ");
  if (!item.value.empty()) out << " \\fI" << roff_escape(item.value) << "\\fR";
  out << '\n';
  // An empty line would be a blank line on the page.
  if (!item.help.empty()) out << roff_text(item.help, flags) << '\n';
}

/// A marker line's kind and argument.
struct Marker {
  std::string kind, arg;
};

/// The marker of a template line, if it is one: `.\" @KIND arg@`.
std::optional<Marker> marker_of(const std::string& line, const std::string& where) {
  const std::string lead = ".\\\" @";
  if (line.rfind(lead, 0) != 0) return std::nullopt;
  const std::string body = line.substr(lead.size());
  const auto space = body.find(' ');
  if (space == std::string::npos || body.size() < space + 3 || body.back() != '@' ||
      body.find_first_of(" @", space + 1) != body.size() - 1)
    throw UsageError(where + ": malformed marker '" + line + "' (write .\\\" @KIND name@)");
  return Marker{body.substr(0, space), body.substr(space + 1, body.size() - space - 2)};
}

/// What the page generates from: the verbs' parsers and descriptors, the groups.
struct Page {
  CLI::App& root;
  std::vector<Group> groups = shared_groups();
  std::set<std::string> flags;  ///< every flag name the parser knows
  std::map<std::string, CLI::App*> verbs;

  explicit Page(CLI::App& app) : root(app) {
    for (const auto& item : items_of(root, true))
      flags.insert(item.names.begin(), item.names.end());
    for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_group().empty()) continue;  // hidden
      verbs[sub->get_name()] = sub;
      for (const auto& item : items_of(*sub, true))
        flags.insert(item.names.begin(), item.names.end());
    }
  }

  /// The descriptor of a visible verb (every one has one: app.cpp declares
  /// them from kVerbs).
  static const VerbDescriptor& descriptor(const std::string& name) {
    const auto v = std::find_if(kVerbs.begin(), kVerbs.end(),
                                [&](const VerbDescriptor* d) { return d->name == name; });
    if (v == kVerbs.end()) throw std::logic_error("no VerbDescriptor for verb " + name);
    return **v;
  }

  void write_verb(const std::string& name, std::ostream& out) const;
  void write_options(const std::string& name, std::ostream& out) const;
  void write_examples(const std::string& name, std::ostream& out) const;
  void write_group(const Group& group, std::ostream& out) const;
  void write_dpbudget(std::ostream& out) const;
};

void Page::write_verb(const std::string& name, std::ostream& out) const {
  // The summary as one line: its continuation lines start with two spaces.
  std::string summary;
  std::istringstream lines{std::string(descriptor(name).summary)};
  for (std::string line; std::getline(lines, line);)
    summary += (summary.empty() ? "" : " ") + line.substr(line.find_first_not_of(' '));
  out << ".SS " << roff_escape(name) << '\n'
      << "\\fBdpbudget " << roff_escape(name) << "\\fR \\(em " << roff_text(summary, flags)
      << "\n.PP\n";
}

void Page::write_options(const std::string& name, std::ostream& out) const {
  CLI::App& verb = *verbs.at(name);
  std::vector<std::vector<std::string>> shared(groups.size());
  for (const Item& item : items_of(verb, false)) {
    std::size_t g = 0;
    while (g < groups.size() &&
           std::find(groups[g].items.begin(), groups[g].items.end(), item) == groups[g].items.end())
      ++g;
    if (g == groups.size()) {
      write_item(item, flags, out);
      continue;
    }
    for (const auto& n : item.names) shared[g].push_back("\\fB" + roff_escape(n) + "\\fR");
  }
  out << ".PP\nAlso:\n";
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (!shared[g].empty())
      out << groups[g].label << ' ' << join(shared[g], ", ") << "\n(see " << groups[g].section
          << ");\n";
  std::vector<std::string> help_names;
  const CLI::Option* help = verb.get_help_ptr();
  for (const auto& s : help->get_snames())
    help_names.push_back("\\fB" + escape_body("-" + s) + "\\fR");
  for (const auto& l : help->get_lnames())
    help_names.push_back("\\fB" + escape_body("--" + l) + "\\fR");
  out << (std::all_of(shared.begin(), shared.end(), [](const auto& s) { return s.empty(); })
              ? ""
              : "and ")
      << join(help_names, ", ") << ".\n";
}

void Page::write_examples(const std::string& name, std::ostream& out) const {
  std::vector<std::string> examples;
  for (std::string_view e : descriptor(name).examples)
    if (!e.empty()) examples.emplace_back(e);
  if (examples.empty()) return;
  out << ".PP\n" << (examples.size() == 1 ? "Example:" : "Examples:") << "\n.RS\n.nf\n";
  for (const auto& e : examples) out << roff_escape(e) << '\n';
  out << ".fi\n.RE\n";
}

void Page::write_group(const Group& group, std::ostream& out) const {
  for (const Item& item : group.items) {
    write_item(item, flags, out);
    if (group.id != "run-parameters") continue;
    // Each run parameter's JSON key (sweep --input lines, the output) and default.
    const auto names = join(item.names, ",");
    const auto p = std::find_if(kRunParameters.begin(), kRunParameters.end(),
                                [&](const RunParameter& r) { return r.names == names; });
    if (p == kRunParameters.end()) continue;
    out << "(key \\fB" << roff_escape(std::string(p->key)) << "\\fR";
    if (!p->default_value.empty())
      out << "; default \\fB" << roff_escape(std::string(p->default_value)) << "\\fR";
    out << ")\n";
  }
}

void Page::write_dpbudget(std::ostream& out) const {
  for (const Item& item : items_of(root, true)) write_item(item, flags, out);
}

}  // namespace
}  // namespace dpb::cli::man_page

namespace dpb::cli {

std::string roff_escape(const std::string& text) {
  return man_page::guard_line(man_page::escape_body(text));
}

void write_man(CLI::App& root, std::istream& page_template, const std::string& where,
               std::ostream& out) {
  const man_page::Page page(root);
  std::map<std::pair<std::string, std::string>, int> seen;
  std::ostringstream buffer;
  buffer << ".\\\" Generated from man/dpbudget.1.in by `dpbudget completions man "
            "man/dpbudget.1.in`:\n.\\\" edit the template, then regenerate.\n";
  int number = 0;
  for (std::string line; std::getline(page_template, line);) {
    const std::string at = where + ":" + std::to_string(++number);
    const auto m = man_page::marker_of(line, at);
    if (!m) {
      buffer << line << '\n';
      continue;
    }
    const bool verb = m->kind == "VERB" || m->kind == "OPTIONS" || m->kind == "EXAMPLES";
    const auto group = std::find_if(page.groups.begin(), page.groups.end(),
                                    [&](const man_page::Group& g) { return g.id == m->arg; });
    if (verb && !page.verbs.count(m->arg))
      throw UsageError(at + ": no verb '" + m->arg + "' in " + line);
    if (m->kind == "GROUP" && group == page.groups.end() && m->arg != "dpbudget")
      throw UsageError(at + ": no group '" + m->arg +
                       "' (run-parameters, accountant, output, dpbudget)");
    if (!verb && m->kind != "GROUP")
      throw UsageError(at + ": unknown marker @" + m->kind + "@ (VERB, OPTIONS, EXAMPLES, GROUP)");
    if (++seen[{m->kind, m->arg}] > 1) throw UsageError(at + ": repeated marker " + line);
    if (m->kind == "VERB") page.write_verb(m->arg, buffer);
    if (m->kind == "OPTIONS") page.write_options(m->arg, buffer);
    if (m->kind == "EXAMPLES") page.write_examples(m->arg, buffer);
    if (m->kind == "GROUP" && group != page.groups.end()) page.write_group(*group, buffer);
    if (m->kind == "GROUP" && group == page.groups.end()) page.write_dpbudget(buffer);
  }
  std::vector<std::pair<std::string, std::string>> wanted;
  for (const auto& [name, app] : page.verbs)
    for (const char* kind : {"VERB", "OPTIONS", "EXAMPLES"}) wanted.emplace_back(kind, name);
  for (const auto& g : page.groups) wanted.emplace_back("GROUP", std::string(g.id));
  wanted.emplace_back("GROUP", "dpbudget");
  for (const auto& w : wanted)
    if (!seen.count(w))
      throw UsageError(
          where + ": no marker .\\\" @" + w.first + " " + w.second +
          "@ (every verb needs its VERB, OPTIONS and EXAMPLES, every group its GROUP)");
  out << buffer.str();
}

}  // namespace dpb::cli
