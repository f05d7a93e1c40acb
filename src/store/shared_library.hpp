#pragma once
// Opening a shared library at run time
// (docs/ledger_postgresql.md#linking-libpq-opened-when-first-needed): dpbudget is one static
// executable, and the libraries of the ledger's store that must be one copy per process (libpq and
// the libcrypto it uses, which the hash chain then uses too) are opened with dlopen on first use.
// Every failure is a StoreError (io) naming the library and the package providing it, so a machine
// without it gets one line and exit 7.
#include <string>

namespace dpb::store {

/// An opened library: its handle and the name it was opened by.
struct SharedLibrary {
  void* handle = nullptr;
  std::string name;
};

/// Opens `soname`, or the path or soname in the environment variable
/// `variable` when it is set and not empty. `description` (e.g.
/// "PostgreSQL's client library") and `package` (the Debian package that
/// provides `soname`) are for the message. The handle is never closed (the
/// functions are used until the process exits).
SharedLibrary open_shared_library(const char* description, const char* soname, const char* variable,
                                  const char* package);

/// The address of `symbol` in `library`; throws StoreError (io) when absent.
void* shared_symbol(const SharedLibrary& library, const char* symbol, const char* what_library);

}  // namespace dpb::store
