#pragma once
// OpenSSL's libcrypto, opened when the hash chain is first computed
// (docs/ledger_postgresql.md#one-libcrypto-per-process). Not linked into the
// static executable: libpq, opened at run time for a server's ledger
// (libpq_library.hpp), brings the shared libcrypto with it, and two copies of
// libcrypto in one process, each keeping its per-thread state through its own
// libc's thread keys, overwrite each other's (a keyed ledger on a server
// crashed). Opened here, the one libcrypto of the process is the one libpq
// uses too. The types come from OpenSSL's headers (libssl-dev) at build time.
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace dpb::store {

// Every libcrypto function the hash chain calls, once: X(name).
#define DPB_LIBCRYPTO_FUNCTIONS(X) \
  X(EVP_Digest)                    \
  X(EVP_sha256)                    \
  X(HMAC)

/// The functions, each a pointer of the type OpenSSL's header declares,
/// under the same name: `crypto().HMAC(...)`.
struct Libcrypto {
#define DPB_LIBCRYPTO_MEMBER(name) decltype(&::name) name = nullptr;
  DPB_LIBCRYPTO_FUNCTIONS(DPB_LIBCRYPTO_MEMBER)
#undef DPB_LIBCRYPTO_MEMBER
};

/// The library, opened on the first call (thread-safe); throws StoreError
/// (io) naming it and its package when it cannot be opened.
const Libcrypto& crypto();

}  // namespace dpb::store
