// docs/guide.md, section "A dataset's budget over time" (from its heading to
// the next "## " heading outside a fenced block): the section is one console
// session, and this test replays it and checks that every command prints what
// the guide shows.
//
// The convention, for whoever edits that section:
//  - Its ```console blocks, in order, are one session run in one fresh, empty
//    directory. Other blocks (```sh, ```text) are not run.
//  - A line `$ COMMAND` is a command; the lines after it, up to the next `$ `
//    line or the end of the block, are what it prints: its standard output,
//    then its standard error. A command with a here-document
//    (`$ cat > FILE <<'EOF'`) goes on to the line that ends it (`EOF`): those
//    lines are its input, not its output.
//  - Each command runs in its own /bin/sh in that directory, `dpbudget` being
//    the binary under test ($DPBUDGET_BINARY), and with $? the status of the
//    command before it: `$ echo $?` shows that status. A command that exits
//    non-zero must be followed by `$ echo $?`, so the guide shows every
//    failure. `$ export NAME=VALUE` sets NAME for the commands after it.
//    DPBUDGET_USER is `alice` unless the section exports another.
//  - What is compared has every 64-hex-digit hash replaced by <hash> and
//    every time like 2026-11-28T22:10:00Z by <time>, on both sides. A hash in
//    a command (`ledger-verify --head HASH`) must be one the guide shows in an
//    earlier output: the test puts there what this run printed at that place.
//  - The tamper demonstrations edit copies of a ledger with the `sqlite3`
//    shell. Where no sqlite3 is installed, a command starting with `sqlite3`
//    and the rest of its block are skipped (with a message; CI installs it),
//    so no later block may use a file that such a block creates or changes.
// The whole session takes about 3 s (report and ledger-status with pld are
// most of it).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "run.hpp"

namespace guide_ledger_test {

using dpb::test::shell_quote;
using dpb::test::slurp;

const char* const kSection = "## A dataset's budget over time";

/// One `$ ` command of the section and what the guide shows after it.
struct Step {
  int line = 0;         // of the `$ ` line in docs/guide.md
  int block = 0;        // the section's console blocks counted from 1
  std::string command;  // without the prompt; a here-document's lines included
  std::string shown;    // lines joined with '\n', each ending in one
};

/// The section's commands in order, from its ```console blocks. The section
/// ends at the next "## " heading outside a block (a report's Markdown inside
/// one has headings too).
std::vector<Step> section_steps() {
  const std::string guide = slurp(DPBUDGET_GUIDE);
  std::vector<std::string> lines;
  int line_no = 0;  // of lines[0]
  {
    std::istringstream in(guide);
    bool inside = false, fenced = false;
    int n = 0;
    for (std::string l; std::getline(in, l);) {
      ++n;
      if (l.rfind("```", 0) == 0) fenced = !fenced;
      if (!fenced && l == kSection) {
        inside = true;
        line_no = n;
      } else if (inside && !fenced && l.rfind("## ", 0) == 0) {
        break;
      }
      if (inside) lines.push_back(l);
    }
  }
  REQUIRE_MESSAGE(!lines.empty(), "docs/guide.md has no heading '" << kSection << "'");

  std::vector<Step> steps;
  const std::regex heredoc(R"(<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?)");
  bool fenced = false, console = false;
  int block = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const int at = line_no + static_cast<int>(i);
    if (l.rfind("```", 0) == 0) {
      console = !fenced && l == "```console";
      fenced = !fenced;
      if (console) ++block;
      continue;
    }
    if (!console) continue;
    if (l.rfind("$ ", 0) != 0) {
      REQUIRE_MESSAGE((!steps.empty() && steps.back().block == block),
                      "docs/guide.md:" << at << ": output before any `$ ` command in its block");
      steps.back().shown += l + "\n";
      continue;
    }
    Step s;
    s.line = at;
    s.block = block;
    s.command = l.substr(2);
    std::smatch m;
    if (std::regex_search(l, m, heredoc)) {
      const std::string word = m[1];
      bool closed = false;
      while (++i < lines.size() && lines[i].rfind("```", 0) != 0) {
        s.command += "\n" + lines[i];
        if (lines[i] == word) {
          closed = true;
          break;
        }
      }
      REQUIRE_MESSAGE(closed, "docs/guide.md:" << at << ": the here-document is not ended by '"
                                               << word << "' inside its block");
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

const std::regex& hash_pattern() {
  static const std::regex r("[0-9a-f]{64}");
  return r;
}

std::vector<std::string> hashes_in(const std::string& text) {
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), hash_pattern()), end; it != end; ++it)
    out.push_back(it->str());
  return out;
}

/// `text` with its hashes and times replaced by placeholders.
std::string normalised(const std::string& text) {
  static const std::regex time_pattern(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)");
  return std::regex_replace(std::regex_replace(text, hash_pattern(), "<hash>"), time_pattern,
                            "<time>");
}

/// An environment variable set for the session, restored (or unset) after it.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        ::unsetenv(it->first.c_str());
    }
  }
  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

/// A fresh directory for the session (`work`) beside the files the test
/// writes for each command, removed with everything in it.
struct SessionDir {
  std::filesystem::path base;
  std::filesystem::path work;
  SessionDir() {
    std::string pattern = "/tmp/dpbudget_guide_ledger_XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    base = pattern;
    work = base / "session";
    std::filesystem::create_directory(work);
  }
  ~SessionDir() {
    std::error_code ignored;
    std::filesystem::remove_all(base, ignored);
  }
  SessionDir(const SessionDir&) = delete;
  SessionDir& operator=(const SessionDir&) = delete;
};

/// Runs `command` with /bin/sh in the session's directory, $? being `previous`.
dpb::test::Run run_in_session(const SessionDir& dir, const std::string& command, int previous) {
  const std::string script = (dir.base / "command.sh").string();
  const std::string out = (dir.base / "stdout").string();
  const std::string err = (dir.base / "stderr").string();
  std::ofstream(script) << "cd " << shell_quote(dir.work.string()) << " || exit 125\n"
                        << "dpbudget() { " << shell_quote(dpb::test::dpbudget_binary())
                        << " \"$@\"; }\n"
                        << "(exit " << previous << ")\n"
                        << command << "\n";
  const int raw = std::system(("/bin/sh " + shell_quote(script) + " </dev/null >" +
                               shell_quote(out) + " 2>" + shell_quote(err))
                                  .c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(out), slurp(err)};
}

/// "line N: the guide shows 'A', this binary prints 'B'", N the first line of
/// the output that differs.
std::string first_difference(const std::string& shown, const std::string& printed) {
  std::istringstream a(shown), b(printed);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "they differ only in their last newline";
    if (!more_a) la = "(nothing)";
    if (!more_b) lb = "(nothing)";
    if (!more_a || !more_b || la != lb)
      return "output line " + std::to_string(n) + ": the guide shows '" + la +
             "', this binary prints '" + lb + "'";
  }
}

bool have_sqlite3() { return std::system("command -v sqlite3 >/dev/null 2>&1") == 0; }

}  // namespace guide_ledger_test

TEST_CASE("docs/guide.md: the dataset ledger section is one session of this binary's output") {
  using namespace guide_ledger_test;
  const auto steps = section_steps();
  // init, four adds, the refusal, the planned ledger, CI, status, history,
  // export, report, void, verify and tampering, the keyed ledger, the store
  REQUIRE(steps.size() >= 40);

  ScopedEnv env;
  env.set("DPBUDGET_USER", "alice");
  const SessionDir dir;
  const bool sqlite3 = have_sqlite3();
  std::map<std::string, std::string> hash_of;  // the guide's hash -> this run's
  int previous = 0;
  int skip_block = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.block == skip_block) continue;
    const std::string where = "docs/guide.md:" + std::to_string(s.line) + ": `$ " +
                              s.command.substr(0, s.command.find('\n')) + "`";
    if (!sqlite3 && s.command.rfind("sqlite3 ", 0) == 0) {
      MESSAGE(where << " and the rest of its block skipped: no sqlite3 installed");
      skip_block = s.block;
      continue;
    }
    static const std::regex export_line(R"(export ([A-Za-z_][A-Za-z0-9_]*)=(\S*))");
    std::smatch m;
    if (std::regex_match(s.command, m, export_line)) {
      env.set(m[1], m[2]);
      if (!s.shown.empty()) FAIL_CHECK(where << " shows output; an export prints nothing");
      previous = 0;
      continue;
    }

    // The guide's hashes in the command, as this run printed them.
    std::string command = s.command;
    bool known = true;
    for (const auto& h : hashes_in(s.command)) {
      const auto found = hash_of.find(h);
      if (found == hash_of.end()) {
        FAIL_CHECK(where << " uses the hash " << h
                         << ", which no earlier output of the section shows");
        known = false;
        continue;
      }
      command.replace(command.find(h), h.size(), found->second);
    }
    if (!known) continue;

    const auto r = run_in_session(dir, command, previous);
    const std::string printed = r.out + r.err;
    const auto shown_hashes = hashes_in(s.shown);
    const auto printed_hashes = hashes_in(printed);
    if (shown_hashes.size() == printed_hashes.size()) {
      for (std::size_t k = 0; k < shown_hashes.size(); ++k) {
        const auto entry = hash_of.emplace(shown_hashes[k], printed_hashes[k]).first;
        if (entry->second != printed_hashes[k])
          FAIL_CHECK(where << ": the guide shows hash " << shown_hashes[k]
                           << " where an earlier command printed another one: the "
                              "section's outputs are not from one session");
      }
    }
    const std::string got = normalised(printed), want = normalised(s.shown);
    if (got != want)
      FAIL_CHECK(where << " prints other than the guide shows (hashes and times aside); "
                       << first_difference(want, got) << "\n--- the guide shows:\n"
                       << want << "--- this binary prints (exit status " << r.status << "):\n"
                       << got << "---");
    const bool status_shown =
        i + 1 < steps.size() && steps[i + 1].block == s.block && steps[i + 1].command == "echo $?";
    if (r.status != 0 && !status_shown)
      FAIL_CHECK(where << " exits " << r.status
                       << ", which the guide does not show: follow it with `$ echo $?`");
    previous = r.status;
  }
}
