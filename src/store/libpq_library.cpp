// Opens libpq.so.5 with dlopen (why: libpq_library.hpp). In the static
// executable glibc loads the library and its dependencies beside the linked
// copy of itself; nothing crosses between them but libpq's own objects,
// which only libpq frees (PQclear, PQfinish, PQfreemem, PQconninfoFree).
#include "store/libpq_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "store/ledger_store.hpp"

namespace dpb::store {
namespace {

/// libpq's soname: 5 since PostgreSQL 8.0, the ABI every later client keeps.
constexpr const char* kLibpqSoname = "libpq.so.5";
/// The environment variable naming another libpq to open (a path, or a
/// soname the loader searches for), e.g. a newer client installed elsewhere.
constexpr const char* kLibpqVariable = "DPBUDGET_LIBPQ";

Libpq load() {
  const char* chosen = std::getenv(kLibpqVariable);
  const std::string library = chosen && *chosen ? chosen : kLibpqSoname;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw StoreError(StoreError::Kind::io,
                     "cannot load PostgreSQL's client library " + library +
                         (chosen && *chosen ? std::string(" (") + kLibpqVariable + ")"
                                            : std::string(" (Debian: apt-get install libpq5)")) +
                         ": " + (why ? why : "unknown error"));
  }
  Libpq lib;
#define DPB_LIBPQ_LOAD(name)                                             \
  lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name)); \
  if (!lib.name)                                                         \
    throw StoreError(StoreError::Kind::io,                               \
                     library + " has no " #name " (not libpq, or one older than PostgreSQL 10)");
  DPB_LIBPQ_FUNCTIONS(DPB_LIBPQ_LOAD)
#undef DPB_LIBPQ_LOAD
  // The handle stays open for the life of the process: the functions are used
  // until exit.
  return lib;
}

}  // namespace

const Libpq& pq() {
  static const Libpq lib = load();
  return lib;
}

}  // namespace dpb::store
