#include "executor/fees/rational.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace genvm::executor::fees {

namespace {

BigInt abs(const BigInt& v) { return v.is_negative() ? -v : v; }

BigInt gcd(BigInt a, BigInt b) {
  a = abs(a);
  b = abs(b);
  while (!b.is_zero()) {
    BigInt q, r;
    BigInt::div_mod(a, b, q, r);
    a = std::move(b);
    b = std::move(r);
  }
  return a;
}

}  // namespace

Rational Rational::integer(BigInt v) { return Rational(std::move(v), BigInt(1)); }

Rational Rational::fraction(BigInt num, BigInt den) {
  assert(!den.is_zero());
  if (den.is_negative()) {
    num = -num;
    den = -den;
  }
  if (num.is_zero()) return Rational();
  BigInt g = gcd(num, den);
  if (g != BigInt(1)) {
    BigInt q, r;
    BigInt::div_mod(num, g, q, r);
    num = std::move(q);
    BigInt::div_mod(den, g, q, r);
    den = std::move(q);
  }
  return Rational(std::move(num), std::move(den));
}

std::size_t Rational::bit_size() const { return std::max(num_.bit_length(), den_.bit_length()); }

Rational Rational::operator-() const { return Rational(-num_, den_); }

Rational operator+(const Rational& a, const Rational& b) {
  if (a.is_integer() && b.is_integer()) return Rational::integer(a.num_ + b.num_);
  return Rational::fraction(a.num_ * b.den_ + b.num_ * a.den_, a.den_ * b.den_);
}

Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }

Rational operator*(const Rational& a, const Rational& b) {
  if (a.is_integer() && b.is_integer()) return Rational::integer(a.num_ * b.num_);
  return Rational::fraction(a.num_ * b.num_, a.den_ * b.den_);
}

Rational operator/(const Rational& a, const Rational& b) {
  return Rational::fraction(a.num_ * b.den_, a.den_ * b.num_);
}

Rational Rational::reciprocal() const { return fraction(den_, num_); }

Rational Rational::floor() const {
  if (is_integer()) return *this;
  BigInt q, r;
  BigInt::div_mod(num_, den_, q, r);
  // Truncation rounds a negative fraction up; floor needs one less.
  if (num_.is_negative()) q = q - BigInt(1);
  return integer(std::move(q));
}

std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
  // Denominators are positive, so cross-multiplying keeps the order.
  return a.num_ * b.den_ <=> b.num_ * a.den_;
}

std::string Rational::to_string() const {
  if (is_integer()) return num_.to_decimal();
  return num_.to_decimal() + "/" + den_.to_decimal();
}

}  // namespace genvm::executor::fees
