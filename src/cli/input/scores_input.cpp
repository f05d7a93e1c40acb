#include "cli/input/scores_input.hpp"

#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"
#include "cli/input/input_file.hpp"

namespace dpb::cli {

std::vector<Scored> read_scores(std::istream& in, const std::string& name) {
  std::vector<Scored> out;
  std::string line;
  std::size_t number = 0, bytes = 0;
  while (std::getline(in, line)) {
    ++number;
    bytes += line.size() + 1;
    if (bytes > kMaxInputBytes)
      throw UsageError("--scores: more than " + size_text(kMaxInputBytes));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const InputLocation where{name, number, ""};
    const auto comma = line.find(',');
    if (comma == std::string::npos)
      throw input_error("--scores", where, "expected 'score,label', got '" + line + "'");
    Scored s{};
    try {
      s.score = parse_real("score", line.substr(0, comma),
                           Domain{-kInf, kInf, true, true, "a finite number"});
    } catch (const UsageError& e) {
      throw input_error("--scores", where, e.what());
    }
    const std::string label = line.substr(comma + 1);
    if (label == "1" || label == "true")
      s.member = true;
    else if (label == "0" || label == "false")
      s.member = false;
    else
      throw input_error("--scores", where,
                        "label: must be 1, 0, true or false, got '" + label + "'");
    out.push_back(s);
  }
  if (in.bad()) throw UsageError("--scores: cannot read '" + name + "'");
  if (out.empty()) throw UsageError("--scores: no 'score,label' lines in '" + name + "'");
  return out;
}

}  // namespace dpb::cli
