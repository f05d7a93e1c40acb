// Moving a ledger between SQLite and PostgreSQL through the binary (issue 47,
// item 4; docs/ledger.md#moving-a-ledger-between-stores), against a throwaway
// cluster (tests/support/pg_cluster.hpp; exit 77, CTest: skipped, without
// the server): a file exported and imported into the server, exported from
// there and imported into a new file, keyed and not. All three print the
// same history, status, `verify --head` and export, byte for byte but for
// the ledger's name, and have the same head. An altered export is refused
// with exit 8 and no ledger of that name appears on the server; a name
// already taken is refused and left as it was. An import killed (SIGKILL) at
// random moments leaves no ledger or the whole one, on either store.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "e2e/run.hpp"
#include "store/ledger_chain.hpp"
#include "support/ledger_transfer.hpp"
#include "support/pg_cluster.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace {

constexpr int kUnavailable = 7, kAltered = 8;

using FilePath = ScratchPath;

/// How the binary names ledger `name` on the cluster as the owner.
std::string server_label(const Cluster& c, const std::string& name) {
  return "postgresql://dpb_owner@" + c.vars.at("PGHOST") + "/dpbudget ledger " + name;
}

/// An export of `count` entries made from `base`'s: its header, and its
/// first entry (a release) again and again under new names, chained anew
/// (unkeyed) with the store's own hashes: a long import to kill.
std::string long_export(const std::string& base, int count) {
  const std::size_t first = base.find('\n');
  auto head = nlohmann::ordered_json::parse(base.substr(0, first));
  const auto entry =
      nlohmann::ordered_json::parse(base.substr(first + 1, base.find('\n', first + 1) - first - 1));
  dpb::store::Header header;
  for (const auto& [name, value] : head.at("header").items())
    header[name] = value.get<std::string>();
  std::string prev = dpb::store::chained_header_hash(std::nullopt, header);
  REQUIRE(prev == head.at("header_hash"));
  std::string out = head.dump() + '\n';
  for (int seq = 1; seq <= count; ++seq) {
    auto line = entry;
    const dpb::store::NewEntry content{line.at("kind"),        "copy-" + std::to_string(seq),
                                       line.at("recorded_at"), line.at("recorded_by"),
                                       line.at("body"),        line.at("note")};
    line["seq"] = seq;
    line["name"] = content.name;
    line["prev_hash"] = prev;
    prev = dpb::store::chained_entry_hash(std::nullopt, seq, content, prev);
    line["hash"] = prev;
    out += line.dump() + '\n';
  }
  return out;
}

/// Runs `ledger-import --from FILE` with `at`, killed with SIGKILL after
/// `delay` (when it has not ended by then); whether the kill landed.
bool import_killed_after(const LedgerArgs& at, const std::string& file,
                         std::chrono::microseconds delay) {
  std::vector<std::string> words = with({dpbudget_binary(), "ledger-import", "--from", file}, at);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::this_thread::sleep_for(delay);
  const bool landed = ::kill(pid, SIGKILL) == 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return landed && WIFSIGNALED(status);
}

}  // namespace

TEST_CASE("postgresql ledger-import: SQLite -> PostgreSQL -> SQLite, the same history and head") {
  const auto& c = cluster();
  const TempFile spec("pg_import_spec.json", R"({"laplace": {"scale": 4}})");
  const TempFile key("pg_import_key", kTransferKey);
  for (const bool keyed : {false, true}) {
    CAPTURE(keyed);
    const std::string name = keyed ? "moved-keyed" : "moved";
    const LedgerArgs keying = keyed ? LedgerArgs{"--key-file", key.path} : LedgerArgs{};
    const FilePath source(name + "_source.ledger"), back(name + "_back.ledger");
    const LedgerArgs on_file = with({"--ledger", source.path}, keying);
    const LedgerArgs on_server = with({"--ledger", c.uri("OWNER"), "--ledger-name", name}, keying);
    const LedgerArgs on_file_again = with({"--ledger", back.path}, keying);

    fill_ledger(on_file, spec.path);
    const std::string text = export_of(on_file);
    const std::string head = head_of(on_file);
    const Run to_server = run_dpbudget(with({"ledger-import", "--from", "-"}, on_server), text);
    CAPTURE(to_server.err);
    REQUIRE(to_server.status == 0);
    CHECK(to_server.out.find(head) != std::string::npos);

    // The server's copy exports the same bytes: header, entries, hashes.
    const std::string from_server = export_of(on_server);
    CHECK(from_server == text);
    CHECK(head_of(on_server) == head);
    const Run to_file =
        run_dpbudget(with({"ledger-import", "--from", "-"}, on_file_again), from_server);
    CAPTURE(to_file.err);
    REQUIRE(to_file.status == 0);
    CHECK(head_of(on_file_again) == head);
    CHECK(export_of(on_file_again) == text);

    const auto lite = views_of(on_file, source.path, head);
    const auto pg = views_of(on_server, server_label(c, name), head);
    const auto lite_again = views_of(on_file_again, back.path, head);
    REQUIRE(pg.size() == lite.size());
    for (std::size_t i = 0; i < lite.size(); ++i) {
      CHECK(pg[i] == lite[i]);
      CHECK(lite_again[i] == lite[i]);
    }

    // The server's copy takes the next release, chained after the head.
    const Run next =
        run_dpbudget(with({"ledger-add", "--name", "count-4", "--spec", spec.path}, on_server));
    CAPTURE(next.err);
    CHECK(next.status == 0);
    const Run verify = run_dpbudget(with({"ledger-verify", "--head", head}, on_server));
    CHECK(verify.status == 0);
    CHECK(verify.out.find("entries_after_head") != std::string::npos);
  }
}

TEST_CASE("postgresql ledger-import: an altered export or a name taken is refused, nothing made") {
  const auto& c = cluster();
  const TempFile spec("pg_import_spec2.json", R"({"laplace": {"scale": 4}})");
  const TempFile key("pg_import_key2", kTransferKey);
  const FilePath source("tamper_source.ledger"), keyed_source("tamper_keyed.ledger");
  fill_ledger({"--ledger", source.path}, spec.path);
  fill_ledger({"--ledger", keyed_source.path, "--key-file", key.path}, spec.path);
  const std::string plain = export_of({"--ledger", source.path});
  const std::string keyed = export_of({"--ledger", keyed_source.path, "--key-file", key.path});
  const std::string uri = c.uri("OWNER");

  // A release's name changed on line 4 (entry 3), and the note of a keyed
  // export's entry: each refused with exit 8 naming the line; the name stays
  // free (ledger-status: no such ledger, exit 7).
  const auto renamed = [](const std::string& line) {
    return std::regex_replace(line, std::regex("\"run-3\""), "\"run-9\"");
  };
  struct Tampered {
    std::string name, text;
    LedgerArgs keying;
  };
  for (const Tampered& t :
       {Tampered{"tampered", with_line_edited(plain, 4, renamed), {}},
        Tampered{"tampered-keyed", with_line_edited(keyed, 4, renamed), {"--key-file", key.path}},
        Tampered{"tampered-cut", without_line(plain, 3), {}}}) {
    CAPTURE(t.name);
    const LedgerArgs at = with({"--ledger", uri, "--ledger-name", t.name}, t.keying);
    const Run r = run_dpbudget(with({"ledger-import", "--from", "-"}, at), t.text);
    CAPTURE(r.err);
    CHECK(r.status == kAltered);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("<stdin>:" + std::string(t.name == "tampered-cut" ? "3" : "4") +
                     ": altered (entry 3: ") != std::string::npos);
    const Run status = run_dpbudget(with({"ledger-status"}, at));
    CHECK(status.status == kUnavailable);
    CHECK(status.err.find("no such ledger") != std::string::npos);
  }

  // A keyed export without its key: one line, nothing made.
  const LedgerArgs unkeyed_target = {"--ledger", uri, "--ledger-name", "keyless"};
  const Run keyless = run_dpbudget(with({"ledger-import", "--from", "-"}, unkeyed_target), keyed);
  CAPTURE(keyless.err);
  CHECK(keyless.status == kUnavailable);
  CHECK(std::count(keyless.err.begin(), keyless.err.end(), '\n') == 1);
  CHECK(keyless.err.find("give its key with --key-file") != std::string::npos);
  CHECK(run_dpbudget(with({"ledger-status"}, unkeyed_target)).status == kUnavailable);

  // A name taken: refused, the ledger there unchanged.
  const LedgerArgs taken = {"--ledger", uri, "--ledger-name", "taken"};
  REQUIRE(run_dpbudget(with({"ledger-init", "--epsilon", "5", "--delta", "1e-6"}, taken)).status ==
          0);
  const std::string before = export_of(taken);
  const Run again = run_dpbudget(with({"ledger-import", "--from", "-"}, taken), plain);
  CAPTURE(again.err);
  CHECK(again.status == kUnavailable);
  CHECK(again.err.find("a ledger of that name exists") != std::string::npos);
  CHECK(export_of(taken) == before);
}

TEST_CASE("postgresql ledger-import: killed at random moments, no ledger or the whole one") {
  const auto& c = cluster();
  const TempFile spec("pg_import_spec3.json", R"({"laplace": {"scale": 4}})");
  const FilePath base("kill_base.ledger");
  fill_ledger({"--ledger", base.path}, spec.path);
  // 1,500 entries: the import takes long enough on either store for kills
  // to land before, inside and after its transaction.
  constexpr int kEntries = 1500;
  const std::string text = long_export(export_of({"--ledger", base.path}), kEntries);
  const TempFile file("pg_import_long.jsonl", text);
  constexpr int kTrials = 12;
  std::mt19937 random(20261129);
  for (const bool server : {true, false}) {
    CAPTURE(server);
    const FilePath target("killed.ledger");
    const auto target_of = [&](int trial) -> LedgerArgs {
      if (server)
        return {"--ledger", c.uri("OWNER"), "--ledger-name", "killed-" + std::to_string(trial)};
      // The file and SQLite's journal a killed import may leave beside it.
      std::remove(target.path.c_str());
      std::remove((target.path + "-journal").c_str());
      return {"--ledger", target.path};
    };
    // How long a whole import takes here: kills fall anywhere in it.
    const auto start = std::chrono::steady_clock::now();
    const Run whole = run_dpbudget(with({"ledger-import", "--from", file.path}, target_of(-1)));
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    CAPTURE(whole.err);
    REQUIRE(whole.status == 0);
    int none = 0, all = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      const LedgerArgs at = target_of(trial);
      const auto delay = std::chrono::microseconds(
          std::uniform_int_distribution<long>(0, static_cast<long>(took.count()))(random));
      (void)import_killed_after(at, file.path, delay);
      const Run after = run_dpbudget(with({"ledger-export", "--format", "ledger"}, at));
      CAPTURE(trial);
      CAPTURE(after.err);
      if (after.status == 0) {
        CHECK(after.out == text);  // whole, never a part
        ++all;
      } else {
        // No ledger: no such name, no file, or (SQLite) a file that is no
        // ledger, its transaction rolled back.
        CHECK(after.status == kUnavailable);
        CHECK(after.out.empty());
        ++none;
      }
    }
    const std::string store = server ? "server" : "file";
    MESSAGE(store << ": " << kTrials << " imports killed: " << none << " left no ledger, " << all
                  << " the whole one; a whole " << kEntries << "-entry import took "
                  << took.count() / 1000 << " ms");
    CHECK(none + all == kTrials);
    if (!server) (void)target_of(kTrials);
  }
}
