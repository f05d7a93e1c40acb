#include "cli/run/dataset_ledger.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/neighbouring_choices.hpp"
#include "cli/input/spec_input.hpp"
#include "report/render.hpp"
#include "store/ledger_address.hpp"
#include "store/postgresql_ledger_store.hpp"

namespace dpb::cli {
namespace {

using Json = nlohmann::ordered_json;

/// A key shorter than this is refused: HMAC-SHA-256's security is the key's
/// entropy, and 16 bytes (128 bits) is the least NIST SP 800-107 accepts.
constexpr std::size_t kMinKeyBytes = 16;
/// A key file larger than this is no key (a wrong file given).
constexpr std::size_t kMaxKeyBytes = 4096;

/// The header's format name: a ledger's first check after SQLite's application_id.
constexpr const char* kFormat = "dpbudget-ledger";

/// A double as JSON: +inf (an unbounded order) as the string "inf".
Json number_json(double v) { return std::isinf(v) ? Json("inf") : Json(v); }
double number_of(const Json& j) {
  if (j.is_string() && j.get<std::string>() == "inf")
    return std::numeric_limits<double>::infinity();
  return j.get<double>();
}

std::string header_value(const store::Header& h, const std::string& name, const std::string& path) {
  const auto it = h.find(name);
  if (it == h.end())
    throw LedgerError(path + ": not a dpbudget ledger (its header has no " + name + ")");
  return it->second;
}

}  // namespace

std::string_view to_string(PrivacyUnit unit) {
  return unit == PrivacyUnit::record ? "record" : "user";
}

void add_ledger_file_flags(CLI::App& app, LedgerFileFlags& f) {
  record_file(app.add_option("--ledger", f.ledger,
                             "the ledger file (SQLite), one per dataset; or a PostgreSQL server: "
                             "postgresql://USER@HOST/DB or a libpq connection string, with "
                             "--ledger-name (its password from PGPASSFILE, never here)"));
  app.add_option("--ledger-name", f.ledger_name,
                 "the ledger's name on the PostgreSQL server --ledger names (letters, digits, "
                 "'.', '_', '-'; one ledger per dataset)");
  record_file(
      app.add_option("--key-file", f.key_file,
                     "file whose bytes (16 to 4096) key the ledger's hash chain "
                     "(HMAC-SHA-256): given at ledger-init, needed to write and to verify"));
}

std::optional<std::string> read_key(const LedgerFileFlags& f) {
  if (f.key_file.empty()) return std::nullopt;
  std::ifstream in(f.key_file, std::ios::binary);
  if (!in) throw UsageError("--key-file: cannot read " + f.key_file);
  std::string key;
  char buffer[kMaxKeyBytes + 1];
  in.read(buffer, sizeof buffer);
  key.assign(buffer, static_cast<std::size_t>(in.gcount()));
  if (key.size() > kMaxKeyBytes)
    throw UsageError("--key-file: " + f.key_file + " is larger than 4096 bytes (not a key?)");
  if (key.size() < kMinKeyBytes)
    throw UsageError("--key-file: " + f.key_file + " holds " + std::to_string(key.size()) +
                     " bytes; a key needs at least 16 (e.g. head -c 32 /dev/urandom > FILE)");
  return key;
}

store::Header ledger_header(const DatasetBudget& b, PrivacyUnit unit,
                            const std::vector<std::string>& accountants, const std::string& dataset,
                            const std::string& created_by) {
  store::Header h;
  h["format"] = kFormat;
  h["epsilon"] = Json(b.epsilon).dump();
  h["delta"] = Json(b.delta).dump();
  h["neighbouring"] = std::string(to_string(b.neighbouring));
  h["unit"] = std::string(to_string(unit));
  h["mode"] = std::string(to_string(b.mode));
  h["filter"] = std::string(to_string(b.filter));
  h["orders"] = Json(b.orders).dump();
  std::string list;
  for (const auto& a : accountants) list += (list.empty() ? "" : ",") + a;
  h["accountants"] = list;
  h["dataset"] = dataset;
  h["created_at"] = now_utc();
  h["created_by"] = created_by;
  return h;
}

bool check_ledger_address(const LedgerFileFlags& f) {
  if (!store::is_postgresql_address(f.ledger)) {
    if (!f.ledger_name.empty())
      throw UsageError(
          "--ledger-name: only with a PostgreSQL --ledger (postgresql://... or a libpq "
          "connection string); a ledger file holds one ledger");
    return false;
  }
  if (!store::postgresql_supported())
    throw UsageError(
        "--ledger: names a PostgreSQL server, but this dpbudget was built without PostgreSQL "
        "support (cmake -DDPBUDGET_POSTGRESQL=ON, the default); give a ledger file");
  // libpq reads the string; it is loaded here first, and a machine without
  // it cannot use the ledger (exit 7), whatever the string.
  bool parses = false, has_password = false;
  try {
    parses = store::conninfo_parses(f.ledger);
    has_password = parses && store::conninfo_has_password(f.ledger);
  } catch (const store::StoreError& e) {
    throw LedgerError(e.what());
  }
  if (!parses)
    throw UsageError(
        "--ledger: not a PostgreSQL connection string libpq reads (postgresql://USER@HOST/DB or "
        "keyword=value pairs)");
  if (has_password)
    throw UsageError(
        "--ledger: holds a password; put the password in PGPASSFILE or ~/.pgpass (or a service "
        "file, or PGPASSWORD), not on the command line: the process list shows it");
  if (f.ledger_name.empty())
    throw UsageError(
        "--ledger-name is required with a PostgreSQL --ledger (the ledger's name on the server)");
  const std::string& n = f.ledger_name;
  const bool valid =
      n.size() <= 128 && std::isalnum(static_cast<unsigned char>(n[0])) &&
      std::all_of(n.begin(), n.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
  if (!valid)
    throw UsageError("--ledger-name: '" + n +
                     "' is no ledger name (1 to 128 letters, digits, '.', '_', '-', starting with "
                     "a letter or digit)");
  return true;
}

std::string ledger_label(const LedgerFileFlags& f) {
  if (!store::is_postgresql_address(f.ledger) || !store::postgresql_supported()) return f.ledger;
  return store::conninfo_label(f.ledger) + " ledger " + f.ledger_name;
}

std::unique_ptr<store::LedgerStore> create_ledger(const LedgerFileFlags& f,
                                                  const store::Header& header,
                                                  const std::optional<std::string>& key) {
  const bool postgresql = check_ledger_address(f);
  try {
    if (postgresql) return store::create_postgresql_ledger(f.ledger, f.ledger_name, header, key);
    return store::create_sqlite_ledger(f.ledger, header, key);
  } catch (const store::StoreError& e) {
    throw_ledger_error(e);
  }
}

[[noreturn]] void throw_ledger_error(const store::StoreError& e) {
  if (e.kind() == store::StoreError::Kind::in_doubt) throw LedgerOutcomeUnknown(e.what());
  throw LedgerError(e.what());
}

OpenLedger open_ledger(const LedgerFileFlags& f, bool writable, std::ostream* notes) {
  if (f.ledger.empty()) throw UsageError("--ledger is required (the ledger file)");
  const bool postgresql = check_ledger_address(f);
  const auto key = read_key(f);
  OpenLedger out;
  out.path = ledger_label(f);
  out.has_key = key.has_value();
  try {
    store::StoreNote note;
    if (notes)
      note = [notes](const std::string& text) {
        *notes << "dpbudget: note: " << report::escape_control(text) << '\n' << std::flush;
      };
    out.store = postgresql ? store::open_postgresql_ledger(f.ledger, f.ledger_name, key, note)
                           : store::open_sqlite_ledger(f.ledger, writable, key);
  } catch (const store::StoreError& e) {
    // A writer that cannot open a server's ledger says what that leaves
    // (README, exit status 7), as every failure of its append does.
    if (postgresql && writable) throw LedgerError(std::string(e.what()) + "; nothing was recorded");
    throw_ledger_error(e);
  }
  read_ledger_header(out.store->header(), out.path, out);
  require_key(out);
  return out;
}

std::unique_ptr<store::LedgerStore> import_ledger(const LedgerFileFlags& f,
                                                  const store::Header& header,
                                                  const std::vector<store::Entry>& entries,
                                                  const std::optional<std::string>& key) {
  const bool postgresql = check_ledger_address(f);
  try {
    if (postgresql)
      return store::import_postgresql_ledger(f.ledger, f.ledger_name, header, entries, key);
    return store::import_sqlite_ledger(f.ledger, header, entries, key);
  } catch (const store::StoreError& e) {
    throw LedgerError(e.what());
  }
}

void read_ledger_header(const store::Header& h, const std::string& path, OpenLedger& out) {
  if (header_value(h, "format", path) != kFormat)
    throw LedgerError(path + ": not a dpbudget ledger (format '" + h.at("format") + "')");
  try {
    out.budget.epsilon = Json::parse(header_value(h, "epsilon", path)).get<double>();
    out.budget.delta = Json::parse(header_value(h, "delta", path)).get<double>();
    out.budget.orders = Json::parse(header_value(h, "orders", path)).get<std::vector<double>>();
  } catch (const nlohmann::json::exception&) {
    throw LedgerError(path + ": its header does not read (damaged?)");
  }
  const auto choice = [&](const std::string& name, auto& target, const auto& choices) {
    const std::string v = header_value(h, name, path);
    for (const auto& c : choices)
      if (to_string(c.value) == v) {
        target = c.value;
        return;
      }
    throw LedgerError(path + ": its header's " + name + " '" + v +
                      "' is not one this dpbudget knows");
  };
  choice("neighbouring", out.budget.neighbouring, kNeighbouringChoices);
  choice("unit", out.unit, kPrivacyUnitChoices);
  static constexpr std::array<Choice<LedgerMode>, 2> kModes{
      {{"adaptive", LedgerMode::adaptive}, {"planned", LedgerMode::planned}}};
  static constexpr std::array<Choice<LedgerFilter>, 2> kFilters{
      {{"renyi", LedgerFilter::renyi}, {"gdp", LedgerFilter::gdp}}};
  choice("mode", out.budget.mode, kModes);
  choice("filter", out.budget.filter, kFilters);
  std::stringstream list(header_value(h, "accountants", path));
  for (std::string a; std::getline(list, a, ',');) out.accountants.push_back(a);
  try {
    check_dataset_budget(out.budget);
  } catch (const std::exception& e) {
    throw LedgerError(path + ": its budget does not read: " + e.what());
  }
}

void require_key(const OpenLedger& ledger) {
  if (ledger.store->keyed() && !ledger.has_key)
    throw LedgerError(ledger.path +
                      ": --key-file: this ledger is keyed; it is read, checked and written only "
                      "with its key");
}

void check_chain(const OpenLedger& ledger, const std::vector<store::Entry>& stored) {
  require_key(ledger);
  const auto problems = store::verify_chain(*ledger.store, stored);
  if (problems.empty()) return;
  const auto& p = problems.front();
  std::string where;
  for (const auto& e : stored)
    if (e.seq == p.seq) where = "entry " + std::to_string(e.seq) + " ('" + e.content.name + "'): ";
  throw LedgerAltered(ledger.path + ": altered (" + where + p.what +
                      "); nothing decided or recorded; run 'dpbudget ledger-verify'");
}

std::vector<store::Entry> checked_entries(const OpenLedger& ledger) {
  std::vector<store::Entry> stored;
  try {
    stored = ledger.store->entries();
  } catch (const store::StoreError& e) {
    throw_ledger_error(e);
  }
  check_chain(ledger, stored);
  return stored;
}

ReadLedger read_ledger(const LedgerFileFlags& flags) {
  ReadLedger r{open_ledger(flags, false), {}, {}};
  r.stored = checked_entries(r.ledger);
  r.entries = read_entries(r.stored);
  return r;
}

void use_ledger_pld_tolerance(AccountantChoice& choice, const DatasetBudget& budget,
                              const DpEvent& all) {
  if (std::find(choice.names.begin(), choice.names.end(), "pld") == choice.names.end()) return;
  AccountantOptions options = choice.options;
  options.neighbouring = budget.neighbouring;
  auto rdp = make_accountant("rdp", options);
  try {
    if (rdp->unsupported_reason(all)) return;
    rdp->compose(all);
    const Guarantee g = rdp->epsilon(budget.delta);
    if (g.bound == BoundKind::upper)
      choice.options.pld.tolerance =
          ledger_pld_tolerance(budget, g.epsilon, choice.options.pld.tolerance);
  } catch (const UnsupportedEvent&) {
    // rdp cannot bound it: pld keeps its tolerance.
  }
}

std::string release_body(const std::string& event_json, PrivacyUnit unit, const Contribution& c) {
  Json body;
  body["event"] = Json::parse(event_json);
  body["unit"] = std::string(to_string(unit));
  Json contribution;
  Json rdp = Json::array();
  for (double v : c.rdp) rdp.push_back(number_json(v));
  contribution["rdp"] = rdp;
  if (c.rdp_unusable) contribution["rdp_unusable"] = *c.rdp_unusable;
  if (c.mu) contribution["mu"] = number_json(*c.mu);
  if (c.mu_unusable) contribution["mu_unusable"] = *c.mu_unusable;
  body["contribution"] = contribution;
  return body.dump();
}

std::string void_body(std::int64_t voids, const std::string& reason) {
  Json body;
  body["voids"] = voids;
  body["reason"] = reason;
  return body.dump();
}

std::vector<LedgerEntry> read_entries(const std::vector<store::Entry>& stored) {
  std::vector<LedgerEntry> out;
  out.reserve(stored.size());
  for (const auto& s : stored) {
    LedgerEntry e;
    e.stored = s;
    const std::string where = "entry " + std::to_string(s.seq) + " ('" + s.content.name + "')";
    try {
      const Json body = Json::parse(s.content.body);
      if (s.content.kind == "void") {
        e.is_void = true;
        e.voids = body.at("voids").get<std::int64_t>();
        e.reason = body.at("reason").get<std::string>();
      } else if (s.content.kind == "release") {
        e.event = event_from_json(body.at("event"));
        e.event_json = body.at("event").dump();
        e.unit =
            body.at("unit").get<std::string>() == "user" ? PrivacyUnit::user : PrivacyUnit::record;
        const Json& c = body.at("contribution");
        for (const auto& v : c.at("rdp")) e.contribution.rdp.push_back(number_of(v));
        if (c.contains("rdp_unusable"))
          e.contribution.rdp_unusable = c.at("rdp_unusable").get<std::string>();
        if (c.contains("mu")) e.contribution.mu = number_of(c.at("mu"));
        if (c.contains("mu_unusable"))
          e.contribution.mu_unusable = c.at("mu_unusable").get<std::string>();
      } else {
        throw LedgerError(where + ": kind '" + s.content.kind + "' is not one this dpbudget knows");
      }
    } catch (const nlohmann::json::exception& x) {
      throw LedgerError(where + ": does not read (" + std::string(x.what()) + ")");
    } catch (const SpecError& x) {
      throw LedgerError(where + ": its release does not read (" + std::string(x.what()) + ")");
    }
    out.push_back(std::move(e));
  }
  for (const auto& e : out)
    if (e.is_void)
      for (auto& target : out)
        if (target.stored.seq == e.voids && !target.voided_by) target.voided_by = e.stored.seq;
  return out;
}

std::vector<const LedgerEntry*> releases_in_force(const std::vector<LedgerEntry>& entries) {
  std::vector<const LedgerEntry*> out;
  for (const auto& e : entries)
    if (!e.is_void && !e.voided_by) out.push_back(&e);
  return out;
}

EventPtr planned_event(const std::vector<const LedgerEntry*>& releases) {
  std::vector<EventPtr> events;
  events.reserve(releases.size());
  for (const auto* r : releases) events.push_back(r->event);
  return compose_releases(events);
}

std::vector<Contribution> contributions(const std::vector<const LedgerEntry*>& releases) {
  std::vector<Contribution> out;
  out.reserve(releases.size());
  for (const auto* r : releases) out.push_back(r->contribution);
  return out;
}

std::string recorder(const std::string& by) {
  if (!by.empty()) return by;
  for (const char* name : {"DPBUDGET_USER", "USER", "LOGNAME"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return "unknown";
}

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace dpb::cli
