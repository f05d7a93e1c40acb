#pragma once
// Starting a throwaway cluster with tests/support/pg_cluster.sh and reading
// its shell assignments (NAME=VALUE, one a line); no test framework, so that
// the benchmark uses it too.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <map>
#include <string>

namespace dpb::test {

/// Runs `bash SCRIPT start OPTIONS`: its assignments, and its exit status in
/// `status` (0 started; 77 the server is not installed, the script has said
/// so; -1 it did not run or ended by a signal).
inline std::map<std::string, std::string> start_pg_cluster(const std::string& script,
                                                           const std::string& options,
                                                           int* status) {
  std::map<std::string, std::string> vars;
  *status = -1;
  FILE* p = ::popen(("bash " + script + " start " + options).c_str(), "r");
  if (!p) return vars;
  std::array<char, 4096> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), p)) {
    std::string l(line.data());
    if (!l.empty() && l.back() == '\n') l.pop_back();
    const auto eq = l.find('=');
    if (eq != std::string::npos) vars[l.substr(0, eq)] = l.substr(eq + 1);
  }
  const int wait_status = ::pclose(p);
  if (WIFEXITED(wait_status)) *status = WEXITSTATUS(wait_status);
  return vars;
}

}  // namespace dpb::test
