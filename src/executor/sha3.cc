#include "executor/sha3.h"

#include <cstdlib>

#include <openssl/evp.h>

namespace genvm::executor {

namespace {
EVP_MD_CTX* ctx(void* p) { return static_cast<EVP_MD_CTX*>(p); }
// OpenSSL only fails here on allocation failure or a missing digest: both mean the process
// cannot produce a correct hash at all, so it stops rather than report a wrong one.
void check(int ok) {
  if (ok != 1) std::abort();
}
}  // namespace

Sha3Hasher::Sha3Hasher() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) std::abort();
  check(EVP_DigestInit_ex(ctx(ctx_), EVP_sha3_256(), nullptr));
}

Sha3Hasher::~Sha3Hasher() { EVP_MD_CTX_free(ctx(ctx_)); }

Sha3Hasher::Sha3Hasher(const Sha3Hasher& other) : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) std::abort();
  check(EVP_MD_CTX_copy_ex(ctx(ctx_), ctx(other.ctx_)));
}

void Sha3Hasher::update(std::span<const std::uint8_t> data) {
  check(EVP_DigestUpdate(ctx(ctx_), data.data(), data.size()));
}

Digest32 Sha3Hasher::digest() const {
  Sha3Hasher copy(*this);
  Digest32 out{};
  unsigned int len = 0;
  check(EVP_DigestFinal_ex(ctx(copy.ctx_), out.data(), &len));
  return out;
}

Digest32 sha3_256(std::span<const std::uint8_t> data) {
  Sha3Hasher h;
  h.update(data);
  return h.digest();
}

}  // namespace genvm::executor
