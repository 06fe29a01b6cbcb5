// SHA3-256 (FIPS 202) through OpenSSL's EVP interface: a one-shot function and an incremental
// hasher. Below them, our own Keccak-f[1600] sponge (common/keccak.cc, no OpenSSL) for both
// SHA3-256 and Ethereum's Keccak-256 (the pre-FIPS padding). The hasher owns one EVP_MD_CTX; it is movable, not copyable. OpenSSL can only fail
// here by running out of memory, which aborts the process with a message instead of returning
// an error nobody could act on.
//
//   auto d = genvm::sha3_256(bytes);
//   genvm::Sha3_256 h; h.update(a); h.update(b); auto d2 = h.finalize();  // d2 == sha3(a ++ b)
//   auto k = genvm::keccak256(bytes);                                       // Ethereum's hash
#pragma once

#include <array>
#include <cstddef>
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

// SHA3 and the original Keccak share the sponge and differ only in the padding's domain bits.
enum class KeccakPadding : std::uint8_t { sha3, keccak };

// A streaming Keccak-f[1600] sponge with SHA3-256's rate and a 32-octet output. Ours rather than
// OpenSSL's for the executor: a run hashes a few kilobytes, and loading and initializing
// libcrypto cost more of a short run's wall time than all its hashing (docs/BENCHMARKS.md,
// ## Executor). Copyable; digest() leaves it usable.
//
//   KeccakSponge h; h.update(a); h.update(b); auto d = h.digest();   // == SHA3-256(a ++ b)
class KeccakSponge {
 public:
  explicit KeccakSponge(KeccakPadding padding = KeccakPadding::sha3) : padding_(padding) {}
  void update(std::span<const std::uint8_t> data);
  // The digest of everything so far; the sponge stays usable (finalizes a copy).
  Sha3_256Digest digest() const;

 private:
  static constexpr std::size_t kRate = 136;  // octets absorbed per permutation
  std::array<std::uint64_t, 25> state_{};
  std::array<std::uint8_t, kRate> block_{};
  std::size_t used_ = 0;  // octets of block_ filled
  KeccakPadding padding_;
};

// Keccak-256 as Ethereum uses it: addresses, transaction hashes, ABI selectors, call keys.
Sha3_256Digest keccak256(std::span<const std::uint8_t> input);
Sha3_256Digest keccak256(std::string_view input);

}  // namespace genvm
