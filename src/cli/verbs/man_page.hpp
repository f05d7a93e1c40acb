#pragma once
// The man page's flag lists, generated from the parser: `dpbudget completions
// man man/dpbudget.1.in > man/dpbudget.1` copies the template (the prose,
// written by hand) and replaces each marker line with what the parser says:
//
//   .\" @VERB name@       .SS name and the verb's summary (its VerbDescriptor)
//   .\" @OPTIONS name@    a .TP item per flag of the verb (names, a value
//                         placeholder, its --help text), then one paragraph
//                         naming the shared flags it also takes, by group
//   .\" @EXAMPLES name@   the verb's example command lines
//   .\" @GROUP group@     a .TP item per flag of a shared group, once:
//                         run-parameters (with each one's JSON key and
//                         default), accountant, output, dpbudget (the flags
//                         before a verb)
//
// Every verb's three markers and every group's must be there, once each. A
// flag is in a shared group on a verb when its names and help are the group's;
// one whose help says something else there is the verb's own item.
// tests/shell/man_page_test.sh regenerates the page and compares.
#include <CLI/CLI.hpp>
#include <istream>
#include <ostream>
#include <string>

namespace dpb::cli {

/// Writes the page for `root` (every verb declared) from `page_template`,
/// named `where` in messages. A marker line that is malformed, unknown,
/// repeated or missing is a UsageError naming it (and its line).
void write_man(CLI::App& root, std::istream& page_template, const std::string& where,
               std::ostream& out);

/// `text` as roff body text: backslashes, hyphens (as \-, so flags and values
/// copy as typed), quotes and ^ ~ ` written as escapes, non-ASCII as \[uXXXX],
/// and a leading dot guarded with \&.
std::string roff_escape(const std::string& text);

}  // namespace dpb::cli
