// SHA3-256 (FIPS 202) through OpenSSL's EVP interface: a one-shot function and an incremental
// hasher. The hasher owns one EVP_MD_CTX; it is movable, not copyable. OpenSSL can only fail
// here by running out of memory, which aborts the process with a message instead of returning
// an error nobody could act on.
//
//   auto d = genvm::sha3_256(bytes);
//   genvm::Sha3_256 h; h.update(a); h.update(b); auto d2 = h.finalize();  // d2 == sha3(a ++ b)
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

// OpenSSL's EVP_MD_CTX, declared so this header does not pull in <openssl/evp.h>.
struct evp_md_ctx_st;

namespace genvm {

inline constexpr std::size_t kSha3_256Len = 32;
using Sha3_256Digest = std::array<std::uint8_t, kSha3_256Len>;

Sha3_256Digest sha3_256(std::span<const std::uint8_t> input);
Sha3_256Digest sha3_256(std::string_view input);

class Sha3_256 {
 public:
  Sha3_256();
  ~Sha3_256();
  Sha3_256(Sha3_256&& other) noexcept;
  Sha3_256& operator=(Sha3_256&& other) noexcept;
  Sha3_256(const Sha3_256&) = delete;
  Sha3_256& operator=(const Sha3_256&) = delete;

  Sha3_256& update(std::span<const std::uint8_t> input);
  Sha3_256& update(std::string_view input);
  // Returns the digest and starts a new, empty message.
  Sha3_256Digest finalize();

 private:
  evp_md_ctx_st* ctx_ = nullptr;
};

}  // namespace genvm
