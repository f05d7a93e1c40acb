#pragma once
// A file of given text under /tmp for a test to hand to the command line,
// named for this process and the test's name for it, removed when it goes out
// of scope (the e2e tests' --spec and --schedule files, the CLI tests run
// in-process).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace dpb::test {

struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path("/tmp/dpbudget_test_" + std::to_string(::getpid()) + "_" + name) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

}  // namespace dpb::test
