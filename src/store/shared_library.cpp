// dlopen and dlsym with the store's errors (shared_library.hpp). In the static
// executable glibc loads the library and its dependencies beside the linked
// copy of itself; nothing crosses between them but the library's own objects,
// which only the library frees.
#include "store/shared_library.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "store/ledger_store.hpp"

namespace dpb::store {

SharedLibrary open_shared_library(const char* description, const char* soname, const char* variable,
                                  const char* package) {
  const char* chosen = std::getenv(variable);
  const bool overridden = chosen && *chosen;
  SharedLibrary out;
  out.name = overridden ? chosen : soname;
  out.handle = dlopen(out.name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!out.handle) {
    const char* why = dlerror();
    throw StoreError(StoreError::Kind::io,
                     "cannot load " + std::string(description) + " " + out.name +
                         (overridden ? " (" + std::string(variable) + ")"
                                     : " (Debian: apt-get install " + std::string(package) + ")") +
                         ": " + (why ? why : "unknown error"));
  }
  return out;
}

void* shared_symbol(const SharedLibrary& library, const char* symbol, const char* what_library) {
  void* address = dlsym(library.handle, symbol);
  if (!address)
    throw StoreError(StoreError::Kind::io, library.name + " has no " + symbol + " (not " +
                                               what_library + ", or an older version)");
  return address;
}

}  // namespace dpb::store
