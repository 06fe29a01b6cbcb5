#include "common/sha3.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace genvm {
namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "genvm: OpenSSL %s failed for SHA3-256\n", what);
  std::abort();
}

EVP_MD_CTX* new_ctx() {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx == nullptr) die("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex(ctx, EVP_sha3_256(), nullptr) != 1) die("EVP_DigestInit_ex");
  return ctx;
}

}  // namespace

Sha3_256::Sha3_256() : ctx_(new_ctx()) {}

Sha3_256::~Sha3_256() { EVP_MD_CTX_free(ctx_); }

Sha3_256::Sha3_256(Sha3_256&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

Sha3_256& Sha3_256::operator=(Sha3_256&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

Sha3_256& Sha3_256::update(std::span<const std::uint8_t> input) {
  // A moved-from hasher gets a fresh context rather than crashing.
  if (ctx_ == nullptr) ctx_ = new_ctx();
  if (!input.empty() && EVP_DigestUpdate(ctx_, input.data(), input.size()) != 1) {
    die("EVP_DigestUpdate");
  }
  return *this;
}

Sha3_256& Sha3_256::update(std::string_view input) {
  return update(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(input.data()),
                                              input.size()));
}

Sha3_256Digest Sha3_256::finalize() {
  if (ctx_ == nullptr) ctx_ = new_ctx();
  Sha3_256Digest d;
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_, d.data(), &len) != 1 || len != d.size()) {
    die("EVP_DigestFinal_ex");
  }
  if (EVP_DigestInit_ex(ctx_, EVP_sha3_256(), nullptr) != 1) die("EVP_DigestInit_ex");
  return d;
}

Sha3_256Digest sha3_256(std::span<const std::uint8_t> input) {
  Sha3_256Digest d;
  unsigned int len = 0;
  if (EVP_Digest(input.data(), input.size(), d.data(), &len, EVP_sha3_256(), nullptr) != 1 ||
      len != d.size()) {
    die("EVP_Digest");
  }
  return d;
}

Sha3_256Digest sha3_256(std::string_view input) {
  return sha3_256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(input.data()),
                                                input.size()));
}

}  // namespace genvm
