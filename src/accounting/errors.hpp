#pragma once
// Errors raised by the numerics layer. The CLI catches them once and maps them
// to exit statuses (README, "Exit status").
#include <charconv>
#include <stdexcept>
#include <string>

namespace dpb {

/// A number in a message: the shortest text that reads back as it.
inline std::string shown_number(double v) {
  char buf[32];
  return {buf, std::to_chars(buf, buf + sizeof buf, v).ptr};
}

/// A parameter outside its domain, e.g. a sampling probability above 1.
/// `field` names the parameter as the event vocabulary does
/// ("noise_multiplier", "sampling_probability", ...).
class InvalidParameter : public std::invalid_argument {
 public:
  InvalidParameter(std::string field, const std::string& message)
      : std::invalid_argument(field + ": " + message), field_(std::move(field)) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

/// The accountant cannot handle this event (e.g. the CLT accountant and a
/// Laplace event). The message says which event and why.
class UnsupportedEvent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A solver found no value meeting the target (e.g. even one step exceeds ε).
class NoSolution : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dpb
