#pragma once
// Runs the built dpbudget binary with arguments and captures stdout, stderr
// and the exit status.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_file.hpp"

namespace dpb::test {

struct Run {
  int status;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// README "Exit status": output could not be written (written out, not taken
/// from src/cli/errors.hpp, so that a renumbering breaks the tests).
inline constexpr int kWriteFailed = 5;

/// A number a peer printed with 2 decimals ("3.01"): ours, rounded the same
/// way, must print the same digits.
inline constexpr double kTwoDecimals = 0.005;

/// The binary under test: $DPBUDGET_BINARY, which ctest sets to its build
/// tree's dpbudget (tests/CMakeLists.txt: a sanitizer build links these
/// tests' objects from another tree, compiled for that tree's binary), else
/// the binary of the tree this file was compiled in (a run by hand).
inline const std::string& dpbudget_binary() {
  static const std::string path = [] {
    const char* given = std::getenv("DPBUDGET_BINARY");
    return std::string(given && *given ? given : DPBUDGET_BINARY);
  }();
  return path;
}

template <typename Args>
inline Run run_dpbudget_args(const Args& args, const std::string& stdin_text = "") {
  std::string base = "/tmp/dpbudget_e2e_";
  base.append(std::to_string(::getpid()));
  std::ostringstream cmd;
  cmd << shell_quote(dpbudget_binary());
  for (const auto& a : args) cmd << ' ' << shell_quote(a);
  if (!stdin_text.empty()) {
    std::ofstream(base + ".in") << stdin_text;
    cmd << " <" << base << ".in";
  } else {
    cmd << " </dev/null";
  }
  cmd << " >" << base << ".out 2>" << base << ".err";
  const int raw = std::system(cmd.str().c_str());
  Run r{WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(base + ".out"),
        slurp(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  std::remove((base + ".in").c_str());
  return r;
}

inline Run run_dpbudget(std::initializer_list<std::string> args,
                        const std::string& stdin_text = "") {
  return run_dpbudget_args(args, stdin_text);
}

inline Run run_dpbudget(const std::vector<std::string>& args, const std::string& stdin_text = "") {
  return run_dpbudget_args(args, stdin_text);
}

/// `args` followed by `more`: one command line built from shared parts.
inline std::vector<std::string> with(std::vector<std::string> args,
                                     const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/// Runs `command` with /bin/sh and captures stdout (stderr is left alone).
inline Run run_shell(const std::string& command) {
  const std::string out = "/tmp/dpbudget_e2e_sh_" + std::to_string(::getpid()) + ".out";
  const int raw = std::system((command + " >" + out).c_str());
  Run r{WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(out), ""};
  std::remove(out.c_str());
  return r;
}

}  // namespace dpb::test
