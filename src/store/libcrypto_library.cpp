// Opens libcrypto.so.3 with dlopen (why: libcrypto_library.hpp).
#include "store/libcrypto_library.hpp"

#include "store/shared_library.hpp"

namespace dpb::store {
namespace {

/// OpenSSL 3's soname (Debian 12: libssl3).
constexpr const char* kLibcryptoSoname = "libcrypto.so.3";
/// The environment variable naming another libcrypto to open.
constexpr const char* kLibcryptoVariable = "DPBUDGET_LIBCRYPTO";

Libcrypto load() {
  const SharedLibrary library =
      open_shared_library("OpenSSL's libcrypto", kLibcryptoSoname, kLibcryptoVariable, "libssl3");
  Libcrypto lib;
#define DPB_LIBCRYPTO_LOAD(name) \
  lib.name = reinterpret_cast<decltype(lib.name)>(shared_symbol(library, #name, "libcrypto 3"));
  DPB_LIBCRYPTO_FUNCTIONS(DPB_LIBCRYPTO_LOAD)
#undef DPB_LIBCRYPTO_LOAD
  return lib;
}

}  // namespace

const Libcrypto& crypto() {
  static const Libcrypto lib = load();
  return lib;
}

}  // namespace dpb::store
