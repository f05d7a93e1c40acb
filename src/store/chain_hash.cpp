#include "store/chain_hash.hpp"

#include <stdexcept>

#include "store/libcrypto_library.hpp"

namespace dpb::store {
namespace {

std::string hex(const unsigned char* bytes, unsigned int n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

}  // namespace

std::string chain_hash(const std::optional<std::string>& key,
                       const std::vector<std::string>& fields) {
  std::string message;
  for (const auto& f : fields) message += std::to_string(f.size()) + ':' + f;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(message.data());
  const Libcrypto& c = crypto();
  if (key) {
    if (!c.HMAC(c.EVP_sha256(), key->data(), static_cast<int>(key->size()), data, message.size(),
                digest, &n))
      throw std::runtime_error("HMAC-SHA-256 failed");
  } else if (!c.EVP_Digest(data, message.size(), digest, &n, c.EVP_sha256(), nullptr)) {
    throw std::runtime_error("SHA-256 failed");
  }
  return hex(digest, n);
}

std::string key_check(const std::string& key) {
  return chain_hash(key, {"dpbudget-ledger-key-check"});
}

}  // namespace dpb::store
