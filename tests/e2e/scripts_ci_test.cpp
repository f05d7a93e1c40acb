// In scripts and CI (issue 26): every failed write, empty input and failure
// has its own exit status and one line on stderr, through the built binary.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "run.hpp"

using dpb::test::dpbudget_binary;
using dpb::test::kWriteFailed;
using dpb::test::run_dpbudget;
using dpb::test::run_shell;
using dpb::test::shell_quote;

namespace {

/// README "Exit status": no configuration in sweep --input (written out, not
/// taken from src/cli/errors.hpp, so that a renumbering breaks this test).
constexpr int kNoConfigurations = 6;

/// dpbudget with `args` (already shell-quoted words) and stdout on /dev/full;
/// the result's `out` is what it wrote on stderr.
dpb::test::Run run_to_dev_full(const std::string& args) {
  return run_shell("{ " + shell_quote(dpbudget_binary()) + " " + args +
                   " </dev/null 2>&1 >/dev/full; }");
}

/// One error line on stderr, its last, that says the output could not be
/// written (a verb's notes may come before it).
void check_write_failed(const dpb::test::Run& r, const std::string& where) {
  INFO("stderr: ", r.out);
  CHECK(r.status == kWriteFailed);
  const std::string line = "dpbudget: error: could not write output to " + where + "\n";
  CHECK(r.out.size() >= line.size());
  CHECK(r.out.find("dpbudget: error") == r.out.find(line));
  CHECK(r.out.find(line) + line.size() == r.out.size());
}

std::string temp_file(const std::string& tag, const std::string& text) {
  const std::string path =
      "/tmp/dpbudget_e2e_ci_" + std::to_string(::getpid()) + "_" + tag + ".jsonl";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("a failed write to stdout exits 5 with one line, in every format and verb") {
  const std::string run = "-q 0.01 --sigma 1.1 --steps 1000 --delta 1e-5";
  for (const std::string& args : std::vector<std::string>{
           "epsilon " + run,
           "epsilon " + run + " --format json",
           "epsilon " + run + " --format csv",
           "sweep -q 0.01 --sigma 1,2 --steps 10,100 --delta 1e-5 --format jsonl",
           "sweep -q 0.01 --sigma 1,2 --steps 10,100 --delta 1e-5 --format csv",
           "sweep -q 0.01 --sigma 1,2 --steps 10,100 --delta 1e-5 --format json",
           "sweep -q 0.01 --sigma 1,2 --steps 10,100 --delta 1e-5",
           "report --dataset-size 60000 --batch-size 600 --sigma 1.1 --epochs 2 --delta 1e-5",
           "plot -q 0.01 --sigma 1 --steps 1:100 --delta 1e-5 --points 5 -o -",
           "epsilon " + run + " --print-spec",
           "completions bash",
           "--help",
           "epsilon --help",
           "--version",
       }) {
    INFO("dpbudget ", args);
    check_write_failed(run_to_dev_full(args), "standard output: No space left on device");
  }
}

TEST_CASE("a failed write to an -o file exits 5 naming the file") {
  check_write_failed(
      run_to_dev_full("report --dataset-size 60000 --batch-size 600 --sigma 1.1 --epochs 2 "
                      "--delta 1e-5 -o /dev/full"),
      "-o '/dev/full': No space left on device");
  check_write_failed(
      run_to_dev_full("plot -q 0.01 --sigma 1 --steps 1:100 --delta 1e-5 --points 5 -o /dev/full"),
      "-o '/dev/full': No space left on device");
  // A file that cannot be opened is a bad -o (status 2), with the reason.
  const auto bad =
      run_dpbudget({"plot", "-q", "0.01", "--sigma", "1", "--steps", "1:100", "--delta", "1e-5",
                    "--points", "5", "-o", "/nonexistent-dir/p.svg"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err ==
        "dpbudget: error: -o: cannot open '/nonexistent-dir/p.svg' for writing: No such file or "
        "directory\n");
}

TEST_CASE("a streamed sweep stops at its first failed write, and | head still ends it") {
  // 10^6 rows take tens of seconds to compute; both runs must end long before,
  // in every format (each writes its rows as they are computed).
  constexpr double kPromptSeconds = 10;
  const std::string big = "sweep --sigma 0.5:10.49:0.01 --steps 1:1000 -q 0.01 --delta 1e-5";
  for (const std::string format : {"jsonl", "csv", "json", "text", "markdown"}) {
    INFO(format);
    const auto t0 = std::chrono::steady_clock::now();
    check_write_failed(run_to_dev_full(big + " --format " + format),
                       "standard output: No space left on device");
    const auto t1 = std::chrono::steady_clock::now();
    CHECK(std::chrono::duration<double>(t1 - t0).count() < kPromptSeconds);
    // SIGPIPE at its default: the sweep ends when head has its lines.
    const auto head = run_shell(shell_quote(dpbudget_binary()) + " " + big + " --format " + format +
                                " 2>/dev/null | head -2");
    const auto t2 = std::chrono::steady_clock::now();
    CHECK(head.status == 0);
    CHECK(std::count(head.out.begin(), head.out.end(), '\n') == 2);
    if (format == "jsonl") CHECK(head.out.rfind("{\"", 0) == 0);
    if (format == "csv") CHECK(head.out.rfind("sampling_rate,noise_multiplier,steps,", 0) == 0);
    CHECK(std::chrono::duration<double>(t2 - t1).count() < kPromptSeconds);
  }
}

TEST_CASE("an --input with no configuration exits 6 with one line") {
  const std::string empty = temp_file("empty", "");
  const std::string blank = temp_file("blank", "\n  \n\t\r\n\n");
  for (const auto& path : {empty, blank}) {
    for (const char* format : {"text", "json", "jsonl", "csv"}) {
      const auto r = run_dpbudget({"sweep", "--input", path, "--format", format});
      INFO(path, " ", format, " stderr: ", r.err);
      CHECK(r.status == kNoConfigurations);
      CHECK(r.out.empty());
      CHECK(r.err == "dpbudget: error: --input: '" + path +
                         "' holds no configuration (it is empty or has only blank lines)\n");
    }
  }
  // Standard input with nothing on it (run_dpbudget gives </dev/null).
  const auto r = run_dpbudget({"sweep", "--input", "-", "--max-epsilon", "8"});
  CHECK(r.status == kNoConfigurations);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "dpbudget: error: --input: standard input holds no configuration (it is empty or has "
        "only blank lines)\n");
  std::remove(empty.c_str());
  std::remove(blank.c_str());
}

TEST_CASE("a directory given as a file is named, not an internal error") {
  const auto sweep = run_dpbudget({"sweep", "--input", "/tmp"});
  CHECK(sweep.status == 2);
  CHECK(sweep.out.empty());
  CHECK(sweep.err == "dpbudget: error: --input: '/tmp' is a directory (give a JSON Lines file)\n");
  const auto audit = run_dpbudget({"audit", "--scores", "/tmp"});
  CHECK(audit.status == 2);
  CHECK(audit.out.empty());
  CHECK(audit.err ==
        "dpbudget: error: --scores: '/tmp' is a directory (give a file of score,label lines)\n");
}

TEST_CASE("a sweep's budget messages stop at 20 and a summary counts every failing row") {
  // sigma 0.5, 0.55, ..., 3: 51 runs. With a budget of 0 every row is over:
  // a sampled Gaussian's epsilon at delta 1e-5 is 0 only if delta is at least
  // its total variation, about q (2 Phi(1 / (2 sigma)) - 1) >= 1.3e-3 here.
  const std::vector<std::string> args{
      "sweep",   "-q",           "0.01",    "--sigma",  "0.5:3:0.05",
      "--steps", "100",          "--delta", "1e-5",     "--max-epsilon",
      "0",       "--accountant", "rdp",     "--format", "jsonl"};
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const auto bounded = run_dpbudget(args);
  CHECK(bounded.status == 1);
  CHECK(count(bounded.out, "\n") == 51);
  CHECK(count(bounded.out, "\"over_budget\":true") == 51);
  CHECK(count(bounded.err, "dpbudget: budget exceeded: row ") == 20);
  CHECK(bounded.err.find("dpbudget: budget exceeded: row 20, ") != std::string::npos);
  CHECK(bounded.err.find("dpbudget: budget exceeded: row 21, ") == std::string::npos);
  CHECK(bounded.err.find("dpbudget: 51 of 51 rows over budget; first at row 1\n") !=
        std::string::npos);
  CHECK(bounded.err.find("dpbudget: the first 20 of 51 budget messages shown; --all-messages "
                         "shows every one\n") != std::string::npos);
  auto every = args;
  every.push_back("--all-messages");
  const auto all = run_dpbudget(every);
  CHECK(all.status == 1);
  CHECK(count(all.err, "dpbudget: budget exceeded: row ") == 51);
  CHECK(all.err.find("dpbudget: budget exceeded: row 51, ") != std::string::npos);
  CHECK(all.err.find("dpbudget: 51 of 51 rows over budget; first at row 1\n") != std::string::npos);
  CHECK(all.err.find("--all-messages shows") == std::string::npos);
}

TEST_CASE("a sweep with over-budget and unsolvable lines exits 3 and summarises both") {
  // Line 1: a budget of 0 (over, as above); line 2: epsilon 1e-6 at delta
  // 1e-5 over 1000 steps needs sigma near 10^4, past --max-sigma's 1000
  // (total variation about sqrt(T) q / (sigma sqrt(2 pi)) must reach delta);
  // line 3 within its budget.
  const std::string input =
      R"({"name": "a", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000, "delta": 1e-5, "epsilon": 0})"
      "\n"
      R"({"name": "b", "sampling_rate": 0.01, "steps": 1000, "delta": 1e-5, "epsilon": 1e-6, "solve": "noise_multiplier"})"
      "\n"
      R"({"name": "c", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000, "delta": 1e-5, "epsilon": 1000})"
      "\n";
  const auto r =
      run_dpbudget({"sweep", "--input", "-", "--accountant", "rdp", "--format", "jsonl"}, input);
  CHECK(r.status == 3);  // docs/errors.md#exit-status: 2 > 4 > 3 > 1
  CHECK(r.err.find("dpbudget: budget exceeded: <stdin>:1 'a', row 1 ") != std::string::npos);
  CHECK(r.err.find("dpbudget: 1 of 3 rows over budget; first at row 1 (<stdin>:1 'a')\n") !=
        std::string::npos);
  CHECK(r.err.find("dpbudget: 1 of 3 rows with no solution; first at row 2 (<stdin>:2 'b')\n") !=
        std::string::npos);
  CHECK(r.err.find("messages shown") == std::string::npos);
}

TEST_CASE("messages name the flag as typed and a stray word as such") {
  const auto check = [](const std::vector<std::string>& args, const std::string& message) {
    const auto r = run_dpbudget(args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "dpbudget: error: " + message + "\n");
  };
  // -q and --sigma as typed first, then the flag's long name.
  check({"epsilon", "-q", "2", "--sigma", "1", "--steps", "100", "--delta", "1e-5"},
        "-q (--sampling-rate): must be a number in [0, 1], got '2'");
  check({"epsilon", "-q", "0.01", "--sigma=-1", "--steps", "100", "--delta", "1e-5"},
        "--sigma (--noise-multiplier): must be a finite number > 0, got '-1'");
  // The long name when it was typed.
  check({"epsilon", "--sampling-rate", "2", "--sigma", "1", "--steps", "100", "--delta", "1e-5"},
        "--sampling-rate: must be a number in [0, 1], got '2'");
  // A word after the flags is an unexpected argument, named with the flag it
  // follows as typed, whether the flag takes lists (read as a second value)
  // or one value (left over by the parser); not a bad value of the flag.
  const std::string no_positional =
      " (dpbudget takes no positional words; give a flag several values as a comma list)";
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5",
         "extra_positional"},
        "unexpected argument 'extra_positional' after --delta" + no_positional);
  check({"epsilon", "-q", "0.01", "extra_positional", "--sigma", "1", "--steps", "100", "--delta",
         "1e-5"},
        "unexpected argument 'extra_positional' after -q" + no_positional);
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta=1e-5", "extra"},
        "unexpected argument 'extra' after --delta" + no_positional);
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5", "--format",
         "json", "extra"},
        "unexpected argument 'extra' after --format" + no_positional);
  check({"compose", "--epsilon", "1", "--delta", "0", "--count", "10", "--target-delta", "1e-5",
         "extra"},
        "unexpected argument 'extra' after --target-delta" + no_positional);
  // A bad first value is only that, and a flag repeated takes its value.
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "extra"},
        "--delta: must be a number in (0, 1), got 'extra'");
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5", "--delta",
         "extra"},
        "--delta: must be a number in (0, 1), got 'extra'");
}

TEST_CASE("a number typed with a comma or a look-alike character says what it holds") {
  const auto check = [](const std::vector<std::string>& args, const std::string& message) {
    const auto r = dpb::test::run_dpbudget_args(args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "dpbudget: error: " + message + "\n");
  };
  const std::vector<std::string> run{"epsilon", "--steps", "100", "--delta", "1e-5"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = run;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  // A decimal comma: the flag takes one value, and the comma is named.
  check(with({"-q", "0,01", "--sigma", "1"}),
        "-q (--sampling-rate): takes one value here, got '0,01' (a decimal comma? write '0.01')");
  check(with({"-q", "0.01", "--sigma", "1,1"}),
        "--sigma (--noise-multiplier): takes one value here, got '1,1' (a decimal comma? write "
        "'1.1')");
  // A whole number: only a thousands separator fits.
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "1,000", "--delta", "1e-5"},
        "--steps: takes one value here, got '1,000' (a thousands separator? write '1000')");
  // A list flag: the part that fails is named, and what the whole may be.
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "0,00001"},
        "--delta: must be a number in (0, 1), got '0' in '0,00001' (a decimal comma? write "
        "'0.00001')");
  // U+2212 MINUS SIGN, U+00D7 MULTIPLICATION SIGN and a no-break space, as
  // pasted from a paper: each value and what its message adds.
  const std::pair<const char*, const char*> look_alikes[] = {
      {"1e\u22125", "it holds U+2212 MINUS SIGN: type '-'"},
      {"1\u00d710^-5", "it holds U+00D7 MULTIPLICATION SIGN: type e, as in 1e-5"},
      {"1e-5\u00a0", "it holds U+00A0 NO-BREAK SPACE: remove it"}};
  for (const auto& [value, hint] : look_alikes)
    check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100", "--delta", value},
          "--delta: must be a number in (0, 1), got '" + std::string(value) + "' (" + hint + ")");
  // A list where a list is allowed is still a list.
  const std::vector<std::string> list{"sweep", "-q",      "0,01", "--sigma",  "1",  "--steps",
                                      "10",    "--delta", "1e-5", "--format", "csv"};
  const auto sweep = dpb::test::run_dpbudget_args(list);
  CHECK(sweep.status == 0);
  CHECK(sweep.out.find("\n0,1,10,") != std::string::npos);
  CHECK(sweep.out.find("\n1,1,10,") != std::string::npos);
}

TEST_CASE("a count past 2^53 names the limit, never a silent rounding") {
  const auto check = [](const std::vector<std::string>& args, const std::string& message,
                        const std::string& input = "") {
    const auto r = dpb::test::run_dpbudget_args(args, input);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "dpbudget: error: " + message + "\n");
  };
  const std::string limit = "must be at most 2^53 = 9007199254740992, got ";
  for (const char* steps : {"1e20", "1e400", "9007199254740993"})
    check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", steps, "--delta", "1e-5"},
          "--steps: " + limit + "'" + steps + "'");
  // -T as typed, in a list and a range.
  check({"sweep", "-q", "0.01", "--sigma", "1", "-T", "10,1e20", "--delta", "1e-5"},
        "-T (--steps): " + limit + "'1e20'");
  check({"sweep", "-q", "0.01", "--sigma", "1", "--steps", "1:1e30:1e29", "--delta", "1e-5"},
        "--steps: " + limit + "'1:1e30:1e29'");
  check({"gdp", "--mu", "1", "--delta", "1e-5", "--group", "1e20"}, "--group: " + limit + "'1e20'");
  check({"audit", "--tp", "1e300", "--fn", "1", "--fp", "1", "--tn", "1"},
        "--tp: " + limit + "'1e300'");
  // 2^53 itself is a count; below 1 and fractions are still that.
  check({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "0.5", "--delta", "1e-5"},
        "--steps: must be an integer >= 1, got '0.5'");
  // A JSON Lines integer is read exactly: 2^53 + 1 is past the limit.
  // The message says what was given: the literal, or the double 1e20 as
  // JSON writes it.
  for (const auto& [steps, given] :
       {std::pair<std::string, std::string>{"9007199254740993", "9007199254740993"},
        {"1e20", "1e+20"}})
    check({"sweep", "--input", "-"}, "--input: <stdin>:1: steps: " + limit + "the number " + given,
          std::string(R"({"sampling_rate": 0.01, "noise_multiplier": 1, "steps": )") + steps +
              R"(, "delta": 1e-5})" + "\n");
}

TEST_CASE("huge or tiny legal inputs give the true answer, inf when it is past every double") {
  const auto epsilon_of = [](const std::vector<std::string>& args) {
    auto json_args = args;
    json_args.insert(json_args.end(), {"--format", "json"});
    const auto r = dpb::test::run_dpbudget_args(json_args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.find("error") == std::string::npos);
    return nlohmann::json::parse(r.out)["results"];
  };
  // sigma 1e-300: each step's Gaussian has mu = 1/sigma = 1e300, whose
  // epsilon at delta < 1/2 exceeds mu^2/2 = 5e599 (delta(mu^2/2) is about
  // 1/2: Dong, Roth & Su 2022, Cor. 2.13); amplified by q, it stays above
  // mu^2/2 + log q: past every double, so inf is the only upper bound.
  for (const char* accountant : {"composition", "rdp", "gdp"}) {
    INFO(accountant);
    const auto rows = epsilon_of({"epsilon", "-q", "0.01", "--sigma", "1e-300", "--steps", "100",
                                  "--delta", "1e-5", "--accountant", accountant});
    CHECK(rows[0]["epsilon"] == "inf");
  }
  // k = 10 steps of epsilon 1e308 (pure): p = 1/(1 + e^eps) underflows, so
  // with probability (1 - p)^k ~ 1 the loss is k eps and delta(eps') >=
  // 1 - e^(eps' - k eps): delta 1e-5 needs eps' >= k eps - 1e-5 ~ 1e309,
  // past every double. Basic, advanced and optimal all say inf.
  {
    const auto r = dpb::test::run_dpbudget_args(
        std::vector<std::string>{"compose", "--epsilon", "1e308", "--delta", "0", "--count", "10",
                                 "--target-delta", "1e-5", "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto rows = nlohmann::json::parse(r.out)["results"];
    REQUIRE(rows.size() == 3);
    for (const auto& row : rows) CHECK(row["epsilon"] == "inf");
  }
  // mu 1e300: epsilon > mu^2/2 (as above), past every double. mu 1e150: the
  // root lies in [mu^2/2, mu^2/2 - mu Phi^-1(delta)] (delta(eps) <=
  // Phi(-eps/mu + mu/2) <= delta from the right end on), Phi^-1(1e-5) =
  // -4.264890793922825 (50 digits: scipy.special.ndtri).
  {
    const auto huge = epsilon_of({"gdp", "--mu", "1e300", "--delta", "1e-5"});
    CHECK(huge[0]["epsilon"] == "inf");
    const auto large = epsilon_of({"gdp", "--mu", "1e150", "--delta", "1e-5"});
    const double mu = 1e150, eps = large[0]["epsilon"].get<double>();
    CHECK(eps >= mu * mu / 2);
    CHECK(eps <= (mu * mu / 2 + 4.264890793922825 * mu) * (1 + 1e-12));
  }
  // A noise multiplier of the smallest double: the per-record one (sigma / k
  // for a user of k records, sigma / 2 under replace-one) underflows, and the
  // answer is the sigma -> 0 limit, inf (1/sigma^2 overflows long before).
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"epsilon", "-q", "0.01", "--sigma", "5e-324", "--steps", "1000", "--delta", "1e-5",
            "--records-per-user", "3", "--accountant", "rdp,composition,pld"},
           {"epsilon", "--dataset-size", "60000", "--batch-size", "600", "--sigma", "5e-324",
            "--epochs", "2", "--delta", "1e-5", "--sampling", "without-replacement", "--accountant",
            "rdp,composition"}}) {
    for (const auto& row : epsilon_of(args)) CHECK(row["epsilon"] == "inf");
  }
  // With nothing sampled the limit is 0, not inf.
  const auto none = epsilon_of({"epsilon", "-q", "0", "--sigma", "5e-324", "--steps", "1000",
                                "--delta", "1e-5", "--records-per-user", "3"});
  CHECK(none[0]["epsilon"].get<double>() == 0.0);
  // A tiny per-step epsilon: k eps is subnormal; every method's bound is at
  // most basic composition's k eps (rounded up by at most a few subnormal
  // steps) and at least 0.
  {
    const auto r = dpb::test::run_dpbudget_args(
        std::vector<std::string>{"compose", "--epsilon", "5e-324", "--delta", "1e-8", "--count",
                                 "100", "--target-delta", "1e-5", "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);  // kept alive through the loop
    for (const auto& row : j["results"]) {
      CHECK(row["epsilon"].get<double>() >= 0);
      CHECK(row["epsilon"].get<double>() <= 100 * 4.9406564584124654e-324 + 1e-321);
    }
  }
}

TEST_CASE("an accountant's limit or a derived value names the accountant, not an internal field") {
  // Optimal composition evaluates at most 1e9 steps: named alone it is the
  // error (naming the accountant and the theorem, not "count"); beside
  // another accountant it is skipped with the same reason.
  const std::string why =
      "composition: optimal composition evaluates at most 1000000000 steps, this event has "
      "2000000000 (advanced and basic composition, rdp and pld have no such limit)";
  const auto alone = run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "2e9",
                                   "--delta", "1e-5", "--accountant", "composition"});
  CHECK(alone.status == 2);
  CHECK(alone.out.empty());
  CHECK(alone.err == "dpbudget: error: " + why + "\n");
  const auto beside =
      run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "2e9", "--delta", "1e-5",
                    "--accountant", "rdp,composition", "--format", "json"});
  CHECK(beside.status == 0);
  CHECK(beside.err.find("dpbudget: warning: skipped " + why + "\n") != std::string::npos);
  CHECK(nlohmann::json::parse(beside.out)["results"].size() == 1);
  // Advanced composition has no such limit.
  const auto advanced =
      run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "2e9", "--delta", "1e-5",
                    "--accountant", "composition", "--composition", "advanced"});
  CHECK(advanced.status == 0);
  // A false-positive rate of the smallest double: the risk curve's grid
  // starts there (no internal "fpr" message, no crash), and the audit's one-run
  // bound at a confidence of the smallest double is at least the one at 1/2
  // (a lower confidence never lowers a lower bound).
  const auto risk = run_dpbudget(
      {"risk", "-q", "0.01", "--sigma", "1", "--steps", "100", "--fpr", "5e-324", "-o", "-"});
  CHECK(risk.status == 0);
  CHECK(risk.out.find("<svg") != std::string::npos);
  CHECK(risk.out.find("</svg>") != std::string::npos);
  // Its log axis labels each power of ten as itself (1e-297 was shown as "0").
  CHECK(risk.out.find(">1e-297</text>") != std::string::npos);
  const auto report =
      run_dpbudget({"report", "--dataset-size", "60000", "--batch-size", "600", "--sigma", "1.1",
                    "--epochs", "2", "--delta", "1e-5", "--fpr", "5e-324"});
  CHECK(report.status == 0);
  const auto one_run = [](const std::string& confidence) {
    const auto r = run_dpbudget({"audit", "--canaries", "1000", "--guesses", "100", "--correct",
                                 "90", "--confidence", confidence, "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out)["results"][0]["epsilon_lower"].get<double>();
  };
  CHECK(one_run("5e-324") >= one_run("0.5"));
}

// Every verb and setting, in-process: tests/cli/accountant_flags_test.cpp.
TEST_CASE("an accountant setting no chosen accountant reads is refused, through the binary") {
  const auto refused =
      run_dpbudget({"sweep", "-q", "0.01", "--sigma", "1,2", "--steps", "100", "--delta", "1e-5",
                    "--pld-tolerance", "0.01", "--accountant", "rdp"});
  INFO(refused.err);
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err ==
        "dpbudget: error: --pld-tolerance: only the pld accountant reads it, not among those "
        "chosen (rdp); add pld to --accountant, or leave --pld-tolerance out\n");
  // Without --accountant the default rdp is named as such; --accountant all
  // reads every setting.
  const auto by_default = run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1", "--steps", "100",
                                        "--delta", "1e-5", "--composition", "basic"});
  CHECK(by_default.status == 2);
  CHECK(by_default.err ==
        "dpbudget: error: --composition: only the composition accountant reads it, not among "
        "those chosen (rdp, the default); add composition to --accountant, or leave "
        "--composition out\n");
  const auto all = run_dpbudget({"epsilon", "-q",
                                 "0.01",    "--sigma",
                                 "1",       "--steps",
                                 "100",     "--delta",
                                 "1e-5",    "--accountant",
                                 "all",     "--conversion",
                                 "classic", "--orders",
                                 "2:64",    "--composition",
                                 "basic",   "--pld-tolerance",
                                 "0.01",    "--pld-interval",
                                 "0.01"});
  CHECK(all.status == 0);
  // risk (and a TPR target) bound attacks from rdp's Renyi curve itself: its
  // conversion to (epsilon, delta) is not read there.
  const std::string rdp_curve =
      "--conversion: rdp reads it only to state epsilon or delta; attack bounds come from the "
      "Renyi curve itself (leave --conversion out)";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"risk", "-q", "0.01", "--sigma", "1", "--steps", "100", "--conversion", "classic"},
           {"sigma", "-q", "0.01", "--steps", "100", "--max-tpr", "0.1", "--at-fpr", "0.01",
            "--conversion", "classic"}}) {
    const auto r = dpb::test::run_dpbudget_args(args);
    INFO(args[0], ": ", r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.substr(r.err.find("dpbudget: error: ")) == "dpbudget: error: " + rdp_curve + "\n");
  }
  // A shuffled run's lower bound is computed with pld: its settings are read
  // there whatever the accountants chosen.
  const auto shuffled = run_dpbudget({"epsilon", "--dataset-size", "1000", "--batch-size", "10",
                                      "--sigma", "1", "--epochs", "1", "--sampling", "shuffle",
                                      "--delta", "1e-5", "--pld-tolerance", "0.05"});
  CHECK(shuffled.status == 0);
  // audit without a claimed run uses no accountant: an accountant flag there
  // is refused.
  const auto audit = run_dpbudget(
      {"audit", "--tp", "6", "--fn", "4", "--fp", "1", "--tn", "9", "--accountant", "pld"});
  CHECK(audit.status == 2);
  CHECK(audit.out.empty());
  CHECK(audit.err ==
        "dpbudget: error: --accountant: only with the claimed run it compares with (the run "
        "flags, --spec or --schedule)\n");
}

TEST_CASE("control characters in echoed input are escaped in text output and messages") {
  // An xterm title sequence as a scores line: the message names it escaped.
  const auto audit = run_dpbudget({"audit", "--scores", "-"}, "\033]0;pwned\007,1\n");
  CHECK(audit.status == 2);
  CHECK(audit.err.find('\033') == std::string::npos);
  CHECK(audit.err.find('\007') == std::string::npos);
  CHECK(audit.err.find("\\x1b]0;pwned\\x07") != std::string::npos);
  CHECK(audit.err.find('\n') == audit.err.size() - 1);  // one line
  // A JSON Lines name with ESC [31m (red), a C1 CSI (U+009B) and UTF-8 text,
  // over budget so that stderr names it too.
  const std::string line =
      R"({"name": "a\u001b[31mb\u009bc caf\u00e9", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000, "delta": 1e-5, "epsilon": 0})"
      "\n";
  const std::string shown = "a\\x1b[31mb\\u009bc caf\xc3\xa9";
  for (const char* format : {"text", "markdown"}) {
    const auto r =
        run_dpbudget({"sweep", "--input", "-", "--accountant", "rdp", "--format", format}, line);
    INFO(format, " out: ", r.out, " err: ", r.err);
    CHECK(r.status == 1);
    CHECK(r.out.find('\033') == std::string::npos);
    CHECK(r.out.find("\xc2\x9b") == std::string::npos);
    // Markdown escapes the backslash and the bracket once more.
    CHECK(r.out.find(std::string(format) == "text"
                         ? shown
                         : "a\\\\x1b\\[31mb\\\\u009bc caf\xc3\xa9") != std::string::npos);
    CHECK(r.err.find('\033') == std::string::npos);
    CHECK(r.err.find("budget exceeded: <stdin>:1 '" + shown + "', row 1 ") != std::string::npos);
  }
  // JSON keeps the name exact, escaped as JSON.
  const auto json =
      run_dpbudget({"sweep", "--input", "-", "--accountant", "rdp", "--format", "jsonl"}, line);
  CHECK(json.out.find('\033') == std::string::npos);
  CHECK(json.out.find(R"("name":"a\u001b[31mb)") != std::string::npos);
}

TEST_CASE("tradeoff at large epsilon is exact at the edges and never above the closed form") {
  // f(x) = max(0, 1 - delta - e^eps x, e^-eps (1 - delta - x)) (Dong, Roth &
  // Su 2022): f(0) = 1 - delta, f(1) = 0, and for e^eps x >= 1 - delta the
  // last term, e^-eps (1 - delta - x), here computed in long double.
  struct Case {
    const char* epsilon;
    const char* delta;
    long double eps, del;
  };
  for (const Case& c : {Case{"710", "0", 710.0L, 0.0L}, Case{"1000", "0", 1000.0L, 0.0L},
                        Case{"710", "0.1", 710.0L, 0.1L}}) {
    const auto r = run_dpbudget({"tradeoff", "--epsilon", c.epsilon, "--delta", c.delta, "--points",
                                 "3", "--format", "json"});
    INFO(std::string(c.epsilon), " ", std::string(c.delta), " ", r.err);
    REQUIRE(r.status == 0);
    const auto points = nlohmann::json::parse(r.out)["results"][0]["points"];
    REQUIRE(points.size() == 3);
    CHECK(points[0][0].get<double>() == 0.0);
    CHECK(points[0][1].get<double>() == static_cast<double>(1 - c.del));
    CHECK(points[2][0].get<double>() == 1.0);
    CHECK(points[2][1].get<double>() == 0.0);
    // x = 1/2: e^-eps (1/2 - delta) (below the smallest double for 1000,
    // where 0 is the downward rounding a lower bound needs).
    const double half = points[1][1].get<double>();
    const long double expected = std::exp(-c.eps) * (0.5L - c.del);
    CHECK(half <= static_cast<double>(expected) * (1 + 1e-12));
    CHECK(half >= static_cast<double>(expected) * (1 - 1e-12) - 5e-324);
  }
}

TEST_CASE("JSON Lines keys: did you mean, a key given twice, null") {
  const std::string rest = R"("sampling_rate": 0.01, "steps": 100, "delta": 1e-5)";
  const auto refused = [](const std::string& line, const std::string& message) {
    const auto r = run_dpbudget({"sweep", "--input", "-"}, line + "\n");
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("dpbudget: error: --input: <stdin>:1: " + message, 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  };
  refused(R"({"noise_mutliplier": 1.1, )" + rest + "}",
          "noise_mutliplier: unknown key; did you mean noise_multiplier? (allowed: name, ");
  refused(R"({"noise_multiplier": 1.1, "noise_multiplier": 2, )" + rest + "}",
          "noise_multiplier: given twice on the line (give each key once)\n");
  refused(R"({"name": null, "noise_multiplier": 1.1, )" + rest + "}",
          "name: null is not a value (give one, or leave the key out)\n");
  refused(R"({"noise_multiplier": null, )" + rest + "}",
          "noise_multiplier: null is not a value (give one, or leave the key out)\n");
  // A key given twice inside a spec is refused as well.
  refused(
      R"({"spec": {"gaussian": {"noise_multiplier": 1, "noise_multiplier": 2}}, "delta": 1e-5})",
      "noise_multiplier: given twice on the line (give each key once)\n");
}

TEST_CASE("sweep carries the warnings epsilon prints (best order at the edge of --orders)") {
  // At q 0.01, sigma 1, 10 steps the best order is far above 3: with orders
  // 2,3 it is the largest tried, which epsilon warns about.
  const std::vector<std::string> run = {"-q", "0.01",     "--sigma", "1",       "--steps",
                                        "10", "--orders", "2,3",     "--delta", "1e-5"};
  std::vector<std::string> eps = {"epsilon"}, sweep = {"sweep", "--format", "jsonl"};
  eps.insert(eps.end(), run.begin(), run.end());
  sweep.insert(sweep.end(), run.begin(), run.end());
  const auto e = run_dpbudget(eps);
  const auto s = run_dpbudget(sweep);
  REQUIRE(e.status == 0);
  REQUIRE(s.status == 0);
  const std::string w =
      "warning: best Renyi order 3 is at the edge of the order set; widen --orders";
  CHECK(e.err.find(w) != std::string::npos);
  CHECK(s.err.find(w) != std::string::npos);
}
