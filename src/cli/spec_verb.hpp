#pragma once
// `--spec FILE` and `--print-spec` for the verbs that report ε or δ of one
// composition (epsilon, delta): the event comes from a spec file instead of
// the DP-SGD flags, or the flags' event is printed as a spec to start from.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/run_parameters.hpp"
#include "report/record.hpp"

namespace dpb::cli {

struct SpecFlags {
  std::string file;  ///< --spec; empty = the DP-SGD flags describe the run
  bool print = false;
};

void add_spec_flags(CLI::App& app, SpecFlags& flags);

/// --print-spec: writes the spec JSON of --spec (normalised) or of the DP-SGD
/// flags to `out`, computing nothing.
void print_spec(const SpecFlags& spec, const DpSgdFlags& run, std::ostream& out);

/// The run to account: its inputs for the report and its event, from --spec
/// when given (every run flag given beside it is refused), else from the flags.
struct RunEvent {
  report::Record inputs;
  EventPtr event;
};
RunEvent load_run(const SpecFlags& spec, const DpSgdFlags& run);

}  // namespace dpb::cli
