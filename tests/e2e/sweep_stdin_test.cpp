// `sweep --input - --format jsonl` answers each line as it is read (issue 46,
// item 7; docs/guide.md#asking-as-training-goes): a process kept open by a
// training loop is asked a line, answers it, and waits for the next. These
// tests hold such a conversation through two pipes, reading each answer
// before writing the next line, so that a reader that read ahead or an answer
// left in a buffer fails by a timeout instead of hanging.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run.hpp"
#include "run_json.hpp"

using dpb::test::json_lines;
using dpb::test::run_dpbudget;
using dpb::test::TempFile;

namespace {

/// How long an answer may take: one line's rows take milliseconds (rdp's
/// curve at one (q, sigma) is kept), so ten seconds is a process that waits
/// for more input than it was given, even in a sanitizer build.
constexpr std::chrono::milliseconds kAnswerTimeout{10'000};

/// A dpbudget process with a pipe to its standard input and one from its
/// standard output (standard error goes to a file), killed if still running
/// at the end of the test.
class Conversation {
 public:
  explicit Conversation(const std::vector<std::string>& args)
      : err_path_("/tmp/dpbudget_e2e_conversation_" + std::to_string(::getpid()) + ".err") {
    ::signal(SIGPIPE, SIG_IGN);  // a write to a process that ended fails, not kills
    int to[2], from[2];
    REQUIRE(::pipe(to) == 0);
    REQUIRE(::pipe(from) == 0);
    std::vector<std::string> argv_text{dpb::test::dpbudget_binary()};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (::dup2(to[0], 0) < 0 || ::dup2(from[1], 1) < 0 || err < 0 || ::dup2(err, 2) < 0)
        ::_exit(127);
      for (int fd : {to[0], to[1], from[0], from[1], err}) ::close(fd);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(to[0]);
    ::close(from[1]);
    to_child_ = to[1];
    from_child_ = from[0];
  }
  ~Conversation() {
    if (to_child_ >= 0) ::close(to_child_);
    if (from_child_ >= 0) ::close(from_child_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::remove(err_path_.c_str());
  }
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  /// Writes `line` and its newline; false when the process no longer reads.
  bool say(const std::string& line) {
    const std::string text = line + "\n";
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(to_child_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// The next line of standard output (without its newline); nullopt at the
  /// end of the output or after kAnswerTimeout.
  std::optional<std::string> answer() {
    const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
    for (;;) {
      if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{from_child_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return std::nullopt;
      char buf[4096];
      const ssize_t n = ::read(from_child_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      pending_.append(buf, static_cast<std::size_t>(n));
    }
  }

  /// Closes standard input and waits for the end of the output and of the
  /// process: its exit status (-1 after kAnswerTimeout), the rest of its
  /// output in `rest`, its standard error in `err`.
  int finish(std::string& rest, std::string& err) {
    ::close(to_child_);
    to_child_ = -1;
    while (const auto line = answer()) rest += *line + "\n";
    const auto deadline = std::chrono::steady_clock::now() + kAnswerTimeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      ::usleep(1000);
    }
    pid_ = -1;
    err = dpb::test::slurp(err_path_);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  std::string err_path_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string pending_;
};

/// Line t of the conversation: the run of the README's example (q 0.01,
/// sigma 1.1) after 10 t steps.
std::string run_after(int t) {
  return R"({"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": )" + std::to_string(10 * t) +
         "}";
}

/// The lines the conversations ask: 1,000 in one process.
constexpr int kLines = 1000;

}  // namespace

TEST_CASE("sweep --input - --format jsonl: 1,000 lines, each answered before the next is sent") {
  Conversation c(
      {"sweep", "--input", "-", "--format", "jsonl", "--accountant", "rdp", "--delta", "1e-5"});
  std::vector<std::string> answers;
  for (int t = 1; t <= kLines; ++t) {
    REQUIRE(c.say(run_after(t)));
    const auto a = c.answer();
    REQUIRE_MESSAGE(a.has_value(), "no answer to line ", t, " within the timeout");
    answers.push_back(*a);
  }
  std::string rest, err;
  CHECK(c.finish(rest, err) == 0);
  CHECK(rest.empty());
  CHECK(err.empty());
  // The same lines from a file, read whole before any row is computed: the
  // same rows, byte for byte.
  std::string all;
  for (int t = 1; t <= kLines; ++t) all += run_after(t) + "\n";
  const TempFile file("conversation.jsonl", all);
  const auto whole = run_dpbudget({"sweep", "--input", file.path, "--format", "jsonl",
                                   "--accountant", "rdp", "--delta", "1e-5"});
  REQUIRE(whole.status == 0);
  std::string streamed;
  for (const auto& a : answers) streamed += a + "\n";
  CHECK(streamed == whole.out);
  // And what `epsilon` says of the same run (a verb that reads no input).
  for (int t : {1, 500, kLines}) {
    const auto row = nlohmann::json::parse(answers[static_cast<std::size_t>(t - 1)]);
    CHECK(row.at("steps") == 10 * t);
    const auto single =
        run_dpbudget({"epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", std::to_string(10 * t),
                      "--delta", "1e-5", "--accountant", "rdp", "--format", "json"});
    REQUIRE(single.status == 0);
    const auto doc = nlohmann::json::parse(single.out);
    CHECK(row.at("epsilon") == doc.at("results").at(0).at("epsilon"));
  }
}

TEST_CASE("sweep --input - --format jsonl: a bad line ends the conversation, or is answered") {
  const std::string bad = R"({"sampling_rate": "0.01", "noise_multiplier": 1.1, "steps": 10})";
  {
    // Without --keep-going: the earlier line's answer, then the end of the
    // output (a reader waiting for an answer never hangs), exit status 2.
    Conversation c(
        {"sweep", "--input", "-", "--format", "jsonl", "--accountant", "rdp", "--delta", "1e-5"});
    REQUIRE(c.say(run_after(1)));
    REQUIRE(c.answer().has_value());
    REQUIRE(c.say(bad));
    CHECK_FALSE(c.answer().has_value());
    std::string rest, err;
    CHECK(c.finish(rest, err) == 2);
    CHECK(rest.empty());
    CHECK(err ==
          "dpbudget: error: --input: <stdin>:2: sampling_rate: must be a number in [0, 1], got a "
          "string \"0.01\"\n");
  }
  // With --keep-going: the bad line's answer names it and the error, and the
  // next line is answered as before.
  Conversation c({"sweep", "--input", "-", "--format", "jsonl", "--accountant", "rdp", "--delta",
                  "1e-5", "--keep-going"});
  REQUIRE(c.say(bad));
  const auto refused = c.answer();
  REQUIRE(refused.has_value());
  const auto row = nlohmann::json::parse(*refused);
  CHECK(row == nlohmann::json{{"line", 1},
                              {"error",
                               "--input: <stdin>:1: sampling_rate: must be a number in [0, 1], "
                               "got a string \"0.01\""}});
  REQUIRE(c.say(run_after(2)));
  const auto good = c.answer();
  REQUIRE(good.has_value());
  CHECK(nlohmann::json::parse(*good).at("steps") == 20);
  // A line that is not UTF-8: its answer is still JSON, the byte shown as
  // stderr shows it.
  const std::string not_utf8_line = "{\"name\": \"ab\xff\"}";
  const std::size_t column = not_utf8_line.find('\xff') + 1;  // the byte at fault
  REQUIRE(c.say(not_utf8_line));
  const auto not_utf8 = c.answer();
  REQUIRE(not_utf8.has_value());
  const auto answer = nlohmann::json::parse(*not_utf8);
  CHECK(answer.at("line") == 3);
  CHECK(answer.at("error").get<std::string>().find(
            "not valid JSON at column " + std::to_string(column) + ": ") != std::string::npos);
  CHECK(answer.at("error").get<std::string>().find("\\xff") != std::string::npos);
  std::string rest, err;
  CHECK(c.finish(rest, err) == 2);
  CHECK(err.find("<stdin>:1: sampling_rate") != std::string::npos);
}

TEST_CASE("sweep --input - --format jsonl: the gate names each line as it is answered") {
  // A budget of 1 at delta 1e-5: 10 steps fit (rdp: epsilon 0.83), 1,000 do
  // not (1.71).
  Conversation c({"sweep", "--input", "-", "--format", "jsonl", "--accountant", "rdp", "--delta",
                  "1e-5", "--max-epsilon", "1"});
  REQUIRE(c.say(run_after(1)));
  const auto fits = c.answer();
  REQUIRE(fits.has_value());
  CHECK(nlohmann::json::parse(*fits).at("over_budget") == false);
  REQUIRE(
      c.say(R"({"name": "long", "sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 1000})"));
  const auto over = c.answer();
  REQUIRE(over.has_value());
  CHECK(nlohmann::json::parse(*over).at("over_budget") == true);
  std::string rest, err;
  CHECK(c.finish(rest, err) == 1);
  CHECK(err.find("dpbudget: budget exceeded: <stdin>:2 'long', row 2 (rdp, delta 1e-05): ") == 0);
  CHECK(err.find("dpbudget: 1 of 2 rows over budget; first at row 2 (<stdin>:2 'long')\n") !=
        std::string::npos);
}

TEST_CASE("sweep --input - --format jsonl: an empty standard input is still no configuration") {
  const auto r = run_dpbudget({"sweep", "--input", "-", "--format", "jsonl", "--delta", "1e-5"});
  CHECK(r.status == 6);  // README "Exit status"
  CHECK(r.out.empty());
  CHECK(r.err ==
        "dpbudget: error: --input: standard input holds no configuration (it is empty or has "
        "only blank lines)\n");
}
