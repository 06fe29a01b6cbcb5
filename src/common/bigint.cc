#include "common/bigint.h"

#include <algorithm>
#include <cassert>

namespace genvm {

namespace {

// Limb operations done by this thread (bigint_limb_steps): every inner loop adds its length.
thread_local uint64_t t_limb_steps = 0;

constexpr uint32_t kDecimalChunk = 1000000000;  // 10^9: the largest power of ten in a limb
constexpr int kDecimalChunkDigits = 9;

// mag = mag * mul + add, for small mul/add.
void mul_add_small(BigInt::Limbs& mag, uint32_t mul, uint32_t add) {
  t_limb_steps += mag.size();
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
  t_limb_steps += mag.size();
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

// Number-theoretic transform products, for the largest operands: a * b as a cyclic convolution
// of the limbs, computed modulo three NTT primes and put together by the Chinese remainder
// theorem. Each coefficient is below min(na, nb) * kBase^2 <= 2^25 * 2^64 = 2^89, and the
// primes' product is above 2^92, so the residues determine it exactly. O(n log n) against
// Karatsuba's O(n^1.585): a 16 M-digit decimal parse goes from minutes to seconds.
constexpr size_t kNttMinLimbs = 1536;          // the shorter operand; below it Karatsuba wins
constexpr unsigned kNttMaxLog = 25;             // the third prime's 2-adic order
constexpr uint64_t kNttPrimes[3] = {2013265921, 1811939329, 2113929217};  // c * 2^k + 1
constexpr uint64_t kNttRoots[3] = {31, 13, 5};  // primitive roots

uint64_t pow_mod(uint64_t b, uint64_t e, uint64_t p) {
  uint64_t r = 1;
  b %= p;
  for (; e != 0; e >>= 1) {
    if (e & 1) r = r * b % p;
    b = b * b % p;
  }
  return r;
}

// In-place transform of length 2^log (bit-reversed input order handled here), modulo the
// prime kPrimes[I]; `inverse` runs the inverse transform including the 1/n scaling.
template <int I>
void ntt(std::vector<uint32_t>& a, unsigned log, bool inverse) {
  constexpr uint64_t p = kNttPrimes[I];
  const size_t n = size_t{1} << log;
  t_limb_steps += n * log;
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  std::vector<uint32_t> w(n / 2 + 1);
  for (size_t len = 2; len <= n; len <<= 1) {
    uint64_t root = pow_mod(kNttRoots[I], (p - 1) / len, p);
    if (inverse) root = pow_mod(root, p - 2, p);
    const size_t half = len / 2;
    w[0] = 1;
    for (size_t k = 1; k < half; ++k) w[k] = static_cast<uint32_t>(w[k - 1] * root % p);
    for (size_t i = 0; i < n; i += len) {
      for (size_t k = 0; k < half; ++k) {
        uint64_t u = a[i + k];
        uint64_t v = a[i + k + half] * uint64_t{w[k]} % p;
        a[i + k] = static_cast<uint32_t>(u + v >= p ? u + v - p : u + v);
        a[i + k + half] = static_cast<uint32_t>(u >= v ? u - v : u + p - v);
      }
    }
  }
  if (inverse) {
    const uint64_t n_inv = pow_mod(n % p, p - 2, p);
    for (uint32_t& x : a) x = static_cast<uint32_t>(x * n_inv % p);
  }
}

// The convolution of a and b modulo kPrimes[I], length 2^log.
template <int I>
std::vector<uint32_t> convolve_mod(const uint32_t* a, size_t na, const uint32_t* b, size_t nb, unsigned log) {
  constexpr uint64_t p = kNttPrimes[I];
  std::vector<uint32_t> fa(size_t{1} << log, 0), fb(size_t{1} << log, 0);
  for (size_t i = 0; i < na; ++i) fa[i] = static_cast<uint32_t>(a[i] % p);
  for (size_t i = 0; i < nb; ++i) fb[i] = static_cast<uint32_t>(b[i] % p);
  ntt<I>(fa, log, false);
  ntt<I>(fb, log, false);
  for (size_t i = 0; i < fa.size(); ++i) fa[i] = static_cast<uint32_t>(uint64_t{fa[i]} * fb[i] % p);
  ntt<I>(fa, log, true);
  return fa;
}

// out[0 .. na+nb) = a * b in base kBase (out zeroed by the caller); na + nb <= 2^kNttMaxLog.
template <uint64_t kBase>
void mul_ntt(const uint32_t* a, size_t na, const uint32_t* b, size_t nb, uint32_t* out) {
  unsigned log = 0;
  while ((size_t{1} << log) < na + nb - 1) ++log;
  std::vector<uint32_t> r0 = convolve_mod<0>(a, na, b, nb, log);
  std::vector<uint32_t> r1 = convolve_mod<1>(a, na, b, nb, log);
  std::vector<uint32_t> r2 = convolve_mod<2>(a, na, b, nb, log);
  using u128 = unsigned __int128;
  constexpr uint64_t p0 = kNttPrimes[0], p1 = kNttPrimes[1], p2 = kNttPrimes[2];
  const uint64_t inv_p0_mod_p1 = pow_mod(p0, p1 - 2, p1);
  const uint64_t p01_mod_p2 = (p0 % p2) * (p1 % p2) % p2;
  const uint64_t inv_p01_mod_p2 = pow_mod(p01_mod_p2, p2 - 2, p2);
  const u128 p01 = u128{p0} * p1;
  u128 carry = 0;
  const size_t n = na + nb;
  for (size_t k = 0; k < n; ++k) {
    u128 x = 0;
    if (k < na + nb - 1) {
      // Garner: x = r0 + p0 * t1 + p0 p1 * t2, each t below its prime.
      uint64_t t1 = (r1[k] + p1 - r0[k] % p1) % p1 * inv_p0_mod_p1 % p1;
      u128 x01 = u128{r0[k]} + u128{p0} * t1;
      uint64_t x01_mod_p2 = static_cast<uint64_t>(x01 % p2);
      uint64_t t2 = (r2[k] + p2 - x01_mod_p2) % p2 * inv_p01_mod_p2 % p2;
      x = x01 + p01 * t2;
    }
    carry += x;
    out[k] = static_cast<uint32_t>(carry % kBase);
    carry /= kBase;
  }
  t_limb_steps += n;
}

// Multiplication in a limb base kBase (2^32 for magnitudes, 10^9 for decimal text), so the
// decimal conversions below can use the same products as the binary one: schoolbook below
// kKaratsubaLimbs, Karatsuba above (O(n^1.585) instead of O(n^2)), NTT from kNttMinLimbs.
// Limbs little-endian, each < kBase; results may carry zero limbs at the top (callers trim).
constexpr size_t kKaratsubaLimbs = 40;

template <uint64_t kBase>
struct LimbArith {
  using Limbs = BigInt::Limbs;

  static void trim(Limbs& x) {
    while (!x.empty() && x.back() == 0) x.pop_back();
  }

  // out[0 .. na+nb) = a * b; out zeroed by the caller.
  static void mul_school(const uint32_t* a, size_t na, const uint32_t* b, size_t nb, uint32_t* out) {
    t_limb_steps += na * nb;
    for (size_t i = 0; i < na; ++i) {
      uint64_t carry = 0;
      const uint64_t ai = a[i];
      if (ai == 0) continue;
      for (size_t j = 0; j < nb; ++j) {
        // < kBase^2 + 2 kBase <= 2^64 for both bases.
        uint64_t cur = ai * b[j] + out[i + j] + carry;
        out[i + j] = static_cast<uint32_t>(cur % kBase);
        carry = cur / kBase;
      }
      size_t k = i + nb;
      while (carry != 0) {
        uint64_t cur = out[k] + carry;
        out[k++] = static_cast<uint32_t>(cur % kBase);
        carry = cur / kBase;
      }
    }
  }

  // out[shift ..] += x; out is long enough to hold the (known) result.
  static void add_at(Limbs& out, const Limbs& x, size_t shift) {
    t_limb_steps += x.size();
    uint64_t carry = 0;
    size_t i = 0;
    for (; i < x.size(); ++i) {
      uint64_t cur = uint64_t{out[shift + i]} + x[i] + carry;
      out[shift + i] = static_cast<uint32_t>(cur % kBase);
      carry = cur / kBase;
    }
    for (size_t k = shift + i; carry != 0; ++k) {
      uint64_t cur = uint64_t{out[k]} + carry;
      out[k] = static_cast<uint32_t>(cur % kBase);
      carry = cur / kBase;
    }
  }

  // x -= y for x >= y.
  static void sub_in_place(Limbs& x, const Limbs& y) {
    t_limb_steps += y.size();
    int64_t borrow = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      int64_t cur = int64_t{x[i]} - (i < y.size() ? int64_t{y[i]} : 0) - borrow;
      borrow = cur < 0 ? 1 : 0;
      x[i] = static_cast<uint32_t>(cur + borrow * static_cast<int64_t>(kBase));
      if (i >= y.size() && borrow == 0) break;
    }
  }

  static Limbs sum(const uint32_t* a, size_t na, const uint32_t* b, size_t nb) {
    Limbs out(std::max(na, nb) + 1, 0);
    std::copy(a, a + na, out.begin());
    add_at(out, Limbs(b, b + nb), 0);
    return out;
  }

  static Limbs mul(const uint32_t* a, size_t na, const uint32_t* b, size_t nb) {
    while (na > 0 && a[na - 1] == 0) --na;
    while (nb > 0 && b[nb - 1] == 0) --nb;
    if (na < nb) {
      std::swap(a, b);
      std::swap(na, nb);
    }
    if (nb == 0) return {};
    Limbs out(na + nb, 0);
    if (nb < kKaratsubaLimbs) {
      mul_school(a, na, b, nb, out.data());
      return out;
    }
    if (nb >= kNttMinLimbs && na + nb <= (size_t{1} << kNttMaxLog) && 4 * nb > na) {
      mul_ntt<kBase>(a, na, b, nb, out.data());
      return out;
    }
    if (2 * nb <= na) {  // lopsided: b times each nb-limb slice of a
      for (size_t at = 0; at < na; at += nb) {
        Limbs part = mul(a + at, std::min(nb, na - at), b, nb);
        trim(part);
        add_at(out, part, at);
      }
      return out;
    }
    // a = a1 B^m + a0, b = b1 B^m + b0; a*b = z2 B^2m + ((a0+a1)(b0+b1) - z0 - z2) B^m + z0.
    const size_t m = na / 2;
    Limbs z0 = mul(a, m, b, std::min(m, nb));
    Limbs z2 = mul(a + m, na - m, b + std::min(m, nb), nb - std::min(m, nb));
    Limbs sa = sum(a, m, a + m, na - m);
    Limbs sb = sum(b, std::min(m, nb), b + std::min(m, nb), nb - std::min(m, nb));
    Limbs z1 = mul(sa.data(), sa.size(), sb.data(), sb.size());
    trim(z0);
    trim(z2);
    sub_in_place(z1, z0);
    sub_in_place(z1, z2);
    trim(z1);
    add_at(out, z0, 0);
    add_at(out, z1, m);
    add_at(out, z2, 2 * m);
    return out;
  }

  static Limbs mul(const Limbs& a, const Limbs& b) {
    Limbs out = mul(a.data(), a.size(), b.data(), b.size());
    trim(out);
    return out;
  }
};

using Binary = LimbArith<uint64_t{1} << 32>;
using Decimal = LimbArith<kDecimalChunk>;

BigInt::Limbs mul_magnitude(const BigInt::Limbs& a, const BigInt::Limbs& b) { return Binary::mul(a, b); }

// Decimal conversion, divide and conquer: a number of n limbs in one base is hi * P + lo with
// P = (other base's view of) B^(2^j) for the largest 2^j < n; both halves convert recursively
// and one Karatsuba product joins them, so the whole costs O(M(n) log n), not O(n^2). The powers
// P are squared up once per conversion. Below kDirectLimbs the quadratic loops are faster.
constexpr size_t kDirectLimbs = 64;

// powers[j] = from_base^(2^j) written in Arith's base, for 2^j < n.
template <typename Arith>
std::vector<BigInt::Limbs> squared_powers(BigInt::Limbs first, size_t n) {
  std::vector<BigInt::Limbs> powers{std::move(first)};
  for (size_t span = 1; span * 2 < n; span *= 2) powers.push_back(Arith::mul(powers.back(), powers.back()));
  return powers;
}

// mag (base 2^32) as base-10^9 limbs.
BigInt::Limbs binary_to_decimal(const uint32_t* mag, size_t n, const std::vector<BigInt::Limbs>& powers) {
  while (n > 0 && mag[n - 1] == 0) --n;
  if (n <= kDirectLimbs) {
    BigInt::Limbs rest(mag, mag + n), out;
    while (!rest.empty()) out.push_back(div_small(rest, kDecimalChunk));
    return out;
  }
  size_t j = 0;
  while ((size_t{2} << j) < n) ++j;
  const size_t half = size_t{1} << j;
  BigInt::Limbs hi = binary_to_decimal(mag + half, n - half, powers);
  BigInt::Limbs lo = binary_to_decimal(mag, half, powers);
  BigInt::Limbs out = Decimal::mul(hi, powers[j]);
  out.resize(std::max(out.size(), lo.size()) + 1, 0);
  Decimal::add_at(out, lo, 0);
  Decimal::trim(out);
  return out;
}

// chunks (base 10^9) as base-2^32 limbs.
BigInt::Limbs decimal_to_binary(const uint32_t* chunks, size_t n, const std::vector<BigInt::Limbs>& powers) {
  while (n > 0 && chunks[n - 1] == 0) --n;
  if (n <= kDirectLimbs) {
    BigInt::Limbs out;
    for (size_t i = n; i-- > 0;) mul_add_small(out, kDecimalChunk, chunks[i]);
    return out;
  }
  size_t j = 0;
  while ((size_t{2} << j) < n) ++j;
  const size_t half = size_t{1} << j;
  BigInt::Limbs hi = decimal_to_binary(chunks + half, n - half, powers);
  BigInt::Limbs lo = decimal_to_binary(chunks, half, powers);
  BigInt::Limbs out = Binary::mul(hi, powers[j]);
  out.resize(std::max(out.size(), lo.size()) + 1, 0);
  Binary::add_at(out, lo, 0);
  Binary::trim(out);
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

uint64_t bigint_limb_steps() { return t_limb_steps; }

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
  // Base-10^9 chunks, least significant first (the last, most significant, may be short).
  Limbs chunks((digits.size() + kDecimalChunkDigits - 1) / kDecimalChunkDigits);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const size_t end = digits.size() - i * kDecimalChunkDigits;
    const size_t begin = end >= size_t(kDecimalChunkDigits) ? end - kDecimalChunkDigits : 0;
    uint32_t chunk = 0;
    for (size_t k = begin; k < end; ++k) chunk = chunk * 10 + static_cast<uint32_t>(digits[k] - '0');
    chunks[i] = chunk;
  }
  auto powers = squared_powers<Binary>({kDecimalChunk}, chunks.size());
  Limbs mag = decimal_to_binary(chunks.data(), chunks.size(), powers);
  return from_magnitude(negative, std::move(mag));
}

std::string BigInt::to_decimal() const {
  if (mag_.empty()) return "0";
  // 2^32 in base 10^9 is 4 * 10^9 + 294967296.
  auto powers = squared_powers<Decimal>({294967296u, 4u}, mag_.size());
  Limbs chunks = binary_to_decimal(mag_.data(), mag_.size(), powers);  // least significant first
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
