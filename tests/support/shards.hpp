#pragma once
// `sweep ... --shard K/N` for K = 1 … N: the outputs concatenated in order,
// each shard checked to succeed. For a run of the binary (tests/e2e/run.hpp)
// or of the CLI in-process (tests/cli/in_process.hpp).
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace dpb::test {

/// `run(args, stdin_text)` runs one command line and returns its `status`,
/// `out` and `err`; each shard of `args` reads `stdin_text`.
template <class Run>
std::string shards_concatenated(Run run, const std::vector<std::string>& args, std::size_t n,
                                const std::string& stdin_text = "") {
  std::string all;
  for (std::size_t k = 1; k <= n; ++k) {
    std::vector<std::string> a = args;
    a.push_back("--shard");
    a.push_back(std::to_string(k) + "/" + std::to_string(n));
    const auto r = run(a, stdin_text);
    INFO("shard ", k, "/", n, " stderr: ", r.err);
    CHECK(r.status == 0);
    all += r.out;
  }
  return all;
}

}  // namespace dpb::test
