#include "cli/input/input_file.hpp"

#include <filesystem>
#include <iostream>
#include <system_error>

namespace dpb::cli {

InputFile::InputFile(std::string_view flag, const std::string& path, std::string_view content)
    : flag_(flag), name_(path == "-" ? "<stdin>" : path), in_(&std::cin) {
  if (path == "-") return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError(flag_ + ": '" + path + "' is a directory (give " + std::string(content) + ")");
  file_.open(path, std::ios::binary);
  if (!file_) throw UsageError(flag_ + ": cannot open '" + path + "'");
  in_ = &file_;
}

std::string InputFile::read_text(std::size_t max_bytes) {
  std::string text(max_bytes + 1, '\0');
  in_->read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in_->bad()) throw UsageError(flag_ + ": cannot read " + name_);
  text.resize(static_cast<std::size_t>(in_->gcount()));
  return text;
}

std::string size_text(std::size_t bytes) {
  if (bytes != 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string InputLocation::str() const {
  std::string s = source;
  if (line > 0) s += ":" + std::to_string(line);
  if (!name.empty()) s += " '" + name + "'";
  if (!json_path.empty()) s += (s.empty() ? "" : ": ") + json_path;
  return s;
}

UsageError input_error(std::string_view flag, const InputLocation& at, std::string_view what) {
  const std::string where = at.str();
  return UsageError(std::string(flag) + ": " + (where.empty() ? "" : where + ": ") +
                    std::string(what));
}

}  // namespace dpb::cli
