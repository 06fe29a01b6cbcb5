// Rational: an exact fraction num/den over BigInt, always in lowest terms with den > 0, so equal
// numbers have equal representations (operator== is structural). The fee expressions compute
// in rationals: `/` is exact, `floor` brings a value back to an integer.
//
//   Rational a = Rational::integer(7), b = Rational::integer(2);
//   Rational q = a / b;            // 7/2 (the divisor must not be zero: check is_zero() first)
//   q.floor().to_string();         // "3"; q.to_string() is "7/2"
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/bigint.h"

namespace genvm::executor::fees {

class Rational {
 public:
  Rational() : den_(1) {}  // zero
  static Rational integer(BigInt v);
  // den must not be zero; the fraction is reduced and its sign moved to the numerator.
  static Rational fraction(BigInt num, BigInt den);

  const BigInt& numerator() const { return num_; }
  const BigInt& denominator() const { return den_; }
  bool is_zero() const { return num_.is_zero(); }
  bool is_integer() const { return den_ == BigInt(1); }
  bool is_negative() const { return num_.is_negative(); }
  // The larger of the numerator's and the denominator's bit lengths: what a size bound checks.
  std::size_t bit_size() const;

  Rational operator-() const;
  friend Rational operator+(const Rational& a, const Rational& b);
  friend Rational operator-(const Rational& a, const Rational& b);
  friend Rational operator*(const Rational& a, const Rational& b);
  friend Rational operator/(const Rational& a, const Rational& b);  // b != 0
  Rational reciprocal() const;                                       // *this != 0
  // The greatest integer not above this value (toward minus infinity).
  Rational floor() const;

  friend bool operator==(const Rational&, const Rational&) = default;
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b);

  // "n" for an integer, else "n/d" (the sign on n): the text `toString` renders.
  std::string to_string() const;

 private:
  Rational(BigInt num, BigInt den) : num_(std::move(num)), den_(std::move(den)) {}
  BigInt num_;
  BigInt den_;
};

}  // namespace genvm::executor::fees
