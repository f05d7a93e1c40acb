#pragma once
// libpq, PostgreSQL's client library, loaded when a ledger on a server is
// first used (docs/ledger_postgresql.md#linking-libpq-opened-when-first-needed): dpbudget is one
// static executable (CMakeLists.txt, DPBUDGET_STATIC), and Debian ships libpq only as a shared
// library with shared dependencies (Kerberos, LDAP), so the library is opened with dlopen instead
// of being linked. A user of SQLite ledgers, or of no ledger, loads nothing and needs no libpq5
// installed; the start of every other command is unchanged. The types and constants come from
// libpq's header (libpq-dev) at build time.
#include <libpq-fe.h>

namespace dpb::store {

// Every libpq function the PostgreSQL store calls, once: X(name).
#define DPB_LIBPQ_FUNCTIONS(X) \
  X(PQclear)                   \
  X(PQconnectdbParams)         \
  X(PQconndefaults)            \
  X(PQconninfoFree)            \
  X(PQconninfoParse)           \
  X(PQerrorMessage)            \
  X(PQexec)                    \
  X(PQexecParams)              \
  X(PQfinish)                  \
  X(PQfreemem)                 \
  X(PQgetlength)               \
  X(PQgetvalue)                \
  X(PQntuples)                 \
  X(PQreset)                   \
  X(PQresultErrorField)        \
  X(PQresultStatus)            \
  X(PQstatus)                  \
  X(PQtransactionStatus)

/// The functions, each a pointer of the type libpq's header declares, under
/// the same name: `pq().PQclear(r)`.
struct Libpq {
#define DPB_LIBPQ_MEMBER(name) decltype(&::name) name = nullptr;
  DPB_LIBPQ_FUNCTIONS(DPB_LIBPQ_MEMBER)
#undef DPB_LIBPQ_MEMBER
};

/// The library, opened on the first call (thread-safe); throws StoreError
/// (io) naming the library and the package that provides it when it cannot
/// be opened or lacks a function.
const Libpq& pq();

}  // namespace dpb::store
