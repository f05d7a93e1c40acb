// The ledger chain's hash (src/store/chain_hash.cpp): SHA-256 and
// HMAC-SHA-256 of length-prefixed fields against values computed
// independently with Python's hashlib and hmac (hashlib.sha256(m),
// hmac.new(k, m, hashlib.sha256) with m the fields written as LENGTH ':'
// BYTES), at the lengths where SHA-256's padding changes (55, 56, 63, 64, 65
// bytes), across many blocks, and with keys shorter than, equal to and
// longer than the 64-byte block (RFC 2104 hashes the last first). The empty
// message gives FIPS 180-4's SHA-256 of "".
#include "store/chain_hash.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using dpb::store::chain_hash;
using dpb::store::key_check;

TEST_CASE("chain hash: SHA-256 of the fields as Python's hashlib computes it") {
  struct Case {
    std::vector<std::string> fields;
    const char* sha256;
  };
  const std::vector<Case> cases = {
      {{}, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {{""}, "ba768b331fd86cec803be04e56ab2b3d4c0e98ef4ee4fcd4e72ad7cce61a1d1f"},
      {{"abc"}, "aab5f9ae99b2e38fb462025c8f72f570c9c811705d2a4277dc855d7fa293fe97"},
      {{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"},
       "5e5e9f6efa5572b3856ccd4bcb085c8d3c1b23d9e2b83da7d90a8414b2d4e7e7"},
      {{std::string(52, 'a')}, "985df5b7dafaecd425298149d0a457b073e182175149c6472b632fa0b0434af2"},
      {{std::string(53, 'a')}, "f8b326776014b476ac9dcd2d89aaefab25f6d65bbe2870535358f520f79e3573"},
      {{std::string(60, 'a')}, "196c377742c31bb28a34713527717ac21a374dd2e7b207c8e39f3654d44d349f"},
      {{std::string(61, 'a')}, "6e6c364ef980b791fef500ba7030f0f99c152e0c6477c20a0457a999abdccc78"},
      {{std::string(62, 'a')}, "a29983cf07f035bf0aa8267749afe1b5c25b81f70a59a4b9eb92a99841492777"},
      {{std::string(1000, 'x'), std::string(7, 'y')},
       "e0bb91fd5945c7432c1eb29a5f37a78a1e77aaf67e789e772c0fef061e75945e"},
      {{std::string(1000000, 'a')},
       "de96d59bca99d95a073b6dbd2815e322916f4ce4b54908c87011ee51831eafca"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.fields.size());
    CHECK(chain_hash(std::nullopt, c.fields) == c.sha256);
  }
}

TEST_CASE("chain hash: HMAC-SHA-256 under keys shorter than, equal to and longer than a block") {
  const std::vector<std::string> keys = {"0123456789abcdef", std::string(64, 'k'),
                                         std::string(131, '\xaa'), "keykeykey"};
  const std::vector<std::vector<std::string>> messages = {
      {"dpbudget-ledger-key-check"}, {std::string(61, 'a')}, {std::string(1000, 'x'), ""}};
  // expected[key][message], from Python's hmac.
  const char* expected[4][3] = {
      {"e4a60cb5f728e5db7ad2e39b4807c25ab2b2783cb938bb08333ba02a012e9aa8",
       "587255efe40704b8f1c2b1e5cbd7e95563899f71a58918e6562015e4f5a72bb9",
       "428a37c116e4b1b8cf395ea9f18da6e726a0f94a36c20fc297d5aef2664f51c0"},
      {"e70da232cd0263ef00fe594af236000d40ddd46caf993655e1b0ff3297534322",
       "967894f1d98f6fff624515f107786f139f097b12f24be382104aa3c784639cb5",
       "64a7bd5a76e7a3bac9ca0e9723111e5e30a401310976fd9bc7260955c85263bf"},
      {"bf0c1aa6b3d9ee237da1d0e02e64ba5ffa2445d84ee5cf3534ac9572932806d7",
       "fb066bc75106c191b441d4326bdf08e4967bf65b30897c0888b6da423f7176d3",
       "e1b40492ddd37121201a1919cd2f6fd105a84c60b46b6babd952b119c7b967ae"},
      {"f764ff3f3f2337b9039dbcb759dc7785d258b0516d37408e2afb2a8ffff580c6",
       "54cdf0edcad98c4dfff023e9f5696b9b1190184c079707cd342632b34bdf9673",
       "e77b92b4584ad142a3eda7acffb5eadf20be0547fd74f34d450ba33b36c9e130"},
  };
  for (std::size_t k = 0; k < keys.size(); ++k)
    for (std::size_t m = 0; m < messages.size(); ++m) {
      CAPTURE(k);
      CAPTURE(m);
      CHECK(chain_hash(keys[k], messages[m]) == expected[k][m]);
    }
  CHECK(key_check(keys[0]) == expected[0][0]);
}
