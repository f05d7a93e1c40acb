// Which store a ledger's address names, and the PostgreSQL store's entry
// points in a build without it (each refuses: the command line checks
// postgresql_supported() first and says so in one line).
#include "store/ledger_address.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "store/postgresql_ledger_store.hpp"

namespace dpb::store {
namespace {

/// libpq's connection keywords (PQconndefaults() of libpq 15, and those that
/// later versions add); tests/store/postgresql_store_test.cpp checks that
/// every keyword of the libpq it links is here.
constexpr std::array<std::string_view, 44> kLibpqKeywords{
    "service",
    "user",
    "password",
    "passfile",
    "channel_binding",
    "connect_timeout",
    "dbname",
    "host",
    "hostaddr",
    "port",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "sslmode",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "krbsrvname",
    "gsslib",
    "replication",
    "target_session_attrs",
    "gssdelegation",
    "require_auth",
    "sslcertmode",
    "load_balance_hosts",
    "sslnegotiation",
    "sslkeylogfile",
    "scram_client_key",
    "scram_server_key",
};

}  // namespace

bool is_postgresql_address(const std::string& ledger) {
  if (ledger.rfind("postgresql://", 0) == 0 || ledger.rfind("postgres://", 0) == 0) return true;
  std::size_t i = 0;
  while (i < ledger.size() && std::isspace(static_cast<unsigned char>(ledger[i]))) ++i;
  const std::size_t start = i;
  while (i < ledger.size() &&
         (std::islower(static_cast<unsigned char>(ledger[i])) || ledger[i] == '_'))
    ++i;
  const std::string_view word(ledger.data() + start, i - start);
  while (i < ledger.size() && std::isspace(static_cast<unsigned char>(ledger[i]))) ++i;
  if (word.empty() || i == ledger.size() || ledger[i] != '=') return false;
  return std::find(kLibpqKeywords.begin(), kLibpqKeywords.end(), word) != kLibpqKeywords.end();
}

#ifdef DPBUDGET_HAVE_POSTGRESQL
bool postgresql_supported() { return true; }
#else
bool postgresql_supported() { return false; }

namespace {
[[noreturn]] void unsupported() {
  throw StoreError(StoreError::Kind::io,
                   "this dpbudget was built without PostgreSQL support (-DDPBUDGET_POSTGRESQL=ON)");
}
}  // namespace

bool conninfo_parses(const std::string&) { unsupported(); }
bool conninfo_has_password(const std::string&) { unsupported(); }
std::string conninfo_label(const std::string&) { unsupported(); }
std::unique_ptr<LedgerStore> create_postgresql_ledger(const std::string&, const std::string&,
                                                      const Header&,
                                                      const std::optional<std::string>&) {
  unsupported();
}
std::unique_ptr<LedgerStore> open_postgresql_ledger(const std::string&, const std::string&,
                                                    const std::optional<std::string>&,
                                                    const StoreNote&) {
  unsupported();
}
std::unique_ptr<LedgerStore> import_postgresql_ledger(const std::string&, const std::string&,
                                                      const Header&, const std::vector<Entry>&,
                                                      const std::optional<std::string>&) {
  unsupported();
}
#endif

}  // namespace dpb::store
