// BigInt: an arbitrary-precision signed integer, for calldata and exact fee arithmetic.
//
// Sign + magnitude, the magnitude as little-endian 32-bit limbs with no zero limb at the top
// (zero is the empty magnitude and is never negative), so equal numbers have equal
// representations and operator== is structural. Supports decimal text (strict: -?(0|[1-9]\d*),
// no "-0", no "+", no leading zeros), conversion to and from int64/uint64 where the value fits,
// ordering, and exact +, -, * (Karatsuba above ~40 limbs, three-prime NTT from 1536 limbs) and
// truncating division (schoolbook: the fee expressions bound their operands). Decimal text
// converts both ways by divide and conquer over those products, O(n log^2 n): millions of
// digits take seconds (digit at a time: hours; Karatsuba-only products: minutes).
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace genvm {

class BigInt {
 public:
  using Limbs = std::vector<uint32_t>;

  BigInt() = default;  // zero
  template <std::signed_integral T>
  BigInt(T v) { set_int64(static_cast<int64_t>(v)); }  // NOLINT: implicit by design
  template <std::unsigned_integral T>
    requires(!std::same_as<T, bool>)
  BigInt(T v) { set_uint64(static_cast<uint64_t>(v)); }  // NOLINT: implicit by design

  // Takes a magnitude in any form (top zero limbs allowed) and normalizes it.
  static BigInt from_magnitude(bool negative, Limbs magnitude);

  // Strict decimal: "-?(0|[1-9][0-9]*)". Error code "invalid_integer".
  static Result<BigInt> parse_decimal(std::string_view text);
  std::string to_decimal() const;

  std::optional<int64_t> to_int64() const;
  std::optional<uint64_t> to_uint64() const;

  bool is_zero() const { return mag_.empty(); }
  bool is_negative() const { return neg_; }
  const Limbs& magnitude() const { return mag_; }
  // Number of significant bits of the magnitude (0 for zero).
  size_t bit_length() const;

  BigInt operator-() const;

  friend BigInt operator+(const BigInt& a, const BigInt& b);
  friend BigInt operator-(const BigInt& a, const BigInt& b);
  friend BigInt operator*(const BigInt& a, const BigInt& b);
  // a = quotient * b + remainder with the quotient truncated toward zero (so the remainder has
  // a's sign), as C++ integer division. b must not be zero.
  static void div_mod(const BigInt& a, const BigInt& b, BigInt& quotient, BigInt& remainder);

  friend bool operator==(const BigInt&, const BigInt&) = default;
  friend std::strong_ordering operator<=>(const BigInt& a, const BigInt& b);

 private:
  void set_int64(int64_t v);
  void set_uint64(uint64_t v);
  void normalize();

  bool neg_ = false;
  Limbs mag_;
};

// Limb operations BigInt has done on this thread so far: a work count, so a test can check how
// an algorithm's cost grows with the size of its input without timing it.
uint64_t bigint_limb_steps();

}  // namespace genvm
