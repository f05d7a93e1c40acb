#pragma once
// What every reader of an input file shares (--spec, --input, --schedule,
// --scores, --coefficients, --matrix): one way to open a path or "-"
// (standard input), one way to say where in an input a fault is, and the
// size limits. Each reader throws UsageError "FLAG: LOCATION: what is wrong".
#include <cstddef>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>

#include "cli/errors.hpp"

namespace dpb::cli {

/// The largest input a line-by-line reader takes (--input, --schedule,
/// --scores): 64 MiB, about a million configurations or three million
/// score,label lines; a reader stops at the limit rather than slurp more.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;
/// The longest line of a JSON Lines input: 1 MiB, room for a spec at its
/// nesting limit.
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

/// A limit as messages say it: "64 MiB", "1 KiB", "100 bytes".
std::string size_text(std::size_t bytes);

/// An input named by a flag: the file at a path, or standard input for "-".
class InputFile {
 public:
  /// Opens `path`, given to `flag`. Throws UsageError: a directory ("FLAG:
  /// 'PATH' is a directory (give CONTENT)"), a path that cannot be opened
  /// ("FLAG: cannot open 'PATH'").
  InputFile(std::string_view flag, const std::string& path, std::string_view content);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::istream& stream() { return *in_; }
  /// How locations name the input: the path as given, or <stdin>.
  const std::string& name() const { return name_; }
  /// The whole input when it holds at most `max_bytes`; one byte more when it
  /// is larger (the caller refuses it), read no further. Throws UsageError
  /// "FLAG: cannot read NAME" on a read error.
  std::string read_text(std::size_t max_bytes);

 private:
  std::string flag_;
  std::string name_;
  std::ifstream file_;
  std::istream* in_;
};

/// A place in an input, as messages name it: "NAME:LINE" (a line-based
/// input; "NAME:LINE 'CONFIG'" for a line with a `name`), "NAME" (the whole input), a JSON path
/// "/events/2/sigma" (a spec: its pointer into the document), or "NAME:LINE: /path" (a spec on a
/// line of
/// --input).
struct InputLocation {
  std::string source;     ///< InputFile::name(); empty: not named
  std::size_t line = 0;   ///< from 1; 0: none
  std::string json_path;  ///< a JSON pointer, or "(top level)"; empty: none
  /// The `name` of the configuration on the line, shown quoted after it
  /// ("NAME:LINE 'cifar'"); empty: none.
  std::string name = {};

  std::string str() const;
};

/// UsageError "FLAG: LOCATION: what".
UsageError input_error(std::string_view flag, const InputLocation& at, std::string_view what);

}  // namespace dpb::cli
