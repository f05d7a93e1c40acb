// ledger-export --format ledger and ledger-import on SQLite files
// (docs/ledger.md#moving-a-ledger-between-stores): a ledger copied file to
// file prints the same history, status, verify --head and export, keyed and
// not; an altered line (its hashes recomputed or not), an existing
// destination, a keyed export without its key or with another, and bad
// lines are refused with one line and their exit status, nothing created.
// The same between SQLite and PostgreSQL: tests/postgresql/ledger_import_test.cpp.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e/run.hpp"
#include "support/ledger_transfer.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace ledger_import_e2e {

/// README "Exit status" (written out, not taken from src/).
constexpr int kStatusUsage = 2, kStatusUnavailable = 7, kStatusAltered = 8;

using Path = ScratchPath;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

const char* kSpec = R"({"laplace": {"scale": 4}})";

/// The import of `from` into `to` (with `more` words): its run.
Run import_into(const std::string& to, const std::string& from,
                const std::vector<std::string>& more = {}) {
  return run_dpbudget(with({"ledger-import", "--ledger", to, "--from", from}, more));
}

/// A refusal: exit `status`, one line on stderr holding `says`, nothing on
/// stdout, `to` not created.
void check_refused_import(const Run& r, int status, const std::string& says,
                          const std::string& to) {
  CAPTURE(r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(says) != std::string::npos);
  CHECK_FALSE(exists(to));
}

}  // namespace ledger_import_e2e

using namespace ledger_import_e2e;

TEST_CASE("ledger-import: a file copied to a file prints the same history, status and head") {
  const TempFile spec("import_spec.json", kSpec);
  const TempFile key("import_key", kTransferKey);
  for (const bool keyed : {false, true}) {
    CAPTURE(keyed);
    const Path source("source.ledger"), copy("copied.ledger"), file("export.jsonl");
    const LedgerArgs keying = keyed ? LedgerArgs{"--key-file", key.path} : LedgerArgs{};
    fill_ledger(with({"--ledger", source.path}, keying), spec.path);
    const std::string text = export_of(with({"--ledger", source.path}, keying));
    std::ofstream(file.path) << text;

    // The export: a header line, then the 4 entries in order, each with its
    // body as stored and its hashes; entry 1 chains to the header's hash.
    std::vector<nlohmann::json> lines;
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
      lines.push_back(nlohmann::json::parse(text.substr(at, end - at)));
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].at("format") == "dpbudget-ledger-export");
    CHECK(lines[0].at("schema_version") == 1);
    CHECK(lines[0].at("header").at("hash") == (keyed ? "hmac-sha256" : "sha256"));
    CHECK(lines[0].at("header").contains("key_check") == keyed);
    CHECK(lines[0].at("header").at("dataset") == "census 2026");
    CHECK(lines[1].at("prev_hash") == lines[0].at("header_hash"));
    for (std::size_t i = 1; i < lines.size(); ++i) CHECK(lines[i].at("seq") == i);
    CHECK(lines[2].at("name") ==
          "gr\xc3\xb6\xc3\x9f"
          "e-2");
    CHECK(lines[2].at("note") == "rerun \"same\" seed\ttabbed");
    CHECK(lines[4].at("kind") == "void");
    CHECK(nlohmann::json::parse(lines[4].at("body").get<std::string>()).at("voids") == 2);

    const Run imported = import_into(copy.path, file.path, with({"--format", "json"}, keying));
    CAPTURE(imported.err);
    REQUIRE(imported.status == 0);
    const auto result = nlohmann::json::parse(imported.out).at("results").at(0);
    CHECK(result.at("entries") == 4);
    CHECK(result.at("keyed") == keyed);
    const LedgerArgs from = with({"--ledger", source.path}, keying);
    const LedgerArgs to = with({"--ledger", copy.path}, keying);
    const std::string head = head_of(from);
    CHECK(result.at("head") == head);
    CHECK(lines[4].at("hash") == head);
    CHECK(head_of(to) == head);
    CHECK(export_of(to) == text);
    CHECK(views_of(to, copy.path, head) == views_of(from, source.path, head));
    struct stat st {};
    REQUIRE(::stat(copy.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);

    // The copy is a ledger like any: it takes the next release, chained.
    const Run next =
        run_dpbudget(with({"ledger-add", "--name", "count-4", "--spec", spec.path}, to));
    CAPTURE(next.err);
    CHECK(next.status == 0);
    CHECK(run_dpbudget(with({"ledger-verify", "--head", head}, to)).status == 0);
  }
}

TEST_CASE("ledger-import: an altered export, an existing ledger and a wrong key are refused") {
  const TempFile spec("import_spec2.json", kSpec);
  const TempFile key("import_key2", kTransferKey);
  const TempFile other("import_other_key", kOtherKey);
  const Path source("plain.ledger"), keyed_source("keyed.ledger"), copy("refused.ledger");
  fill_ledger({"--ledger", source.path}, spec.path);
  fill_ledger({"--ledger", keyed_source.path, "--key-file", key.path}, spec.path);
  const std::string plain = export_of({"--ledger", source.path});
  const std::string keyed = export_of({"--ledger", keyed_source.path, "--key-file", key.path});

  // Entry 3's name changed: its hash no longer matches (line 4).
  const auto renamed = [](const std::string& line) {
    return std::regex_replace(line, std::regex("\"run-3\""), "\"run-9\"");
  };
  const TempFile edited("import_edited.jsonl", with_line_edited(plain, 4, renamed));
  check_refused_import(import_into(copy.path, edited.path), kStatusAltered,
                       edited.path + ":4: altered (entry 3: its hash does not match its content",
                       copy.path);
  // Entry 2 removed: entry 3 follows entry 1 (line 3 is now entry 3's).
  const TempFile removed("import_removed.jsonl", without_line(plain, 3));
  check_refused_import(import_into(copy.path, removed.path), kStatusAltered,
                       ":3: altered (entry 3: follows entry 1: entry 2 is missing", copy.path);
  // Entry 2 given twice: the second copy (line 4) is out of place.
  const TempFile doubled(
      "import_doubled.jsonl",
      with_line_edited(plain, 3, [](const std::string& l) { return l + '\n' + l; }));
  check_refused_import(import_into(copy.path, doubled.path), kStatusAltered,
                       doubled.path + ":4: altered (entry 2: out of place", copy.path);
  // The budget in the header raised: the chain no longer starts from it.
  const auto raised = [](const std::string& line) {
    auto head = nlohmann::ordered_json::parse(line);
    head["header"]["epsilon"] = "30";
    return head.dump();
  };
  const TempFile richer("import_richer.jsonl", with_line_edited(plain, 1, raised));
  check_refused_import(import_into(copy.path, richer.path), kStatusAltered,
                       ":1: altered (\"header_hash\" is not the header's hash", copy.path);

  // A keyed export: not without its key, not with another, not edited.
  const TempFile keyed_file("import_keyed.jsonl", keyed);
  check_refused_import(import_into(copy.path, keyed_file.path), kStatusUnavailable,
                       "the ledger is keyed (HMAC-SHA-256); give its key with --key-file",
                       copy.path);
  check_refused_import(import_into(copy.path, keyed_file.path, {"--key-file", other.path}),
                       kStatusUnavailable, "not the key this ledger was created with", copy.path);
  check_refused_import(import_into(copy.path, edited.path, {"--key-file", key.path}),
                       kStatusUnavailable, "this ledger was created without a key", copy.path);
  const TempFile keyed_edited("import_keyed_edited.jsonl", with_line_edited(keyed, 4, renamed));
  check_refused_import(import_into(copy.path, keyed_edited.path, {"--key-file", key.path}),
                       kStatusAltered, ":4: altered (entry 3: its hash does not match", copy.path);

  // An existing ledger is never replaced: refused, unchanged.
  const TempFile good("import_good.jsonl", plain);
  const Path target("existing.ledger");
  fill_ledger({"--ledger", target.path}, spec.path);
  const std::string before = export_of({"--ledger", target.path});
  const Run again = import_into(target.path, good.path);
  CAPTURE(again.err);
  CHECK(again.status == kStatusUnavailable);
  CHECK(again.err.find("the file exists (a ledger is never replaced)") != std::string::npos);
  CHECK(export_of({"--ledger", target.path}) == before);

  // A ledger without entries: its head is its header's, as ledger-init printed.
  const Path empty("empty.ledger"), empty_copy("empty_copy.ledger");
  const Run init = run_dpbudget({"ledger-init", "--ledger", empty.path, "--epsilon", "1", "--delta",
                                 "1e-6", "--format", "json"});
  REQUIRE(init.status == 0);
  const std::string init_head =
      nlohmann::json::parse(init.out).at("results").at(0).at("head").get<std::string>();
  const std::string empty_text = export_of({"--ledger", empty.path});
  CHECK(std::count(empty_text.begin(), empty_text.end(), '\n') == 1);
  const Run empty_import =
      run_dpbudget({"ledger-import", "--ledger", empty_copy.path, "--from", "-"}, empty_text);
  CAPTURE(empty_import.err);
  CHECK(empty_import.status == 0);
  CHECK(empty_import.out.find(init_head) != std::string::npos);
  CHECK(head_of({"--ledger", empty_copy.path}) == init_head);

  // From standard input.
  const Run piped = run_dpbudget({"ledger-import", "--ledger", copy.path, "--from", "-"}, plain);
  CAPTURE(piped.err);
  CHECK(piped.status == 0);
  CHECK(export_of({"--ledger", copy.path}) == plain);
}

TEST_CASE("ledger-import: bad lines are refused naming the file and the line, exit 2") {
  const TempFile spec("import_spec3.json", kSpec);
  const Path source("bad_source.ledger"), copy("bad_copy.ledger");
  fill_ledger({"--ledger", source.path}, spec.path);
  const std::string plain = export_of({"--ledger", source.path});
  struct Case {
    std::string name, text, says;
  };
  const std::vector<Case> cases = {
      {"not_json", with_line_edited(plain, 3, [](const std::string&) { return "{\"seq\": 2,"; }),
       ":3: not JSON ("},
      {"missing",
       with_line_edited(plain, 2,
                        [](const std::string& l) {
                          return std::regex_replace(l, std::regex(",\"note\":\"\""), "");
                        }),
       ":2: no \"note\" (a ledger export's entry line)"},
      {"extra",
       with_line_edited(
           plain, 2, [](const std::string& l) { return l.substr(0, l.size() - 1) + ",\"x\":1}"; }),
       ":2: \"x\" is no field of a ledger export's entry line"},
      {"seq_text",
       with_line_edited(plain, 2,
                        [](const std::string& l) {
                          return std::regex_replace(l, std::regex("\"seq\":1"), "\"seq\":\"1\"");
                        }),
       ":2: \"seq\" must be an integer from 1, got \"1\""},
      {"schema",
       with_line_edited(plain, 1,
                        [](const std::string& l) {
                          return std::regex_replace(l, std::regex("\"schema_version\":1"),
                                                    "\"schema_version\":2");
                        }),
       ":1: \"schema_version\" is 2; this dpbudget reads 1"},
      {"spec_file", "{\"laplace\": {\"scale\": 4}}\n", ":1: no \"format\""},
      {"not_a_ledger",
       with_line_edited(plain, 1,
                        [](const std::string& l) {
                          return std::regex_replace(l, std::regex("\"format\":\"dpbudget-ledger\""),
                                                    "\"format\":\"other\"");
                        }),
       ":1: not a dpbudget ledger (format 'other')"},
      {"blank", plain + "\n", ":6: empty (an export has no blank lines)"},
      {"empty", "", ": empty: no header line"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const TempFile file("import_bad_" + c.name + ".jsonl", c.text);
    check_refused_import(import_into(copy.path, file.path), kStatusUsage,
                         "dpbudget: error: --from: " + file.path + c.says, copy.path);
  }
  check_refused_import(import_into(copy.path, "/tmp/dpbudget_no_such_export.jsonl"), kStatusUsage,
                       "--from: cannot open", copy.path);
  // A name that is not UTF-8 cannot be exported byte for byte: refused,
  // naming the entry, nothing written.
  const Run odd = run_dpbudget(
      {"ledger-add", "--ledger", source.path, "--name", "bad-\xff", "--spec", spec.path});
  REQUIRE(odd.status == 0);
  const Run not_utf8 =
      run_dpbudget({"ledger-export", "--ledger", source.path, "--format", "ledger"});
  CHECK(not_utf8.status == kStatusUnavailable);
  CHECK(not_utf8.out.empty());
  CHECK(not_utf8.err.find(": entry 5: holds text that is not UTF-8") != std::string::npos);
  const Run no_from = run_dpbudget({"ledger-import", "--ledger", copy.path});
  CHECK(no_from.status == kStatusUsage);
  CHECK(no_from.err.find("--from is required") != std::string::npos);
  const Run bad_format =
      run_dpbudget({"ledger-export", "--ledger", source.path, "--format", "jsonl"});
  CHECK(bad_format.status == kStatusUsage);
  CHECK(bad_format.err.find("--format") != std::string::npos);
  CHECK(bad_format.out.empty());
}
