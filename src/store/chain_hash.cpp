// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104) written here rather than
// taken from OpenSSL's libcrypto: dpbudget is one static executable that
// opens libpq.so.5 with dlopen for a server's ledger (libpq_library.hpp), and
// libpq brings the shared libcrypto and libc with it. Two libcrypto copies in
// one process, each on its own libc's thread-local keys, overwrite each
// other's thread state: HMAC in the static copy after a connection, or a
// connection (libpq's SCRAM nonce) after HMAC in the static copy, crashed
// (a keyed ledger on PostgreSQL, docs/ledger_postgresql.md). This code keeps
// no state between calls; tests/cli/chain_hash_test.cpp checks it against the
// standards' test vectors.
#include "store/chain_hash.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dpb::store {
namespace {

/// SHA-256's block, in bytes (also HMAC's key block).
constexpr std::size_t kBlockBytes = 64;

/// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube
/// roots of the first 64 primes.
constexpr std::array<std::uint32_t, 64> kRoundConstants{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
/// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square
/// roots of the first 8 primes.
constexpr std::array<std::uint32_t, 8> kInitialHash{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

using Digest = std::array<unsigned char, 32>;

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/// SHA-256 of a message given in pieces.
class Sha256 {
 public:
  void update(std::string_view data) {
    for (const char c : data) {
      buffer_[buffered_++] = static_cast<unsigned char>(c);
      if (buffered_ == kBlockBytes) {
        compress();
        buffered_ = 0;
      }
    }
    bytes_ += data.size();
  }

  /// The digest; the object is spent.
  Digest finish() {
    const std::uint64_t bits = bytes_ * 8;
    update(std::string_view("\x80", 1));
    while (buffered_ != kBlockBytes - 8) update(std::string_view("\0", 1));
    for (int i = 7; i >= 0; --i) buffer_[buffered_++] = static_cast<unsigned char>(bits >> (8 * i));
    compress();
    Digest out{};
    for (std::size_t i = 0; i < 8; ++i)
      for (std::size_t j = 0; j < 4; ++j)
        out[4 * i + j] = static_cast<unsigned char>(h_[i] >> (24 - 8 * j));
    return out;
  }

 private:
  /// FIPS 180-4 §6.2.2 on the buffered block.
  void compress() {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t t = 0; t < 16; ++t)
      w[t] = std::uint32_t{buffer_[4 * t]} << 24 | std::uint32_t{buffer_[4 * t + 1]} << 16 |
             std::uint32_t{buffer_[4 * t + 2]} << 8 | std::uint32_t{buffer_[4 * t + 3]};
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::array<std::uint32_t, 8> v = h_;  // a..h
    for (std::size_t t = 0; t < 64; ++t) {
      const std::uint32_t e = v[4];
      const std::uint32_t a = v[0];
      const std::uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                               ((e & v[5]) ^ (~e & v[6])) + kRoundConstants[t] + w[t];
      const std::uint32_t t2 =
          (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
      v = {t1 + t2, a, v[1], v[2], v[3] + t1, e, v[5], v[6]};
    }
    for (std::size_t i = 0; i < 8; ++i) h_[i] += v[i];
  }

  std::array<std::uint32_t, 8> h_ = kInitialHash;
  std::array<unsigned char, kBlockBytes> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t bytes_ = 0;
};

std::string_view view(const Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

std::string hex(const Digest& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const unsigned char b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

/// The fields as chain_hash hashes them: each its length, ':' and its bytes.
void feed(Sha256& sha, const std::vector<std::string>& fields) {
  for (const auto& f : fields) {
    sha.update(std::to_string(f.size()));
    sha.update(":");
    sha.update(f);
  }
}

}  // namespace

std::string chain_hash(const std::optional<std::string>& key,
                       const std::vector<std::string>& fields) {
  if (!key) {
    Sha256 sha;
    feed(sha, fields);
    return hex(sha.finish());
  }
  // RFC 2104: a key longer than the block is hashed first; then
  // H((K ^ opad) || H((K ^ ipad) || message)).
  std::array<unsigned char, kBlockBytes> block{};
  if (key->size() > kBlockBytes) {
    Sha256 sha;
    sha.update(*key);
    const Digest d = sha.finish();
    for (std::size_t i = 0; i < d.size(); ++i) block[i] = d[i];
  } else {
    for (std::size_t i = 0; i < key->size(); ++i) block[i] = static_cast<unsigned char>((*key)[i]);
  }
  std::string inner_pad(kBlockBytes, '\0'), outer_pad(kBlockBytes, '\0');
  for (std::size_t i = 0; i < kBlockBytes; ++i) {
    inner_pad[i] = static_cast<char>(block[i] ^ 0x36);
    outer_pad[i] = static_cast<char>(block[i] ^ 0x5c);
  }
  Sha256 inner;
  inner.update(inner_pad);
  feed(inner, fields);
  const Digest inner_digest = inner.finish();
  Sha256 outer;
  outer.update(outer_pad);
  outer.update(view(inner_digest));
  return hex(outer.finish());
}

std::string key_check(const std::string& key) {
  return chain_hash(key, {"dpbudget-ledger-key-check"});
}

}  // namespace dpb::store
