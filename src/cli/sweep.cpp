// dpbudget sweep: one row per combination of parameter lists (or per line of
// a JSON Lines config file), ε at each δ or a solved σ / steps / sampling
// rate per target ε; an optional budget gate. Rows are computed on every core
// in blocks and printed in a fixed order as they are ready.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "accounting/dpsgd/schedule.hpp"
#include "accounting/errors.hpp"
#include "cli/accountant_flags.hpp"
#include "cli/choices.hpp"
#include "cli/config_input.hpp"
#include "cli/errors.hpp"
#include "cli/output_flags.hpp"
#include "cli/parse.hpp"
#include "cli/result_rows.hpp"
#include "cli/run_parameters.hpp"
#include "cli/schedule.hpp"
#include "cli/solve.hpp"
#include "cli/spec_input.hpp"
#include "cli/verbs.hpp"
#include "report/number_format.hpp"
#include "report/render.hpp"

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

/// How many rows of a sweep failed one way, and the first (its row number).
struct FailureCount {
  std::size_t count = 0;
  std::size_t first = 0;
  void add(std::size_t row) {
    if (count++ == 0) first = row;
  }
};

/// One configuration to compute: a complete run (but for the unknown), its
/// δ values and target (or budget) ε values.
struct Job {
  std::optional<std::string> name;
  std::size_t line = 0;  ///< input line, 0 for flag combinations
  DpSgdRun run;
  Unknown unknown = Unknown::none;
  std::vector<double> deltas;
  std::vector<double> epsilons;  ///< targets when solving, else budgets
  EventPtr spec;                 ///< an --input line's "spec", instead of `run`
  std::string spec_json;
  std::optional<Neighbouring> neighbouring;  ///< the line's "neighbouring" (with a spec)
  /// Whether `spec` is the run's own mechanism (false for a line's phases
  /// with a phase composed as a stand-in: schedule_is_the_run).
  bool event_is_own = true;
};

/// The jobs of a sweep, made when asked for: job i of `count`.
struct JobSource {
  std::size_t count = 0;
  std::function<Job(std::size_t)> at;
  /// Every job's run columns are the same (a grid whose swept values add or
  /// remove none): CSV can take its header from the first rows.
  bool same_run_columns = false;
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

struct Row {
  report::Record record;
  std::vector<std::string> notes;  ///< footnotes (text output)
  /// Accountants of `--accountant all` that could not handle this row's run
  /// ("skipped <reason>"), and other warnings about it: a footnote and one
  /// stderr warning each, never silent.
  std::vector<std::string> warnings;
  /// The budget gate's lines for this row's run (budget_lines; their rows
  /// count from this one), and the run as messages name it.
  std::vector<BudgetLine> gate;
  std::string subject;
  /// The gate's exit status for the run (kOk, kBudgetExceeded, kNoUpperBound).
  int status = kOk;
  bool no_solution = false;
  /// The job's answer left something out here (an accountant skipped, a
  /// companion row missing, on its first row): another job's rows may have
  /// columns this one's lack.
  bool partial = false;
};

struct Settings {
  AccountantChoice choice;
  SolveSettings solve;
  std::optional<double> max_epsilon;
};

std::string describe(const Job& job) {
  if (job.name) return "'" + report::escape_control(*job.name) + "'";
  if (job.line) return "line " + std::to_string(job.line);
  auto n = [](double v) { return report::format_number(v, 6, report::Rounding::nearest); };
  std::string s = "q=" + n(job.run.sampling_rate);
  if (job.unknown != Unknown::noise_multiplier) s += " sigma=" + n(job.run.noise_multiplier);
  if (job.unknown != Unknown::steps) s += " steps=" + std::to_string(job.run.steps);
  return s;
}

/// The run's parameters, first in each row; in text, those that hold one
/// value in every row move above the table.
void add_run_columns(report::Record& r, const Job& job) {
  const std::size_t first = r.cells.size();
  if (job.name) r.add("name", report::text(*job.name));
  if (job.spec)
    r.add("spec", report::json(job.spec_json));
  else
    add_inputs(r, job.run, job.unknown);
  for (std::size_t i = first; i < r.cells.size(); ++i) r.cells[i].second.hoist = true;
}

std::vector<Row> compute(const Job& job, const Settings& s) {
  std::vector<Row> rows;
  if (job.unknown == Unknown::none) {
    // The same question `epsilon` asks (the run's rows, its companions, the
    // recommended row), and the same gate on its smallest sound upper bound.
    Question q;
    q.event = job.spec ? job.spec : dp_sgd_event(job.run);
    if (!job.spec) q.run = job.run;
    q.event_is_own = job.event_is_own;
    q.accountants = s.choice;
    if (job.neighbouring) q.accountants.options.neighbouring = job.neighbouring;
    q.targets = job.deltas;
    q.what = describe(job);
    const Answer a = answer(q);
    std::optional<double> budget = s.max_epsilon;
    for (double b : job.epsilons) budget = budget ? std::min(*budget, b) : b;
    std::optional<BudgetCheck> check;
    if (budget) check = check_budget(q, a, *budget);
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      Row row;
      add_run_columns(row.record, job);
      // The row's own cells; its `sampling` (the Poisson estimate's scheme
      // beside a shuffled run) replaces the run's column of that name.
      for (auto& added : answer_record(q, a, i).cells) {
        const std::string& key = added.first;  // (clang 14: no captured structured bindings)
        auto same = std::find_if(row.record.cells.begin(), row.record.cells.end(),
                                 [&key](const auto& c) { return c.first == key; });
        if (same != row.record.cells.end())
          same->second = std::move(added.second);
        else
          row.record.cells.push_back(std::move(added));
      }
      if (check) {
        // The run's verdict at the row's δ: its smallest sound upper bound
        // against the budget (every row of the run says the same).
        row.record.add("budget", report::hoisted(report::number(*budget)));
        row.record.add("over_budget",
                       report::visible(report::boolean(check->row_over[i]), report::Show::data));
        details_last(row.record);
      }
      row.notes = a.rows[i].guarantee.notes;
      if (auto w = order_edge_warning(a.rows[i].guarantee)) row.warnings.push_back(std::move(*w));
      if (rows.empty()) {
        // The job's first row carries what concerns the whole run: skipped
        // accountants, warnings, and the gate's verdict.
        for (const auto& why : a.skipped) row.warnings.push_back("skipped " + why);
        row.warnings.insert(row.warnings.end(), a.warnings.begin(), a.warnings.end());
        row.partial = !a.skipped.empty() || !a.warnings.empty();
        if (check) {
          row.gate = budget_lines(a, *check, *budget, "budget", s.choice.names);
          row.subject = describe(job);
          row.status = budget_status(*check);
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }
  for (const auto& accountant : s.choice.names) {
    for (double target : job.epsilons)
      for (double delta : job.deltas) {
        Row row;
        add_run_columns(row.record, job);
        try {
          const Solved solved =
              solve_run(job.run, job.unknown, accountant, s.choice.options, target, delta, s.solve);
          for (auto& cell : solved_record(solved, job.unknown, target).cells)
            row.record.cells.push_back(cell);
          row.notes = solved.guarantee.notes;
        } catch (const NoSolution& e) {
          row.record.add("accountant", report::hoisted(report::text(accountant)));
          row.record.add("delta", report::hoisted(report::number(delta)));
          row.record.add("target_epsilon", report::hoisted(report::number(target)));
          row.record.add("error", report::text(std::string("no solution: ") + e.what()));
          row.no_solution = true;
        }
        rows.push_back(std::move(row));
      }
  }
  return rows;
}

Unknown unknown_of(const std::string& solve) {
  return solve.empty() ? Unknown::none : parse_choice("--solve", solve, kSolveChoices);
}

/// Jobs from the flags' Cartesian product, made one at a time (flat memory).
/// Every combination is derived once first, so that a combination the run
/// parameters refuse (e.g. a batch larger than the dataset) stops the sweep
/// before it prints anything.
JobSource jobs_from_flags(const SweepFlags& f, Unknown unknown, const std::vector<double>& deltas,
                          const std::vector<double>& epsilons) {
  auto grid = std::make_shared<const SweepGrid>(f.run);
  JobSource source;
  source.same_run_columns = true;
  std::optional<bool> accumulates;
  for (std::size_t i = 0; i < grid->size(); ++i) {
    // add_inputs() gives the run columns; of the values a sweep varies, only
    // an accumulation of several micro-batches adds columns
    // (accumulation_steps, logical_batch_size) that a row without lacks.
    const bool several = derive(grid->at(i), unknown).accumulation_steps > 1;
    if (accumulates && *accumulates != several) source.same_run_columns = false;
    accumulates = several;
  }
  source.count = grid->size();
  source.at = [grid, unknown, deltas, epsilons](std::size_t i) {
    Job job;
    job.run = derive(grid->at(i), unknown);
    job.neighbouring = run_neighbouring(job.run);
    job.unknown = unknown;
    job.deltas = deltas;
    job.epsilons = epsilons;
    return job;
  };
  return source;
}

/// `"solve": "<key>"`, as messages suggest it.
std::string solve_key_text(Unknown unknown) {
  return "\"solve\": \"" + std::string(run_parameter(solved_parameter(unknown)).key) + "\"";
}

/// Why line `c` cannot be computed as it stands: its "solve" disagrees with
/// --solve (`unknown`), it solves beside a budget gate, or it lacks a run
/// parameter it does not solve for. Keys named as on the line.
std::optional<std::string> solve_refusal(const ConfigLine& c, Unknown unknown, bool gate) {
  if (c.solve && unknown != Unknown::none && *c.solve != unknown)
    return "solve: \"" + std::string(run_parameter(solved_parameter(*c.solve)).key) +
           "\" on the line, but --solve " + std::string(choice_name(kSolveChoices, unknown)) +
           " on the command line (give one of them)";
  const Unknown solving = c.solve.value_or(unknown);
  if (c.solve && gate)
    return "solve: not with --max-epsilon (a solved row meets its own target epsilon; give "
           "the parameter to gate the line)";
  const DpSgdValues& v = c.values;
  if (solving != Unknown::sampling_rate && !v.sampling_rate && !v.batch_size)
    return v.sampling == Sampling::poisson
               ? "sampling_rate: missing (give it, or dataset_size and batch_size, or " +
                     solve_key_text(Unknown::sampling_rate) + ")"
               : "batch_size: missing (give it and dataset_size, or " +
                     solve_key_text(Unknown::sampling_rate) + ")";
  if (solving != Unknown::noise_multiplier && !v.noise_multiplier)
    return "noise_multiplier: missing (give it, or " + solve_key_text(Unknown::noise_multiplier) +
           ")";
  if (solving != Unknown::steps && !v.steps && !v.epochs)
    return "steps: missing (give it or epochs, or " + solve_key_text(Unknown::steps) + ")";
  return std::nullopt;
}

/// Jobs from --input lines; bad lines are reported on `err` (and abort the
/// sweep unless --keep-going). Returns whether any line was bad.
bool jobs_from_input(const SweepFlags& f, Unknown unknown, const std::vector<double>& deltas,
                     const std::vector<double>& epsilons, std::vector<Job>& jobs,
                     std::ostream& err) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (f.input != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(f.input, ec))
      throw UsageError("--input: '" + f.input + "' is a directory (give a JSON Lines file)");
    file.open(f.input);
    if (!file) throw UsageError("--input: cannot open '" + f.input + "'");
    in = &file;
  }
  const std::string source = f.input == "-" ? "<stdin>" : f.input;
  ConfigInput input;
  try {
    input = read_configs(*in, source);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {  // the stream's own failure, e.g. a read error
    throw UsageError("--input: cannot read '" + source + "': " + e.what());
  }
  // A gate over nothing must not pass: an empty input (a failed step before
  // dpbudget, a wrong path) has its own exit status.
  if (input.configs.empty() && input.errors.empty())
    throw NoConfigurations(
        "--input: " + (f.input == "-" ? std::string("standard input") : "'" + f.input + "'") +
        " holds no configuration (it is empty or has only blank lines)");
  std::vector<InputError> errors = std::move(input.errors);
  for (auto& c : input.configs) {
    Job job;
    job.name = c.name;
    job.line = c.line;
    if (!c.phases.empty()) {
      // A run in phases (docs/sampling.md#schedules): each phase over the
      // line's own run keys, composed as --schedule composes them.
      if (unknown != Unknown::none) {
        errors.push_back({c.line,
                          "phases: not with --solve (solve a run in phases with sigma or steps "
                          "--schedule)"});
        continue;
      }
      std::vector<DpSgdRun> phases;
      std::string fault;
      for (std::size_t i = 0; i < c.phases.size() && fault.empty(); ++i) {
        try {
          phases.push_back(derive_phase(c.phases[i], c.given, Unknown::none));
        } catch (const UsageError& e) {
          fault = "phases: phase " + std::to_string(i + 1) + ": " + e.what();
        }
      }
      if (fault.empty())
        if (const auto why = mixed_relation(phases)) fault = "phases: " + *why;
      if (!fault.empty()) {
        errors.push_back({c.line, fault});
        continue;
      }
      c.spec = schedule_event(phases);
      c.spec_json = event_to_json(*c.spec).dump();
      c.neighbouring = run_neighbouring(phases.front());
      job.event_is_own = schedule_is_the_run(phases);
    }
    if (c.spec) {
      if (unknown != Unknown::none) {
        errors.push_back({c.line, "spec: not with --solve (give the DP-SGD keys to solve)"});
        continue;
      }
      job.spec = c.spec;
      job.spec_json = c.spec_json;
      job.neighbouring = c.neighbouring;
      job.deltas = c.delta ? std::vector<double>{*c.delta} : deltas;
      job.epsilons = c.epsilon ? std::vector<double>{*c.epsilon} : epsilons;
      if (job.deltas.empty()) {
        errors.push_back({c.line, "delta: missing (give it on the line or with --delta)"});
        continue;
      }
      jobs.push_back(std::move(job));
      continue;
    }
    // A line solves for a parameter only when it says so (its "solve", or
    // --solve); a parameter it neither gives nor solves for is refused, never
    // taken as a question of another kind.
    if (auto why = solve_refusal(c, unknown, !f.max_epsilon.empty())) {
      errors.push_back({c.line, *why});
      continue;
    }
    job.unknown = c.solve.value_or(unknown);
    try {
      job.run = derive(c.values, job.unknown, Naming::keys);
      job.neighbouring = run_neighbouring(job.run);
    } catch (const UsageError& e) {
      errors.push_back({c.line, e.what()});
      continue;
    }
    job.deltas = c.delta ? std::vector<double>{*c.delta} : deltas;
    job.epsilons = c.epsilon ? std::vector<double>{*c.epsilon} : epsilons;
    if (job.deltas.empty()) {
      errors.push_back({c.line, "delta: missing (give it on the line or with --delta)"});
      continue;
    }
    if (job.unknown != Unknown::none && job.epsilons.empty()) {
      errors.push_back({c.line, "epsilon: missing target (on the line or with --epsilon)"});
      continue;
    }
    jobs.push_back(std::move(job));
  }
  std::sort(errors.begin(), errors.end(),
            [](const InputError& a, const InputError& b) { return a.line < b.line; });
  for (const auto& e : errors) {
    const std::string msg = source + ":" + std::to_string(e.line) + ": " + e.message;
    if (!f.keep_going) throw UsageError("--input: " + msg);
    err << "dpbudget: error: --input: " << report::escape_control(msg) << '\n';
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.line < b.line; });
  return !errors.empty();
}

/// Progress on stderr, only on a terminal and only once a sweep runs > 1 s.
class Progress {
 public:
  explicit Progress(std::size_t total)
      : total_(total), enabled_(::isatty(STDERR_FILENO) == 1), start_(Clock::now()) {}
  void update(std::size_t done) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200))
      return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\rdpbudget: sweep %zu/%zu", done, total_);
    std::fflush(stderr);
  }
  /// Erases the progress line, so that rows and messages written next start
  /// on a line of their own (it comes back at the next update).
  void clear() {
    if (!shown_) return;
    shown_ = false;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  ~Progress() { clear(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::size_t total_;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_, last_{};
};

/// Computes jobs [begin, end) of `source` in blocks on every core; `sink`
/// receives each block's rows in job order, on the calling thread. Workers
/// run at most kMaxBlocksAhead blocks ahead of the sink, so memory stays flat
/// however long the sweep.
template <typename Sink>
void compute_in_order(const JobSource& source, std::size_t begin, std::size_t end,
                      const Settings& s, Sink sink) {
  constexpr std::size_t kBlock = 16;
  constexpr std::size_t kMaxBlocksAhead = 64;
  const std::size_t total = end - begin;
  const std::size_t blocks = (total + kBlock - 1) / kBlock;
  struct Slot {
    bool done = false;
    std::vector<Row> rows;
    std::exception_ptr error;
  };
  // Block b waits in slot b % kMaxBlocksAhead: the workers never run further
  // ahead, so the slots are reused and their number does not grow with the sweep.
  std::vector<Slot> slots(std::min(blocks, kMaxBlocksAhead));
  std::mutex m;
  std::condition_variable ready, room;
  std::size_t consumed = 0;  // blocks the sink has taken (guarded by m)
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (std::size_t b; !stop && (b = next++) < blocks;) {
      {
        std::unique_lock lock(m);
        room.wait(lock, [&] { return stop || b < consumed + kMaxBlocksAhead; });
      }
      if (stop) break;
      Slot slot;
      try {
        const std::size_t first = begin + b * kBlock;
        for (std::size_t i = first; i < std::min(end, first + kBlock); ++i)
          for (auto& row : compute(source.at(i), s)) slot.rows.push_back(std::move(row));
      } catch (...) {
        slot.error = std::current_exception();
      }
      slot.done = true;
      std::lock_guard lock(m);
      slots[b % kMaxBlocksAhead] = std::move(slot);
      ready.notify_all();
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = blocks > 1 ? std::min<std::size_t>(cores, blocks) : 0;
  std::vector<std::jthread> pool;
  auto halt = [&] {
    {
      std::lock_guard lock(m);
      stop = true;
    }
    room.notify_all();
  };
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  if (threads == 0) work();
  Progress progress(total);
  try {
    for (std::size_t b = 0; b < blocks; ++b) {
      Slot slot;
      {
        std::unique_lock lock(m);
        Slot& waiting = slots[b % kMaxBlocksAhead];
        ready.wait(lock, [&] { return waiting.done; });
        slot = std::move(waiting);
        waiting = Slot{};
        consumed = b + 1;
      }
      room.notify_all();
      if (slot.error) std::rethrow_exception(slot.error);
      progress.clear();
      sink(std::move(slot.rows));
      progress.update(std::min(total, (b + 1) * kBlock));
    }
  } catch (...) {
    halt();
    throw;
  }
}

/// Rows a sweep holds before it writes text, Markdown or JSON. A sweep of no
/// more is printed once it ends, exactly as one table or document (and one
/// that stops on an error writes nothing); a longer one is written as it is
/// computed, text and Markdown as tables of this many rows each. A held row
/// takes about 2 KB: a few MB, however long the sweep.
constexpr std::size_t kHeldRows = 1000;

/// CSV's header for `rows`: their data columns in the order they first appear.
std::vector<std::string> csv_header(const std::vector<Row>& rows) {
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

/// A sweep's rows on their way to stdout, in flat memory in every format
/// (docs/guide.md#sweeps-and-the-budget-gate): JSON Lines and CSV with a known header as each block
/// of rows is computed; JSON as one document written row by row once
/// kHeldRows rows are in; text and Markdown in tables of kHeldRows rows; CSV
/// whose header is known only at the end through a spool file.
class SweepWriter {
 public:
  SweepWriter(report::Format format, report::TextStyle text, report::Record inputs,
              std::ostream& out)
      : style(text), format_(format), inputs_(std::move(inputs)), out_(out) {}

  report::TextStyle style;  ///< text and Markdown (set before the first row)

  /// CSV under `columns`, the header first unless `header` is false.
  void stream_csv(std::vector<std::string> columns, bool header) {
    csv_.emplace(std::move(columns));
    csv_header_ = header;
  }
  /// CSV through a spool file in `directory`.
  void spool_csv(const std::string& directory) {
    try {
      spool_.emplace(directory);
    } catch (const report::SpoolError& e) {
      throw_spool_error(e);
    }
  }
  bool csv_undecided() const { return format_ == report::Format::csv && !csv_ && !spool_; }

  /// Throws std::invalid_argument (naming the column) for a CSV row with a
  /// column outside a streamed header.
  void add(report::Record record) {
    ++rows_;
    switch (format_) {
      case report::Format::jsonl:
        report::render_json_line(record, pending_);
        return;
      case report::Format::json:
        json().add(record, pending_);
        return;
      case report::Format::text:
      case report::Format::markdown:
        table().add(std::move(record), pending_);
        return;
      case report::Format::csv:
        if (spool_) {
          try {
            spool_->add(record);
          } catch (const report::SpoolError& e) {
            throw_spool_error(e);
          }
          return;
        }
        header();
        csv_->add(record, pending_);
        return;
    }
  }

  /// Writes what is ready (JSON: once kHeldRows rows are in, or `all`).
  void write(bool all = false) {
    if (format_ == report::Format::json && rows_ < kHeldRows && !all) return;
    if (pending_.view().empty()) return;
    write_out(out_, pending_.view());
    pending_.str("");
  }

  /// The end of the document: held rows and the notes (text, Markdown,
  /// JSON), the CSV header of a sweep with no rows, or the spool's CSV.
  void finish(const std::vector<std::string>& footnotes) {
    switch (format_) {
      case report::Format::json:
        json().finish(footnotes, pending_);
        break;
      case report::Format::text:
      case report::Format::markdown:
        table().finish(footnotes, pending_);
        break;
      case report::Format::csv:
        if (!csv_ && !spool_) stream_csv({}, true);  // no rows: the header of no columns
        if (csv_) header();
        break;
      case report::Format::jsonl:
        break;
    }
    write(/*all=*/true);
    if (!spool_) return;
    // Written straight from the spool: nothing reached stdout before every
    // row was computed.
    errno = 0;  // so that a failed write's reason is its own
    try {
      spool_->finish(out_);
    } catch (const report::SpoolError& e) {
      throw_spool_error(e);
    }
    if (out_) out_.flush();
    if (!out_) throw_write_error("standard output", errno);
  }

 private:
  report::TableWriter& table() {
    if (!table_) table_.emplace(format_, inputs_, style, kHeldRows);
    return *table_;
  }
  report::JsonWriter& json() {
    if (!json_) json_.emplace("sweep", inputs_);
    return *json_;
  }
  void header() {
    if (!csv_header_) return;
    csv_->header(pending_);
    csv_header_ = false;
  }
  [[noreturn]] static void throw_spool_error(const report::SpoolError& e) {
    throw_write_error(std::string(e.what()) +
                          " (CSV waits there for its header; set TMPDIR, or "
                          "use --format jsonl)",
                      e.reason);
  }

  report::Format format_;
  report::Record inputs_;
  std::ostream& out_;
  std::ostringstream pending_;
  std::size_t rows_ = 0;
  std::optional<report::TableWriter> table_;
  std::optional<report::JsonWriter> json_;
  std::optional<report::CsvWriter> csv_;
  bool csv_header_ = false;
  std::optional<report::CsvSpool> spool_;
};

int run_sweep(const SweepFlags& f, std::ostream& out, std::ostream& err) {
  Settings s;
  // Rows state epsilon (or solve for it) through answer(), which adds a
  // shuffled run's lower bound with pld: --sampling shuffle, or any --input
  // line, which may say so.
  s.choice =
      resolve(f.accountant,
              {true, !f.input.empty() || (f.run.sampling_given && f.run.sampling == "shuffle")});
  s.solve = resolve_solve_flags(f.tolerance, f.max_sigma);
  const report::Format format = resolve(f.output);
  const Unknown unknown = unknown_of(f.solve);
  if (!f.max_epsilon.empty())
    s.max_epsilon = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);
  if (unknown != Unknown::none && s.max_epsilon)
    throw UsageError("--max-epsilon: not with --solve (the solved rows meet their target)");
  const auto deltas =
      f.deltas.empty() ? std::vector<double>{} : parse_list("--delta", f.deltas, kOpenUnit);
  const auto epsilons = f.epsilons.empty() ? std::vector<double>{}
                                           : parse_list("--epsilon", f.epsilons, kNonNegative);

  const Shard shard = parse_shard(f.shard);
  JobSource source;
  bool bad_input = false;
  if (!f.input.empty()) {
    // The lines give the run; a run flag would be silently overridden.
    for (const auto& p : kRunParameters)
      if (given(f.run, p.id))
        throw UsageError(std::string(p.flag) +
                         ": not with --input (the lines give the run: put \"" + std::string(p.key) +
                         "\" on each line instead)");
    auto jobs = std::make_shared<std::vector<Job>>();
    bad_input = jobs_from_input(f, unknown, deltas, epsilons, *jobs, err);
    source.count = jobs->size();
    source.at = [jobs](std::size_t i) { return (*jobs)[i]; };
  } else {
    if (f.keep_going) throw UsageError("--keep-going: only with --input (it skips bad lines)");
    if (deltas.empty()) throw UsageError("--delta is required");
    if (unknown != Unknown::none && epsilons.empty())
      throw UsageError("--epsilon is required with --solve (the targets)");
    source = jobs_from_flags(f, unknown, deltas, epsilons);
    note_assumed_poisson(f.run, err);
  }
  flags_checked();

  report::Record inputs;
  add_inputs(inputs, s.choice);
  std::vector<std::string> footnotes;
  bool over = false, no_solution = false, no_upper_bound = false;
  std::size_t row_number = 0;
  FailureCount over_rows, unbounded_runs, unsolved_rows;
  std::size_t budget_messages = 0;  // budget lines, shown or not
  const std::size_t begin = source.count * (shard.k - 1) / shard.n;
  const std::size_t end = source.count * shard.k / shard.n;
  // --precision as emit() reads it (JSON Lines and CSV never read it).
  const bool styled = format != report::Format::jsonl && format != report::Format::csv;
  SweepWriter writer(format, styled ? text_style(f.output) : report::TextStyle{}, std::move(inputs),
                     out);
  writer.style.colour = colour_for(format, out);
  if (format == report::Format::csv) {
    if (shard.given) {
      // Every shard's header is the columns of the sweep's first
      // configuration's rows (shard 1 prints it), so that the shards'
      // outputs concatenate to the whole sweep's.
      writer.stream_csv(
          source.count > 0 ? csv_header(compute(source.at(0), s)) : std::vector<std::string>{},
          /*header=*/shard.k == 1);
    } else if (!f.input.empty() || unknown != Unknown::none || !source.same_run_columns) {
      // Lines that differ, a row with no solution (its `error` column), or
      // micro-batch accumulation on some rows only: a later row may have a
      // column no earlier row has.
      writer.spool_csv(temp_directory());
    }
  }
  compute_in_order(source, begin, end, s, [&](std::vector<Row> rows) {
    if (writer.csv_undecided()) {
      // A grid: every row has the columns of the first rows, unless the
      // first rows' answers left an accountant or a companion row out.
      const bool partial =
          std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.partial; });
      if (partial)
        writer.spool_csv(temp_directory());
      else
        writer.stream_csv(csv_header(rows), /*header=*/true);
    }
    const std::string of_shard = shard.given ? " of shard " + f.shard : std::string();
    for (auto& row : rows) {
      ++row_number;
      // A run's gate lines sit on its first row; their rows count from it.
      const std::size_t first_row = row_number;
      for (const auto& line : row.gate) {
        const bool shown = f.all_messages || budget_messages++ < kMaxBudgetMessages;
        if (line.row) {
          over_rows.add(first_row + *line.row);
          if (shown)
            err << "dpbudget: budget exceeded: row " << first_row + *line.row << of_shard << ", "
                << row.subject << " " << line.text << '\n';
        } else {
          unbounded_runs.add(row_number);
          if (shown)
            err << "dpbudget: no sound upper bound to gate on: row " << row_number << of_shard
                << ", " << row.subject << ": " << line.text << '\n';
        }
      }
      if (row.no_solution) unsolved_rows.add(row_number);
      over = over || row.status == kBudgetExceeded;
      no_upper_bound = no_upper_bound || row.status == kNoUpperBound;
      no_solution = no_solution || row.no_solution;
      for (const auto& note : row.notes)
        if (std::find(footnotes.begin(), footnotes.end(), "note: " + note) == footnotes.end())
          footnotes.push_back("note: " + note);
      for (const auto& why : row.warnings)
        if (std::find(footnotes.begin(), footnotes.end(), "warning: " + why) == footnotes.end()) {
          footnotes.push_back("warning: " + why);
          err << "dpbudget: warning: " << report::escape_control(why) << '\n';
        }
      try {
        writer.add(std::move(row.record));
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
    // A failed write ends the sweep here, not after its last row.
    writer.write();
  });
  writer.finish(footnotes);
  // One summary line per way rows failed, counting every row (the per-row
  // lines stop at kMaxBudgetMessages).
  const std::string rows_total = std::to_string(row_number);
  const std::string in_shard = shard.given ? " of shard " + f.shard : std::string();
  if (over_rows.count)
    err << "dpbudget: " << over_rows.count << " of " << rows_total << " rows" << in_shard
        << " over budget; first at row " << over_rows.first << '\n';
  if (unbounded_runs.count)
    err << "dpbudget: " << unbounded_runs.count << " run" << (unbounded_runs.count > 1 ? "s" : "")
        << " of " << rows_total << " rows" << in_shard
        << " with no sound upper bound to gate on; first at row " << unbounded_runs.first << '\n';
  if (unsolved_rows.count)
    err << "dpbudget: " << unsolved_rows.count << " of " << rows_total << " rows" << in_shard
        << " with no solution; first at row " << unsolved_rows.first << '\n';
  if (budget_messages > kMaxBudgetMessages && !f.all_messages)
    err << "dpbudget: the first " << kMaxBudgetMessages << " of " << budget_messages
        << " budget messages shown; --all-messages shows every one\n";
  // Precedence when lines fail differently (docs/errors.md#exit-status): bad
  // input, then a run that cannot be gated, then no solution, then over budget.
  if (bad_input) return kUsage;
  if (no_upper_bound) return kNoUpperBound;
  if (no_solution) return kNoSolution;
  return over ? kBudgetExceeded : kOk;
}

}  // namespace

Verb setup_sweep(CLI::App& app) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "one row per combination of parameter lists (a:b:step ranges), or per --input line\n"
      "  example: dpbudget sweep --sigma 0.5:2:0.1 --epochs 1,10,100 --dataset-size 60000 "
      "--batch-size 256 --delta 1e-5 --format csv");
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
          "inheriting the line's run keys); not with the run flags"));
  cmd->add_option("--shard", f->shard,
                  "K/N: compute only the K-th of N equal slices of the configurations (1 <= K <= "
                  "N); the N outputs in order concatenate to the whole sweep's (CSV: header from "
                  "shard 1)");
  cmd->add_flag("--keep-going", f->keep_going,
                "with --input: report malformed lines and compute the others (exit status 2)");
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

}  // namespace dpb::cli
