// dpbudget sweep: one row per combination of parameter lists (or per line of
// a JSON Lines config file), ε at each δ or a solved σ / steps / sampling
// rate per target ε; an optional budget gate. Rows are computed on every core
// in blocks and printed in a fixed order as they are ready.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <variant>

#include "accounting/dpsgd/schedule.hpp"
#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/config_input.hpp"
#include "cli/input/input_file.hpp"
#include "cli/input/schedule.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "cli/run/sweep_jobs.hpp"
#include "cli/verbs.hpp"
#include "report/number_format.hpp"
#include "report/render.hpp"
#include "report/row_stream.hpp"
#include "util/ordered_blocks.hpp"
#include "util/progress_line.hpp"

namespace dpb::cli {
namespace {

struct SweepFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  std::vector<std::string> deltas, epsilons;
  std::string solve, max_epsilon, input, tolerance, max_sigma;
  std::string shard;  ///< --shard K/N
  bool keep_going = false;
  bool all_messages = false;  ///< --all-messages: every budget line on stderr
};

/// Budget lines (over budget, no sound upper bound) a sweep prints on stderr
/// before it stops naming rows: a CI log stays readable when most of 10^5
/// rows fail, and the summary after the sweep counts them all.
constexpr std::size_t kMaxBudgetMessages = 20;

/// How many rows of a sweep failed one way, and the first (its row number,
/// and the input line it came from, "FILE:LINE 'NAME'", when there is one).
struct FailureCount {
  std::size_t count = 0;
  std::size_t first = 0;
  std::string first_line;
  void add(std::size_t row, const std::string& line) {
    if (count++ == 0) {
      first = row;
      first_line = line;
    }
  }
  /// "row N", and " (FILE:LINE 'NAME')" for an input line.
  std::string first_text() const {
    return "row " + std::to_string(first) + (first_line.empty() ? "" : " (" + first_line + ")");
  }
};

/// --shard K/N: this run computes the K-th of N contiguous slices of the
/// jobs, [⌊(K−1)·J/N⌋, ⌊K·J/N⌋), so that the N outputs in order are the
/// whole sweep's.
struct Shard {
  std::size_t k = 1, n = 1;
  bool given = false;
};

Shard parse_shard(const std::string& text) {
  Shard s;
  if (text.empty()) return s;
  const std::string what =
      "--shard: must be K/N, whole numbers with 1 <= K <= N (e.g. 2/8), got '" + text + "'";
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) throw UsageError(what);
  auto whole = [&](const std::string& part) -> std::size_t {
    if (part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(what);
    return static_cast<std::size_t>(std::stoul(part));
  };
  s.k = whole(text.substr(0, slash));
  s.n = whole(text.substr(slash + 1));
  if (s.n < 1 || s.k < 1 || s.k > s.n) throw UsageError(what);
  s.given = true;
  return s;
}

Unknown unknown_of(const std::string& solve) {
  return solve.empty() ? Unknown::none : parse_choice("--solve", solve, kSolveChoices);
}

/// Rows a sweep holds before it writes text, Markdown or JSON. A sweep of no
/// more is printed once it ends, exactly as one table or document (and one
/// that stops on an error writes nothing); a longer one is written as it is
/// computed, text and Markdown as tables of this many rows each. A held row
/// takes about 2 KB: a few MB, however long the sweep.
constexpr std::size_t kHeldRows = 1000;

/// CSV's header for `rows`: their data columns in the order they first appear.
std::vector<std::string> csv_header(const std::vector<SweepRow>& rows) {
  std::vector<std::string> columns;
  for (const auto& row : rows)
    for (const auto& column : report::csv_columns(row.record))
      if (std::find(columns.begin(), columns.end(), column) == columns.end())
        columns.push_back(column);
  return columns;
}

/// Where a CSV spool goes: $TMPDIR, or /tmp when it is unset or empty (POSIX).
std::string temp_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

/// Runs `step`, a call on the sweep's report::RowStream, naming a failed CSV
/// spool as a failed write (exit status 5) that says what to do instead.
template <typename Step>
void spooled(Step step) {
  try {
    step();
  } catch (const report::SpoolError& e) {
    throw_write_error(std::string(e.what()) +
                          " (CSV waits there for its header; set TMPDIR, or "
                          "use --format jsonl)",
                      e.reason);
  }
}

/// A sweep whose flags are checked: what each row is computed with, its
/// jobs and the slice of them this run computes.
struct CheckedSweep {
  SweepSettings s;
  report::Format format = report::Format::text;
  Unknown unknown = Unknown::none;
  Shard shard;
  SweepJobSource source;
  /// --input lines were bad (reported on stderr, skipped with --keep-going).
  bool bad_input = false;
  /// `--input - --format jsonl` without --shard: each line is answered as it
  /// is read (run_streamed), with these defaults (the source named there).
  bool streamed = false;
  LineDefaults line_defaults;
};

CheckedSweep check_sweep(const SweepFlags& f, std::ostream& err) {
  CheckedSweep c;
  // Rows state epsilon (or solve for it) through answer(), which adds a
  // shuffled run's lower bound with pld: --sampling shuffle, or any --input
  // line, which may say so.
  c.s.choice =
      resolve(f.accountant,
              {true, !f.input.empty() || (f.run.sampling_given && f.run.sampling == "shuffle")});
  c.s.solve = resolve_solve_flags(f.tolerance, f.max_sigma);
  c.format = resolve(f.output);
  c.unknown = unknown_of(f.solve);
  if (!f.max_epsilon.empty())
    c.s.max_epsilon = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);
  if (c.unknown != Unknown::none && c.s.max_epsilon)
    throw UsageError("--max-epsilon: not with --solve (the solved rows meet their target)");
  const auto deltas =
      f.deltas.empty() ? std::vector<double>{} : parse_list("--delta", f.deltas, kOpenUnit);
  const auto epsilons = f.epsilons.empty() ? std::vector<double>{}
                                           : parse_list("--epsilon", f.epsilons, kNonNegative);
  c.shard = parse_shard(f.shard);
  if (!f.input.empty()) {
    // The lines give the run; a run flag would be silently overridden.
    for (const auto& p : kRunParameters)
      if (given(f.run, p.id))
        throw UsageError(std::string(p.flag) +
                         ": not with --input (the lines give the run: put \"" + std::string(p.key) +
                         "\" on each line instead)");
    c.streamed = f.input == "-" && c.format == report::Format::jsonl && !c.shard.given;
    if (c.streamed) {
      c.line_defaults = {c.unknown, deltas, epsilons, !f.max_epsilon.empty(), ""};
      return c;
    }
    auto jobs = std::make_shared<std::vector<SweepJob>>();
    c.bad_input = jobs_from_input({f.input, f.keep_going, !f.max_epsilon.empty()}, c.unknown,
                                  deltas, epsilons, *jobs, err);
    c.source.count = jobs->size();
    c.source.at = [jobs](std::size_t i) { return (*jobs)[i]; };
  } else {
    if (f.keep_going) throw UsageError("--keep-going: only with --input (it skips bad lines)");
    if (deltas.empty()) throw UsageError("--delta is required");
    if (c.unknown != Unknown::none && epsilons.empty())
      throw UsageError("--epsilon is required with --solve (the targets)");
    c.source = jobs_from_flags(f.run, c.unknown, deltas, epsilons);
    note_assumed_poisson(f.run, err);
    note_default_accountant(f.accountant,
                            parse_choice("--sampling", f.run.sampling, kSamplingChoices), err);
  }
  return c;
}

/// What a sweep's rows said, counted as they pass in order: the budget
/// gate's lines on stderr (the first kMaxBudgetMessages, unless
/// --all-messages), the notes and warnings once each, and the exit status.
class SweepTally {
 public:
  /// `keep_notes`: the format prints the rows' notes at the end (JSON Lines
  /// and CSV do not, so a stream of any length keeps none).
  SweepTally(const SweepFlags& f, bool keep_notes, std::ostream& err)
      : all_messages_(f.all_messages),
        keep_notes_(keep_notes),
        from_input_(!f.input.empty()),
        of_shard_(f.shard.empty() ? std::string() : " of shard " + f.shard),
        err_(err) {}

  std::vector<std::string> footnotes;
  std::size_t rows() const { return row_number_; }

  /// Counts `row` (the next one) and says on stderr what it failed: an
  /// --input line by where it is first ("FILE:LINE 'NAME', row N"), a
  /// combination of flags by its row ("row N, q=... sigma=...").
  void take(const SweepRow& row) {
    ++row_number_;
    // A run's gate lines sit on its first row; their rows count from it.
    const std::size_t first_row = row_number_;
    const std::string line = from_input_ ? row.subject : std::string();
    const auto where = [&](std::size_t n) {
      const std::string at = "row " + std::to_string(n) + of_shard_;
      return from_input_ ? row.subject + ", " + at : at + ", " + row.subject;
    };
    for (const auto& gate : row.gate) {
      const bool shown = all_messages_ || budget_messages_++ < kMaxBudgetMessages;
      if (gate.row) {
        over_rows_.add(first_row + *gate.row, line);
        if (shown)
          err_ << "dpbudget: budget exceeded: " << where(first_row + *gate.row) << " " << gate.text
               << '\n';
      } else {
        unbounded_runs_.add(row_number_, line);
        if (shown)
          err_ << "dpbudget: no sound upper bound to gate on: " << where(row_number_) << ": "
               << gate.text << '\n';
      }
    }
    if (row.no_solution) unsolved_rows_.add(row_number_, line);
    over_ = over_ || row.status == kBudgetExceeded;
    no_upper_bound_ = no_upper_bound_ || row.status == kNoUpperBound;
    no_solution_ = no_solution_ || row.no_solution;
    if (keep_notes_)
      for (const auto& note : row.notes)
        if (std::find(footnotes.begin(), footnotes.end(), "note: " + note) == footnotes.end())
          footnotes.push_back("note: " + note);
    for (const auto& why : row.warnings) say_once("warning: ", why);
    for (const auto& note : row.advice) say_once("note: ", note);
  }

  /// `text` (a warning or a note on the question) as a footnote and on stderr, once.
  void say_once(const std::string& kind, const std::string& text) {
    if (std::find(footnotes.begin(), footnotes.end(), kind + text) != footnotes.end()) return;
    footnotes.push_back(kind + text);
    err_ << "dpbudget: " << kind << report::escape_control(text) << '\n';
  }

  /// One summary line per way rows failed, counting every row (the per-row
  /// lines stop at kMaxBudgetMessages); returns the exit status.
  int finish(bool bad_input) const {
    const std::string rows_total = std::to_string(row_number_);
    if (over_rows_.count)
      err_ << "dpbudget: " << over_rows_.count << " of " << rows_total << " rows" << of_shard_
           << " over budget; first at " << over_rows_.first_text() << '\n';
    if (unbounded_runs_.count)
      err_ << "dpbudget: " << unbounded_runs_.count << " run"
           << (unbounded_runs_.count > 1 ? "s" : "") << " of " << rows_total << " rows" << of_shard_
           << " with no sound upper bound to gate on; first at " << unbounded_runs_.first_text()
           << '\n';
    if (unsolved_rows_.count)
      err_ << "dpbudget: " << unsolved_rows_.count << " of " << rows_total << " rows" << of_shard_
           << " with no solution; first at " << unsolved_rows_.first_text() << '\n';
    if (budget_messages_ > kMaxBudgetMessages && !all_messages_)
      err_ << "dpbudget: the first " << kMaxBudgetMessages << " of " << budget_messages_
           << " budget messages shown; --all-messages shows every one\n";
    // Precedence when lines fail differently (README "Exit status"): bad
    // input, then a run that cannot be gated, then no solution, then over budget.
    if (bad_input) return kUsage;
    if (no_upper_bound_) return kNoUpperBound;
    if (no_solution_) return kNoSolution;
    return over_ ? kBudgetExceeded : kOk;
  }

 private:
  bool all_messages_;
  bool keep_notes_;
  bool from_input_;
  std::string of_shard_;
  std::ostream& err_;
  bool over_ = false, no_solution_ = false, no_upper_bound_ = false;
  std::size_t row_number_ = 0;
  FailureCount over_rows_, unbounded_runs_, unsolved_rows_;
  std::size_t budget_messages_ = 0;  // budget lines, shown or not
};

/// Decides the CSV columns of `stream` where the flags decide them.
void choose_csv_columns(report::RowStream& stream, const SweepFlags& f, const CheckedSweep& c) {
  if (c.format != report::Format::csv) return;
  if (c.shard.given) {
    // Every shard's header is the columns of the sweep's first
    // configuration's rows (shard 1 prints it), so that the shards'
    // outputs concatenate to the whole sweep's.
    stream.stream_csv(
        c.source.count > 0 ? csv_header(compute(c.source.at(0), c.s)) : std::vector<std::string>{},
        /*header=*/c.shard.k == 1);
  } else if (!f.input.empty() || c.unknown != Unknown::none || !c.source.same_run_columns) {
    // Lines that differ, a row with no solution (its `error` column), or
    // micro-batch accumulation on some rows only: a later row may have a
    // column no earlier row has.
    spooled([&] { stream.spool_csv(temp_directory()); });
  }
}

/// Adds row `row_number` to `stream`; a column outside a streamed CSV header
/// is refused (with --shard the shards would not line up).
void add_row(report::RowStream& stream, SweepRow& row, std::size_t row_number, const Shard& shard) {
  try {
    spooled([&] { stream.add(std::move(row.record)); });
  } catch (const std::invalid_argument& e) {
    if (shard.given)
      throw UsageError(
          "--shard: with --format csv every row needs the columns of the "
          "sweep's first configuration, but row " +
          std::to_string(row_number) + " has '" + e.what() +
          "': the shards would not line up; use --format jsonl");
    throw std::logic_error("sweep: row " + std::to_string(row_number) + " has the column '" +
                           e.what() +
                           "', which the CSV header (the first rows' columns) lacks; use "
                           "--format jsonl");
  }
}

/// A streamed sweep's answer to a bad line with --keep-going: one JSON line,
/// {"line": N, "name": ..., "error": "--input: <stdin>:N: ..."} (`name` when
/// the line has one), so that a reader waiting for each line's answer gets
/// one. The message as stderr shows it
/// (report::escape_control): it may quote bytes of the line that are not
/// UTF-8, which JSON cannot hold.
report::Record bad_line_record(const InputError& e, const std::string& message) {
  report::Record r;
  r.add("line", report::integer(static_cast<std::int64_t>(e.line)));
  if (!e.name.empty()) r.add("name", report::text(e.name));
  r.add("error", report::text(report::escape_control(message)));
  return r;
}

/// `sweep --input - --format jsonl` (docs/guide.md#asking-as-training-goes):
/// reads one line, writes its rows and flushes, then reads the next; nothing
/// is read ahead and no row waits, so a process kept open by a training loop
/// answers each line as it comes. A bad line ends the sweep (its message on
/// stderr, exit status 2, the earlier lines' rows already written), or with
/// --keep-going is answered by bad_line_record(). At the end of the input, the
/// gate's summary and exit status as for any sweep.
int run_streamed(const SweepFlags& f, const CheckedSweep& c, std::ostream& out, std::ostream& err) {
  InputFile file("--input", f.input, "a JSON Lines file");
  LineDefaults defaults = c.line_defaults;
  defaults.source = file.name();
  report::Record inputs;
  add_inputs(inputs, c.s.choice);
  report::RowStream stream(report::Format::jsonl, report::TextStyle{}, std::move(inputs), "sweep",
                           kHeldRows, out, [&out](std::string_view text) { write_out(out, text); });
  SweepTally tally(f, /*keep_notes=*/false, err);
  bool any = false, bad = false;
  for_each_config(file.stream(), file.name(), kStreamedInputLimits, [&](ConfigRead read) {
    any = true;
    auto made = std::holds_alternative<ConfigLine>(read)
                    ? job_of_line(std::get<ConfigLine>(std::move(read)), defaults)
                    : std::variant<SweepJob, InputError>(std::get<InputError>(std::move(read)));
    if (const auto* e = std::get_if<InputError>(&made)) {
      const UsageError refusal =
          input_error("--input", {file.name(), e->line, "", e->name}, e->message);
      if (!f.keep_going) throw refusal;
      bad = true;
      err << "dpbudget: error: " << report::escape_control(refusal.what()) << '\n';
      stream.add(bad_line_record(*e, refusal.what()));
    } else {
      for (auto& row : compute(std::get<SweepJob>(made), c.s)) {
        tally.take(row);
        add_row(stream, row, tally.rows(), c.shard);
      }
    }
    stream.write();  // and flushed: the reader may be waiting for it
  });
  if (!any) refuse_empty_input(f.input);
  stream.finish(tally.footnotes);
  return tally.finish(bad);
}

int run_sweep(const SweepFlags& f, std::ostream& out, std::ostream& err) {
  const CheckedSweep c = check_sweep(f, err);
  if (only_checking()) return kOk;
  if (c.streamed) return run_streamed(f, c, out, err);

  const std::size_t begin = c.source.count * (c.shard.k - 1) / c.shard.n;
  const std::size_t end = c.source.count * c.shard.k / c.shard.n;
  report::Record inputs;
  add_inputs(inputs, c.s.choice);
  // --precision as emit() reads it (JSON Lines and CSV never read it).
  const bool styled = c.format != report::Format::jsonl && c.format != report::Format::csv;
  report::RowStream stream(c.format, styled ? text_style(f.output) : report::TextStyle{},
                           std::move(inputs), "sweep", kHeldRows, out,
                           [&out](std::string_view text) { write_out(out, text); });
  stream.style.colour = colour_for(c.format, out);
  choose_csv_columns(stream, f, c);
  SweepTally tally(f, c.format != report::Format::jsonl && c.format != report::Format::csv, err);
  {
    util::ProgressLine progress("sweep", end - begin);
    util::compute_in_order<SweepRow>(
        end - begin, [&](std::size_t i) { return compute(c.source.at(begin + i), c.s); },
        [&](std::vector<SweepRow> rows, std::size_t done) {
          progress.clear();
          if (stream.csv_undecided()) {
            // A grid: every row has the columns of the first rows, unless the
            // first rows' answers left an accountant or a companion row out.
            const bool partial =
                std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.partial; });
            if (partial)
              spooled([&] { stream.spool_csv(temp_directory()); });
            else
              stream.stream_csv(csv_header(rows), /*header=*/true);
          }
          for (auto& row : rows) {
            tally.take(row);
            add_row(stream, row, tally.rows(), c.shard);
          }
          // A failed write ends the sweep here, not after its last row.
          stream.write();
          progress.update(done);
        });
  }
  errno = 0;  // so that a failed write's reason is its own
  spooled([&] { stream.finish(tally.footnotes); });
  if (out) out.flush();
  if (!out) throw_write_error("standard output", errno);
  return tally.finish(c.bad_input);
}

Verb declare_sweep(CLI::App& command) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* cmd = &command;
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--delta", f->deltas, "delta value(s) in (0, 1)");
  cmd->add_option("--epsilon", f->epsilons, "target epsilon(s) with --solve");
  add_choice_option(*cmd, "--solve", f->solve, kSolveChoices,
                    "solve instead of computing epsilon: sigma|steps|sampling-rate");
  cmd->add_option("--max-epsilon", f->max_epsilon,
                  "budget gate: rows over it are named on stderr and the exit status is 1");
  std::string keys;
  for (const auto& p : kRunParameters) keys += std::string(p.key) + ", ";
  record_file(cmd->add_option(
      "--input", f->input,
      "JSON Lines file of configurations ('-' for stdin), keys as the flags: " + keys +
          "delta, epsilon (the budget, or the target with solve), solve (what the line solves "
          "for, as --solve: sigma|steps|sampling-rate, or its key), name; or "
          "spec (an event as in a --spec file) instead of the DP-SGD keys, with it "
          "neighbouring (add-remove|replace-one|replace-special, as epsilon's); or phases "
          "(a run in phases: an array of phase objects as in a --schedule file, each "
          "inheriting the line's run keys); not with the run flags. '-' with --format jsonl "
          "(and no --shard) answers each line as it is read, its rows flushed before the next "
          "line is read; a file, and the other formats, are read whole first"));
  cmd->add_option("--shard", f->shard,
                  "K/N: compute only the K-th of N equal slices of the configurations (1 <= K <= "
                  "N); the N outputs in order concatenate to the whole sweep's (CSV: header from "
                  "shard 1)");
  cmd->add_flag("--keep-going", f->keep_going,
                "with --input: report malformed lines and compute the others (exit status 2); "
                "with --input - --format jsonl a bad line is answered by {\"line\": N, "
                "\"name\": ..., \"error\": ...} on stdout (name if the line has one)");
  cmd->add_flag("--all-messages", f->all_messages,
                "name every row over budget (or with no sound upper bound) on stderr; by "
                "default the first " +
                    std::to_string(kMaxBudgetMessages) + ", then a count");
  add_accountant_flags(*cmd, f->accountant);
  add_solve_flags(*cmd, f->tolerance, f->max_sigma);
  add_output_flags(*cmd, f->output, /*allow_jsonl=*/true);
  add_wide_flag(*cmd, f->output);
  return verb_of(cmd, f, run_sweep);
}

}  // namespace

extern const VerbDescriptor kSweepVerb{
    "sweep",
    "one row per combination of parameter lists (a:b:step ranges), or per --input line",
    {"dpbudget sweep --sigma 0.5:2:0.1 --epochs 1,10,100 --dataset-size 60000 --batch-size 256 "
     "--delta 1e-5 --format csv"},
    declare_sweep};

}  // namespace dpb::cli
