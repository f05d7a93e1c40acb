// Opens libpq.so.5 with dlopen (why: libpq_library.hpp).
#include "store/libpq_library.hpp"

#include "store/shared_library.hpp"

namespace dpb::store {
namespace {

/// libpq's soname: 5 since PostgreSQL 8.0, the ABI every later client keeps.
constexpr const char* kLibpqSoname = "libpq.so.5";
/// The environment variable naming another libpq to open (a path, or a
/// soname the loader searches for), e.g. a newer client installed elsewhere.
constexpr const char* kLibpqVariable = "DPBUDGET_LIBPQ";

Libpq load() {
  const SharedLibrary library =
      open_shared_library("PostgreSQL's client library", kLibpqSoname, kLibpqVariable, "libpq5");
  Libpq lib;
#define DPB_LIBPQ_LOAD(name) \
  lib.name = reinterpret_cast<decltype(lib.name)>(shared_symbol(library, #name, "libpq"));
  DPB_LIBPQ_FUNCTIONS(DPB_LIBPQ_LOAD)
#undef DPB_LIBPQ_LOAD
  return lib;
}

}  // namespace

const Libpq& pq() {
  static const Libpq lib = load();
  return lib;
}

}  // namespace dpb::store
