#pragma once
// `audit --scores`: an attack's `score,label` lines, one per example.
#include <cstddef>
#include <istream>
#include <string>
#include <vector>

#include "accounting/risk/audit.hpp"

namespace dpb::cli {

/// The `score,label` lines of `in` (label 1/0 or true/false; a finite score);
/// blank lines and lines starting with # are skipped. `name` is how messages
/// name the input (the path, or - for standard input). A bad line is a
/// UsageError "--scores: NAME:LINE: what is wrong", as is input with no line
/// or more than kMaxInputBytes (cli/input/input_file.hpp); nothing else is thrown.
std::vector<Scored> read_scores(std::istream& in, const std::string& name);

}  // namespace dpb::cli
