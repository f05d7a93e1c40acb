// The man page against the parser: every flag of every verb is named in the
// verb's subsection (.SS verb), no flag the page names is unknown to the
// parser, and groff renders it without warnings. The page's flag lists are
// generated (`dpbudget completions man man/dpbudget.1.in`; that the committed
// page is what it writes is tests/shell/man_page_test.sh's): here, every
// flag's help reads on the rendered page as --help prints it, and the
// generator refuses a template whose markers are wrong.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"

using dpb::test::run_dpbudget;
using dpb::test::run_shell;
using dpb::test::shell_quote;
using dpb::test::slurp;

namespace {

const std::string kPage = std::string(DPBUDGET_SOURCE_DIR) + "/man/dpbudget.1";
const std::string kTemplate = std::string(DPBUDGET_SOURCE_DIR) + "/man/dpbudget.1.in";

/// verb -> its flags ("" = the root), from `dpbudget completions list`.
std::map<std::string, std::set<std::string>> parser_flags() {
  const auto r = run_dpbudget({"completions", "list"});
  REQUIRE(r.status == 0);
  std::map<std::string, std::set<std::string>> flags;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find('\t'), b = line.find('\t', a + 1);
    flags[line.substr(0, a)].insert(line.substr(a + 1, b - a - 1));
  }
  return flags;
}

/// The page's text without comments and font escapes, `\-` as `-`, split
/// into sections: ".SS verb" -> its lines; everything else under "".
std::map<std::string, std::string> page_sections() {
  std::istringstream in(slurp(kPage));
  std::map<std::string, std::string> sections;
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(".\\\"", 0) == 0) continue;
    line = std::regex_replace(line, std::regex(R"(\\f[BIRP])"), "");
    line = std::regex_replace(line, std::regex(R"(\\-)"), "-");
    if (line.rfind(".SS ", 0) == 0) {
      current = line.substr(4);
      continue;
    }
    if (line.rfind(".SH ", 0) == 0) current.clear();
    sections[current] += line + '\n';
  }
  return sections;
}

/// The flags each `.TP` item of `text` (a section, as page_sections() gives
/// it) defines: those its first line names.
std::set<std::string> flags_defined(const std::string& text);

std::set<std::string> flags_named(const std::string& text) {
  std::set<std::string> found;
  // A flag starts a word (or a parenthesis, quote or bracket that does): the
  // "-" of "exp(-a|x|)" or "(epsilon, delta)-DP" in a meaning is no flag.
  const std::regex flag(R"((^|[\s"'\[|,=/]|(?:^|\s)\()(--?[A-Za-z][A-Za-z0-9-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator();
       ++it)
    found.insert((*it)[2]);
  return found;
}

std::set<std::string> flags_defined(const std::string& text) {
  std::set<std::string> found;
  for (auto at = text.find(".TP\n"); at != std::string::npos; at = text.find(".TP\n", at + 1)) {
    const auto head = at + 4;
    const auto named = flags_named(text.substr(head, text.find('\n', head) - head));
    found.insert(named.begin(), named.end());
  }
  return found;
}

/// Runs of spaces and newlines as one space.
std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (!(space && (out.empty() || out.back() == ' '))) out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

TEST_CASE("man page: every verb has a subsection naming each of its flags") {
  const auto parser = parser_flags();
  const auto sections = page_sections();
  for (const auto& entry : parser) {
    // Named references, not structured bindings: clang 14 (the sanitizer
    // build) cannot capture those in doctest's message lambdas.
    const auto& verb = entry.first;
    const auto& flags = entry.second;
    if (verb.empty()) continue;
    CAPTURE(verb);
    const auto section = sections.find(verb);
    REQUIRE_MESSAGE(section != sections.end(), "man/dpbudget.1 has no '.SS " << verb << "'");
    const auto named = flags_named(section->second);
    for (const auto& f : flags) CHECK_MESSAGE(named.count(f), verb << ": " << f << " not named");
    // Flags defined (.TP items) in a verb's subsection must be that verb's
    // (its prose and help may name another verb's: "as sweep --input lines").
    for (const auto& f : flags_defined(section->second))
      CHECK_MESSAGE(flags.count(f), verb << ": page defines " << f);
  }
  for (const auto& section : sections) {
    const std::string& name = section.first;  // not a structured binding: clang 14
    if (!name.empty())
      CHECK_MESSAGE(parser.count(name), "page has a verb the parser lacks: " << name);
  }
}

TEST_CASE("man page: names no flag the parser does not know") {
  std::set<std::string> known;
  for (const auto& [verb, flags] : parser_flags()) known.insert(flags.begin(), flags.end());
  std::string all;
  for (const auto& [name, text] : page_sections()) all += text;
  for (const auto& f : flags_named(all)) CHECK_MESSAGE(known.count(f), "unknown flag " << f);
}

TEST_CASE("man page: RUN PARAMETERS is the run-parameter table, item by item, with its keys") {
  // The table as the binary has it: names<TAB>key<TAB>default per parameter.
  const auto r = run_dpbudget({"completions", "run-parameters"});
  REQUIRE(r.status == 0);
  struct Param {
    std::vector<std::string> flags;
    std::string key, default_value;
  };
  std::vector<Param> table;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find('\t'), b = line.find('\t', a + 1);
    Param p{{}, line.substr(a + 1, b - a - 1), line.substr(b + 1)};
    std::istringstream names(line.substr(0, a));
    for (std::string n; std::getline(names, n, ',');) p.flags.push_back(n);
    table.push_back(std::move(p));
  }
  REQUIRE(table.size() >= 8);

  // The section's .TP items, as plain text.
  const auto page = slurp(kPage);
  const auto start = page.find(".SH RUN PARAMETERS\n");
  REQUIRE(start != std::string::npos);
  const auto end = page.find("\n.SH ", start + 1);
  std::string section = page.substr(start, end - start);
  section = std::regex_replace(section, std::regex(R"(\\f[BIRP])"), "");
  section = std::regex_replace(section, std::regex(R"(\\-)"), "-");
  std::vector<std::string> items;
  for (auto at = section.find(".TP\n"); at != std::string::npos;) {
    const auto next = section.find(".TP\n", at + 1);
    std::string item =
        section.substr(at + 4, next == std::string::npos ? std::string::npos : next - at - 4);
    item = item.substr(0, item.find("\n.PP"));
    items.push_back(item);
    at = next;
  }
  REQUIRE(items.size() == table.size());
  // Same order; each item's first line names its flags, its text the key and default.
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& p = table[i];
    const auto& item = items[i];
    CAPTURE(p.key);
    const auto head = item.substr(0, item.find('\n'));
    const auto named = flags_named(head);
    CHECK(named == std::set<std::string>(p.flags.begin(), p.flags.end()));
    const std::regex key("(^|[^A-Za-z0-9_])" + p.key + "([^A-Za-z0-9_]|$)");
    CHECK_MESSAGE(std::regex_search(item.substr(head.size()), key), "key " << p.key);
    if (!p.default_value.empty()) {
      CHECK(item.find("default") != std::string::npos);
      CHECK(item.find(p.default_value) != std::string::npos);
    }
  }
  // Every DP-SGD verb takes every run parameter.
  const auto parser = parser_flags();
  for (const char* verb : {"epsilon", "delta", "sigma", "steps", "sampling-rate", "sweep", "plot"})
    for (const auto& p : table)
      for (const auto& f : p.flags) CHECK_MESSAGE(parser.at(verb).count(f), verb << ": " << f);
}

TEST_CASE("man page: has the sections a reader looks for, and groff renders it cleanly") {
  const auto page = slurp(kPage);
  for (const char* s :
       {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH ACCOUNTANTS", ".SH OUTPUT FORMATS",
        ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH EXAMPLES", ".SH SEE ALSO", "NO_COLOR"})
    CHECK_MESSAGE(page.find(s) != std::string::npos, s);
  if (run_shell("command -v groff >/dev/null").status != 0) {
    FAIL("groff not installed (apt-get install groff-base)");
    return;
  }
  const auto r = run_shell("groff -ww -z -man " + shell_quote(kPage) + " 2>&1");
  CHECK(r.status == 0);
  CHECK_MESSAGE(r.out.empty(), r.out);
}

TEST_CASE("man page: SPEC FILES lists every event kind of `dpbudget events` with its meaning") {
  const auto r = run_dpbudget({"events", "--format", "json"});
  REQUIRE(r.status == 0);
  const auto kinds = nlohmann::json::parse(r.out)["results"];
  REQUIRE(kinds.size() >= 20);
  auto page = slurp(kPage);
  const auto start = page.find(".SH SPEC FILES\n");
  REQUIRE(start != std::string::npos);
  std::string section = page.substr(start, page.find("\n.SH ", start + 1) - start);
  section = std::regex_replace(section, std::regex(R"(\\f[BIRP])"), "");
  section = std::regex_replace(section, std::regex(R"(\\-)"), "-");
  std::size_t items = 0;
  for (auto at = section.find(".TP\n.B "); at != std::string::npos;
       at = section.find(".TP\n.B ", at + 1))
    ++items;
  CHECK(items == kinds.size());
  for (const auto& k : kinds) {
    // "(ClassName; field, field)", or "(field, field)" for a kind of
    // dpbudget's own (no dp_accounting class).
    const auto cls = k["class_name"].get<std::string>();
    std::string fields;
    for (const auto& f : k["fields"])
      fields += (fields.empty() ? (cls.empty() ? "" : "; ") : ", ") + f["name"].get<std::string>();
    const std::string item = ".TP\n.B " + k["kind"].get<std::string>() + "\n(" + cls + fields +
                             ")\n" + k["meaning"].get<std::string>() + ".\n";
    CHECK_MESSAGE(section.find(item) != std::string::npos, "man page lacks:\n" << item);
  }
  // The flag that picks the relation, where the kinds are.
  CHECK(section.find("--neighbouring") != std::string::npos);
}

TEST_CASE(
    "man page: every flag's help and verb's summary read on the page as the parser has them") {
  if (run_shell("command -v groff >/dev/null").status != 0) {
    FAIL("groff not installed (apt-get install groff-base)");
    return;
  }
  // The page as plain ASCII text: escapes rendered (\- as -, \(aq as '),
  // no bold or underline, lines joined.
  const auto rendered = run_shell("groff -man -Tascii -P-cbu " + shell_quote(kPage) + " 2>&1");
  REQUIRE(rendered.status == 0);
  const std::string page = squeezed(rendered.out);
  // Each help and summary as the fish completions hold it: -d '...', with
  // ' and \ escaped by a backslash.
  const auto fish = run_dpbudget({"completions", "fish"});
  REQUIRE(fish.status == 0);
  std::istringstream lines(fish.out);
  std::size_t checked = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto d = line.find(" -d '");
    if (d == std::string::npos) continue;
    std::string text;
    for (std::size_t i = d + 5; i + 1 < line.size(); ++i) {
      if (line[i] == '\\') ++i;
      text += line[i];
    }
    CHECK_MESSAGE(page.find(squeezed(text)) != std::string::npos,
                  "not on the rendered page: " << text);
    ++checked;
  }
  CHECK(checked > 300);
}

TEST_CASE("man page generator: refuses a template with a marker missing, unknown or repeated") {
  const std::string page_template = slurp(kTemplate);
  REQUIRE(run_dpbudget({"completions", "man", "-"}, page_template).status == 0);
  // The page the template makes is the page in the tree, from stdin as from the file.
  CHECK(run_dpbudget({"completions", "man", "-"}, page_template).out == slurp(kPage));

  const auto refused = [](const std::string& text, const std::string& message) {
    const auto r = run_dpbudget({"completions", "man", "-"}, text);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
  };
  const std::string options = ".\\\" @OPTIONS epsilon@\n";
  const auto at = page_template.find(options);
  REQUIRE(at != std::string::npos);
  std::string without = page_template;
  without.erase(at, options.size());
  refused(without, "no marker .\\\" @OPTIONS epsilon@");
  refused(page_template + options, "stdin:");
  refused(page_template + options, "repeated marker");
  refused(page_template + ".\\\" @OPTIONS nosuchverb@\n", "no verb 'nosuchverb'");
  refused(page_template + ".\\\" @GROUP nosuchgroup@\n", "no group 'nosuchgroup'");
  refused(page_template + ".\\\" @FLAGS epsilon@\n", "unknown marker @FLAGS@");
  refused(page_template + ".\\\" @OPTIONS epsilon\n", "malformed marker");
  CHECK(run_dpbudget({"completions", "man"}).status == 2);
  CHECK(run_dpbudget({"completions", "bash", "man/dpbudget.1.in"}).status == 2);
  CHECK(run_dpbudget({"completions", "man", "/nonexistent/dpbudget.1.in"}).status == 2);
}
