#pragma once
// Number lists for --coefficients and --matrix (the matrix verbs): a JSON
// array of numbers or of rows, or CSV — numbers separated by commas,
// semicolons or white space, one matrix row per line. Errors name the flag
// and the file.
#include <string>
#include <vector>

namespace dpb::cli {

/// The rows of numbers in `text`, read from `path` for `flag` (a JSON array
/// of numbers is one row). Throws UsageError: not valid JSON, an entry that
/// is not a finite number, a row that is not an array, no numbers at all.
std::vector<std::vector<double>> parse_number_rows(const char* flag, const std::string& path,
                                                   const std::string& text);

/// parse_number_rows() of the file at `path` (throws UsageError naming
/// `flag` when it cannot be read).
std::vector<std::vector<double>> read_number_rows(const char* flag, const std::string& path);

}  // namespace dpb::cli
