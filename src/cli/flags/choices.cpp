#include "cli/flags/choices.hpp"

namespace dpb::cli {
namespace {

constexpr const char* kChoicesPrefix = "dpbudget-choices:";
constexpr const char* kFileMarker = "dpbudget-file";

/// A validator that accepts every value and has no description (so --help
/// is unchanged); only its name carries information.
CLI::Validator marker(const std::string& name) {
  return CLI::Validator([](std::string&) { return std::string(); }, "", name);
}

CLI::Validator* find_validator(CLI::Option& option, const std::string& name) {
  try {
    return option.get_validator(name);
  } catch (const CLI::OptionNotFound&) {
    return nullptr;
  }
}

}  // namespace

CLI::Option* record_choices(CLI::Option* option, const std::vector<std::string>& choices) {
  std::string name = kChoicesPrefix;
  for (std::size_t i = 0; i < choices.size(); ++i) name += (i ? "\n" : "") + choices[i];
  option->check(marker(name));
  return option;
}

CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& target,
                               const std::vector<std::string>& choices,
                               const std::string& description) {
  return record_choices(app.add_option(name, target, description), choices);
}

CLI::Option* record_file(CLI::Option* option) {
  option->check(marker(kFileMarker));
  return option;
}

std::vector<std::string> choices_of(CLI::Option& option) {
  const std::string prefix = kChoicesPrefix;
  std::vector<std::string> out;
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    const std::string& name = v->get_name();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());
    std::size_t start = 0;
    while (start <= rest.size()) {
      const auto end = rest.find('\n', start);
      out.push_back(rest.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return out;
}

bool names_file(CLI::Option& option) { return find_validator(option, kFileMarker) != nullptr; }

}  // namespace dpb::cli
