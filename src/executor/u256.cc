#include "executor/u256.h"

namespace genvm::executor {

U256Le u256_add(const U256Le& a, const U256Le& b) {
  U256Le out{};
  unsigned carry = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    unsigned x = unsigned(a[i]) + unsigned(b[i]) + carry;
    out[i] = static_cast<std::uint8_t>(x);
    carry = x >> 8;
  }
  if (carry) out.fill(0xff);
  return out;
}

U256Le u256_sub(const U256Le& a, const U256Le& b) {
  if (u256_less(a, b)) return U256Le{};
  U256Le out{};
  int borrow = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    int x = int(a[i]) - int(b[i]) - borrow;
    borrow = x < 0;
    out[i] = static_cast<std::uint8_t>(x + (borrow ? 256 : 0));
  }
  return out;
}

bool u256_less(const U256Le& a, const U256Le& b) {
  for (std::size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

U256Le u256_from(const BigInt& v) {
  U256Le out{};
  const auto& limbs = v.magnitude();
  for (std::size_t l = 0; l < limbs.size() && l < 8; ++l) {
    for (int k = 0; k < 4; ++k) out[4 * l + k] = static_cast<std::uint8_t>(limbs[l] >> (8 * k));
  }
  return out;
}

BigInt u256_to_bigint(const U256Le& v) {
  BigInt::Limbs limbs(8, 0);
  for (std::size_t i = 0; i < v.size(); ++i) limbs[i / 4] |= std::uint32_t(v[i]) << (8 * (i % 4));
  return BigInt::from_magnitude(false, std::move(limbs));
}

}  // namespace genvm::executor
