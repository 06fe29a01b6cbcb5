#include "common/bigint.h"

#include <algorithm>
#include <cassert>

namespace genvm {

namespace {

constexpr uint32_t kDecimalChunk = 1000000000;  // 10^9: the largest power of ten in a limb
constexpr int kDecimalChunkDigits = 9;

// mag = mag * mul + add, for small mul/add.
void mul_add_small(BigInt::Limbs& mag, uint32_t mul, uint32_t add) {
  uint64_t carry = add;
  for (uint32_t& limb : mag) {
    uint64_t cur = static_cast<uint64_t>(limb) * mul + carry;
    limb = static_cast<uint32_t>(cur);
    carry = cur >> 32;
  }
  if (carry != 0) mag.push_back(static_cast<uint32_t>(carry));
}

// mag /= div (mag normalized afterwards); returns the remainder.
uint32_t div_small(BigInt::Limbs& mag, uint32_t div) {
  uint64_t rem = 0;
  for (size_t i = mag.size(); i-- > 0;) {
    uint64_t cur = (rem << 32) | mag[i];
    mag[i] = static_cast<uint32_t>(cur / div);
    rem = cur % div;
  }
  while (!mag.empty() && mag.back() == 0) mag.pop_back();
  return static_cast<uint32_t>(rem);
}

std::strong_ordering compare_magnitude(const BigInt::Limbs& a, const BigInt::Limbs& b) {
  if (a.size() != b.size()) return a.size() <=> b.size();
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] <=> b[i];
  }
  return std::strong_ordering::equal;
}


// |a| + |b|.
BigInt::Limbs add_magnitude(const BigInt::Limbs& a, const BigInt::Limbs& b) {
  const BigInt::Limbs& longer = a.size() >= b.size() ? a : b;
  const BigInt::Limbs& shorter = a.size() >= b.size() ? b : a;
  BigInt::Limbs out(longer.size() + 1, 0);
  uint64_t carry = 0;
  for (size_t i = 0; i < longer.size(); ++i) {
    uint64_t cur = static_cast<uint64_t>(longer[i]) + (i < shorter.size() ? shorter[i] : 0) + carry;
    out[i] = static_cast<uint32_t>(cur);
    carry = cur >> 32;
  }
  out[longer.size()] = static_cast<uint32_t>(carry);
  return out;
}

// |a| - |b| for |a| >= |b|.
BigInt::Limbs sub_magnitude(const BigInt::Limbs& a, const BigInt::Limbs& b) {
  BigInt::Limbs out(a.size(), 0);
  int64_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t cur = static_cast<int64_t>(a[i]) - (i < b.size() ? b[i] : 0) - borrow;
    borrow = cur < 0 ? 1 : 0;
    out[i] = static_cast<uint32_t>(cur + (borrow << 32));
  }
  return out;
}

BigInt::Limbs mul_magnitude(const BigInt::Limbs& a, const BigInt::Limbs& b) {
  if (a.empty() || b.empty()) return {};
  BigInt::Limbs out(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      uint64_t cur = static_cast<uint64_t>(a[i]) * b[j] + out[i + j] + carry;
      out[i + j] = static_cast<uint32_t>(cur);
      carry = cur >> 32;
    }
    out[i + b.size()] = static_cast<uint32_t>(carry);
  }
  return out;
}

int leading_zeros(uint32_t v) {
  int n = 0;
  while ((v & 0x80000000u) == 0) {
    v <<= 1;
    ++n;
  }
  return n;
}

// Knuth's algorithm D (TAOCP 4.3.1): u = q * v + r for normalized magnitudes, v non-empty.
void divmod_magnitude(const BigInt::Limbs& u_in, const BigInt::Limbs& v_in, BigInt::Limbs& q,
                      BigInt::Limbs& r) {
  if (compare_magnitude(u_in, v_in) == std::strong_ordering::less) {
    q.clear();
    r = u_in;
    return;
  }
  if (v_in.size() == 1) {
    q = u_in;
    uint32_t rem = div_small(q, v_in[0]);
    r.clear();
    if (rem != 0) r.push_back(rem);
    return;
  }
  // Shift so the divisor's top limb has its high bit set; the quotient estimate is then off by
  // at most two.
  const int s = leading_zeros(v_in.back());
  const size_t n = v_in.size();
  const size_t m = u_in.size() - n;
  BigInt::Limbs v(n), u(u_in.size() + 1);
  for (size_t i = n; i-- > 0;) {
    v[i] = (v_in[i] << s) | (s != 0 && i > 0 ? v_in[i - 1] >> (32 - s) : 0);
  }
  u[u_in.size()] = s != 0 ? u_in.back() >> (32 - s) : 0;
  for (size_t i = u_in.size(); i-- > 0;) {
    u[i] = (u_in[i] << s) | (s != 0 && i > 0 ? u_in[i - 1] >> (32 - s) : 0);
  }
  q.assign(m + 1, 0);
  constexpr uint64_t kBase = uint64_t{1} << 32;
  for (size_t j = m + 1; j-- > 0;) {
    uint64_t top = (static_cast<uint64_t>(u[j + n]) << 32) | u[j + n - 1];
    uint64_t qhat = top / v[n - 1];
    uint64_t rhat = top % v[n - 1];
    while (qhat >= kBase || qhat * v[n - 2] > ((rhat << 32) | u[j + n - 2])) {
      --qhat;
      rhat += v[n - 1];
      if (rhat >= kBase) break;
    }
    // u[j..j+n] -= qhat * v
    int64_t borrow = 0;
    uint64_t carry = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t p = qhat * v[i] + carry;
      carry = p >> 32;
      int64_t t = static_cast<int64_t>(u[i + j]) - borrow - static_cast<int64_t>(p & 0xffffffffu);
      u[i + j] = static_cast<uint32_t>(t);
      borrow = t < 0 ? 1 : 0;
    }
    int64_t t = static_cast<int64_t>(u[j + n]) - borrow - static_cast<int64_t>(carry);
    u[j + n] = static_cast<uint32_t>(t);
    if (t < 0) {  // qhat was one too large: add v back
      --qhat;
      uint64_t c = 0;
      for (size_t i = 0; i < n; ++i) {
        uint64_t sum = static_cast<uint64_t>(u[i + j]) + v[i] + c;
        u[i + j] = static_cast<uint32_t>(sum);
        c = sum >> 32;
      }
      u[j + n] = static_cast<uint32_t>(static_cast<uint64_t>(u[j + n]) + c);
    }
    q[j] = static_cast<uint32_t>(qhat);
  }
  r.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    r[i] = (u[i] >> s) | (s != 0 ? u[i + 1] << (32 - s) : 0);
  }
  while (!q.empty() && q.back() == 0) q.pop_back();
  while (!r.empty() && r.back() == 0) r.pop_back();
}

}  // namespace

BigInt BigInt::from_magnitude(bool negative, Limbs magnitude) {
  BigInt r;
  r.neg_ = negative;
  r.mag_ = std::move(magnitude);
  r.normalize();
  return r;
}

void BigInt::normalize() {
  while (!mag_.empty() && mag_.back() == 0) mag_.pop_back();
  if (mag_.empty()) neg_ = false;
}

void BigInt::set_uint64(uint64_t v) {
  neg_ = false;
  mag_.clear();
  if (v != 0) mag_.push_back(static_cast<uint32_t>(v));
  if ((v >> 32) != 0) mag_.push_back(static_cast<uint32_t>(v >> 32));
}

void BigInt::set_int64(int64_t v) {
  // Negate in unsigned arithmetic so INT64_MIN has no overflow.
  uint64_t abs = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  set_uint64(abs);
  neg_ = v < 0;
}

Result<BigInt> BigInt::parse_decimal(std::string_view text) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && digits[0] == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  if (digits.empty()) return make_error("invalid_integer", "no digits");
  for (char c : digits) {
    if (c < '0' || c > '9') return make_error("invalid_integer", "not a decimal digit");
  }
  if (digits.size() > 1 && digits[0] == '0') {
    return make_error("invalid_integer", "leading zero");
  }
  if (negative && digits == "0") return make_error("invalid_integer", "negative zero");
  Limbs mag;
  // The first chunk takes the odd digits so every later one is exactly 9 digits.
  size_t first = digits.size() % kDecimalChunkDigits;
  if (first == 0) first = kDecimalChunkDigits;
  size_t pos = 0;
  size_t len = first;
  while (pos < digits.size()) {
    uint32_t chunk = 0;
    for (size_t i = 0; i < len; ++i) chunk = chunk * 10 + static_cast<uint32_t>(digits[pos + i] - '0');
    uint32_t mul = 1;
    for (size_t i = 0; i < len; ++i) mul *= 10;
    mul_add_small(mag, mul, chunk);
    pos += len;
    len = kDecimalChunkDigits;
  }
  return from_magnitude(negative, std::move(mag));
}

std::string BigInt::to_decimal() const {
  if (mag_.empty()) return "0";
  Limbs mag = mag_;
  std::vector<uint32_t> chunks;  // least significant first
  while (!mag.empty()) chunks.push_back(div_small(mag, kDecimalChunk));
  std::string out = neg_ ? "-" : "";
  out += std::to_string(chunks.back());
  for (size_t i = chunks.size() - 1; i-- > 0;) {
    std::string part = std::to_string(chunks[i]);
    out.append(kDecimalChunkDigits - part.size(), '0');
    out += part;
  }
  return out;
}

std::optional<uint64_t> BigInt::to_uint64() const {
  if (neg_ || mag_.size() > 2) return std::nullopt;
  uint64_t v = 0;
  if (mag_.size() > 0) v = mag_[0];
  if (mag_.size() > 1) v |= static_cast<uint64_t>(mag_[1]) << 32;
  return v;
}

std::optional<int64_t> BigInt::to_int64() const {
  if (mag_.size() > 2) return std::nullopt;
  uint64_t abs = 0;
  if (mag_.size() > 0) abs = mag_[0];
  if (mag_.size() > 1) abs |= static_cast<uint64_t>(mag_[1]) << 32;
  constexpr uint64_t kMinAbs = uint64_t{1} << 63;  // |INT64_MIN|
  if (neg_) {
    if (abs > kMinAbs) return std::nullopt;
    return static_cast<int64_t>(0 - abs);  // two's complement wrap is exact here
  }
  if (abs >= kMinAbs) return std::nullopt;
  return static_cast<int64_t>(abs);
}

size_t BigInt::bit_length() const {
  if (mag_.empty()) return 0;
  uint32_t top = mag_.back();
  size_t bits = 0;
  while (top != 0) {
    ++bits;
    top >>= 1;
  }
  return (mag_.size() - 1) * 32 + bits;
}

BigInt BigInt::operator-() const {
  BigInt r = *this;
  if (!r.mag_.empty()) r.neg_ = !r.neg_;
  return r;
}

std::strong_ordering operator<=>(const BigInt& a, const BigInt& b) {
  if (a.neg_ != b.neg_) return a.neg_ ? std::strong_ordering::less : std::strong_ordering::greater;
  std::strong_ordering m = compare_magnitude(a.mag_, b.mag_);
  if (a.neg_) return 0 <=> m;  // larger magnitude is smaller when negative
  return m;
}

BigInt operator+(const BigInt& a, const BigInt& b) {
  if (a.neg_ == b.neg_) return BigInt::from_magnitude(a.neg_, add_magnitude(a.mag_, b.mag_));
  // Opposite signs: the larger magnitude keeps its sign.
  if (compare_magnitude(a.mag_, b.mag_) != std::strong_ordering::less) {
    return BigInt::from_magnitude(a.neg_, sub_magnitude(a.mag_, b.mag_));
  }
  return BigInt::from_magnitude(b.neg_, sub_magnitude(b.mag_, a.mag_));
}

BigInt operator-(const BigInt& a, const BigInt& b) { return a + (-b); }

BigInt operator*(const BigInt& a, const BigInt& b) {
  return BigInt::from_magnitude(a.neg_ != b.neg_, mul_magnitude(a.mag_, b.mag_));
}

void BigInt::div_mod(const BigInt& a, const BigInt& b, BigInt& quotient, BigInt& remainder) {
  assert(!b.is_zero());
  Limbs q, r;
  divmod_magnitude(a.mag_, b.mag_, q, r);
  quotient = from_magnitude(a.neg_ != b.neg_, std::move(q));
  remainder = from_magnitude(a.neg_, std::move(r));
}

}  // namespace genvm
