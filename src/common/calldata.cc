// Binary calldata: the canonical encoder and the strict, non-recursive decoder.
#include <cstring>
#include <limits>

#include "common/calldata.h"

namespace genvm::calldata {

namespace {

// Wire type tags: the low 3 bits of each value's leading ULEB128 number.
enum WireType : uint8_t {
  kTypeAtom = 0,
  kTypePosInt = 1,
  kTypeNegInt = 2,
  kTypeBytes = 3,
  kTypeString = 4,
  kTypeArray = 5,
  kTypeMap = 6,
  kTypeReserved = 7,
};
constexpr int kTypeBits = 3;
enum Atom : uint8_t { kAtomNull = 0, kAtomFalse = 1, kAtomTrue = 2, kAtomAddress = 3 };

// The spec's lengths are 32-bit; anything larger is rejected before it is compared with the
// input, so no length arithmetic can overflow.
constexpr uint64_t kMaxLength = std::numeric_limits<uint32_t>::max();

// ---------------------------------------------------------------------------------- encoding

void write_uleb(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void write_header(std::vector<uint8_t>& out, uint64_t payload, uint8_t type) {
  // payload < 2^32 for every length; only integers can be wider, and those take write_big_header.
  write_uleb(out, (payload << kTypeBits) | type);
}

// ULEB128 of (payload << 3 | type) for a payload of any size.
void write_big_header(std::vector<uint8_t>& out, const BigInt::Limbs& payload, uint8_t type) {
  // Shift into 64-bit words first so 7-bit groups can be read across limb boundaries.
  std::vector<uint64_t> words(payload.size() + 1, 0);
  uint64_t carry = type;
  for (size_t i = 0; i < payload.size(); ++i) {
    uint64_t cur = (static_cast<uint64_t>(payload[i]) << kTypeBits) | carry;
    words[i] = cur & 0xffffffffu;
    carry = cur >> 32;
  }
  words[payload.size()] = carry;
  size_t bits = words.size() * 32;
  while (bits > 0 && ((words[(bits - 1) / 32] >> ((bits - 1) % 32)) & 1) == 0) --bits;
  if (bits == 0) bits = 1;
  for (size_t at = 0; at < bits; at += 7) {
    uint64_t group = 0;
    for (size_t b = 0; b < 7 && at + b < bits; ++b) {
      size_t bit = at + b;
      group |= ((words[bit / 32] >> (bit % 32)) & 1) << b;
    }
    if (at + 7 < bits) group |= 0x80;
    out.push_back(static_cast<uint8_t>(group));
  }
}

void write_int(std::vector<uint8_t>& out, const BigInt& v) {
  // Negative n is sent as |n| - 1 so that every integer has exactly one encoding.
  BigInt::Limbs payload = v.magnitude();
  uint8_t type = kTypePosInt;
  if (v.is_negative()) {
    type = kTypeNegInt;
    for (uint32_t& limb : payload) {  // magnitude >= 1, so the borrow stops inside
      if (limb-- != 0) break;
    }
    while (!payload.empty() && payload.back() == 0) payload.pop_back();
  }
  if (payload.size() <= 1 || (payload.size() == 2 && (payload[1] >> (32 - kTypeBits)) == 0)) {
    uint64_t small = payload.empty() ? 0 : payload[0];
    if (payload.size() == 2) small |= static_cast<uint64_t>(payload[1]) << 32;
    write_header(out, small, type);
  } else {
    write_big_header(out, payload, type);
  }
}

void write_raw(std::vector<uint8_t>& out, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + size);
}

// ---------------------------------------------------------------------------------- decoding

struct Header {
  uint8_t type = 0;
  bool wide = false;       // payload did not fit in 64 bits (only possible for integers)
  uint64_t payload = 0;    // valid when !wide
  BigInt::Limbs big;       // valid when wide, or always for integers read by read_int_payload
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }

  Error error(const char* code, const std::string& what, size_t at) const {
    return make_error(code, what + " at byte offset " + std::to_string(at));
  }

  // Reads one ULEB128 number; short ones go to *small, others (over 63 bits) to *big with
  // *wide set. Non-minimal forms (a last group of zero after the first) are rejected.
  Status read_uleb(uint64_t* small, BigInt::Limbs* big, bool* wide) {
    size_t start = pos_;
    size_t end = pos_;
    while (end < in_.size() && (in_[end] & 0x80) != 0) ++end;
    if (end == in_.size()) return error("truncated", "unterminated ULEB128 number", start);
    size_t count = end - start + 1;
    if (count > 1 && in_[end] == 0) {
      return error("non_minimal_uleb128", "ULEB128 number with trailing zero groups", start);
    }
    pos_ = end + 1;
    *wide = count > 9;  // 9 groups = 63 bits
    if (!*wide) {
      uint64_t v = 0;
      for (size_t i = 0; i < count; ++i) v |= static_cast<uint64_t>(in_[start + i] & 0x7f) << (7 * i);
      *small = v;
      return {};
    }
    big->assign((count * 7 + 31) / 32, 0);
    for (size_t i = 0; i < count; ++i) {
      uint64_t group = in_[start + i] & 0x7f;
      size_t bit = i * 7;
      (*big)[bit / 32] |= static_cast<uint32_t>(group << (bit % 32));
      if (bit % 32 > 25 && bit / 32 + 1 < big->size()) {
        (*big)[bit / 32 + 1] |= static_cast<uint32_t>(group >> (32 - bit % 32));
      }
    }
    return {};
  }

  Status read_header(Header* h) {
    uint64_t small = 0;
    bool wide = false;
    if (Status s = read_uleb(&small, &h->big, &wide); !s) return s;
    if (!wide) {
      h->type = static_cast<uint8_t>(small & 7);
      h->payload = small >> kTypeBits;
      h->wide = false;
      return {};
    }
    // Shift the wide number right by 3: type bits out, payload stays in h->big.
    BigInt::Limbs& b = h->big;
    h->type = static_cast<uint8_t>(b[0] & 7);
    for (size_t i = 0; i < b.size(); ++i) {
      uint32_t next = i + 1 < b.size() ? b[i + 1] : 0;
      b[i] = (b[i] >> kTypeBits) | (next << (32 - kTypeBits));
    }
    while (!b.empty() && b.back() == 0) b.pop_back();
    h->wide = b.size() > 2;
    if (!h->wide) {
      h->payload = b.empty() ? 0 : b[0];
      if (b.size() == 2) h->payload |= static_cast<uint64_t>(b[1]) << 32;
    }
    return {};
  }

  // A 32-bit length that the remaining input can hold at min_unit bytes per unit.
  Status check_length(const Header& h, size_t start, uint64_t min_unit, uint64_t* len) {
    if (h.wide || h.payload > kMaxLength) {
      return error("length_too_large", "length over 32 bits", start);
    }
    if (h.payload > remaining() / min_unit) {
      return error("truncated", "length " + std::to_string(h.payload) + " exceeds the " +
                                    std::to_string(remaining()) + " remaining bytes", start);
    }
    *len = h.payload;
    return {};
  }

  Status read_utf8(size_t len, std::string* out) {
    auto text = std::string_view(reinterpret_cast<const char*>(in_.data() + pos_), len);
    size_t bad = 0;
    if (!is_valid_utf8(text, &bad)) return error("invalid_utf8", "invalid UTF-8", pos_ + bad);
    if (out != nullptr) out->assign(text);
    pos_ += len;
    return {};
  }

  // A map key: ULEB128 length (no type tag), UTF-8 bytes, strictly after *prev (if any).
  Status read_key(std::string* out, const std::string* prev) {
    size_t start = pos_;
    uint64_t len = 0;
    BigInt::Limbs big;
    bool wide = false;
    if (Status s = read_uleb(&len, &big, &wide); !s) return s;
    if (wide || len > kMaxLength) return error("length_too_large", "key length over 32 bits", start);
    if (len > remaining()) {
      return error("truncated", "key length " + std::to_string(len) + " exceeds the " +
                                    std::to_string(remaining()) + " remaining bytes", start);
    }
    if (Status s = read_utf8(len, out); !s) return s;
    if (prev != nullptr) {
      int c = out->compare(*prev);  // char_traits<char>::compare orders as unsigned bytes
      if (c == 0) return error("duplicate_map_key", "duplicate map key", start);
      if (c < 0) return error("unsorted_map_keys", "map key sorts before the previous key", start);
    }
    return {};
  }

  void skip(size_t len) { pos_ += len; }

  void read_bytes(size_t len, Bytes* out) {
    out->assign(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
                in_.begin() + static_cast<std::ptrdiff_t>(pos_ + len));
    pos_ += len;
  }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

// A container being filled; the decoder keeps these on an explicit stack instead of recursing.
struct Frame {
  Value container;       // null when only validating
  bool is_map = false;
  uint64_t remaining;    // elements still to read
  std::string key;       // maps: the key of the element being read
  std::string prev_key;  // maps, when only validating: the key before it
};

// Host memory of one heap block as glibc's malloc takes it on 64-bit hosts: the request plus an
// 8-byte header, rounded up to 16, at least 32.
uint64_t heap_block(uint64_t n) { return std::max<uint64_t>(32, (n + 8 + 15) & ~uint64_t{15}); }

// A std::string of len bytes assigned into an empty one: inline up to 15 bytes (libstdc++'s
// short-string buffer), otherwise a block of at least 31 (the growth policy doubles the inline
// capacity of 15 first).
uint64_t string_heap(uint64_t len) { return len <= 15 ? 0 : heap_block(std::max<uint64_t>(len, 30) + 1); }

// A std::map node: the tree links (colour and three pointers) and the (key, value) pair.
constexpr uint64_t kMapNodeBytes = 4 * sizeof(void*) + sizeof(Value::Map::value_type);

// The footprint of what a decode holds, against DecodeLimits::max_footprint.
class Footprint {
 public:
  explicit Footprint(uint64_t max) : max_(max) {}
  // False (nothing added) when `bytes` more would pass the limit.
  bool add(uint64_t bytes) {
    if (bytes > max_ - total_) return false;
    total_ += bytes;
    return true;
  }
  uint64_t total() const { return total_; }

 private:
  uint64_t max_;
  uint64_t total_ = 0;
};

}  // namespace

// ------------------------------------------------------------------------------------ public

const Value* Value::find(std::string_view key) const {
  const Map* m = if_map();
  if (m == nullptr) return nullptr;
  auto it = m->find(key);
  return it == m->end() ? nullptr : &it->second;
}

void encode_to(const Value& value, std::vector<uint8_t>& out) {
  switch (value.kind()) {
    case Value::Kind::kNull:
      write_header(out, kAtomNull, kTypeAtom);
      return;
    case Value::Kind::kBool:
      write_header(out, value.as_bool() ? kAtomTrue : kAtomFalse, kTypeAtom);
      return;
    case Value::Kind::kAddress:
      write_header(out, kAtomAddress, kTypeAtom);
      write_raw(out, value.as_address().bytes.data(), kAddressSize);
      return;
    case Value::Kind::kInt:
      write_int(out, value.as_int());
      return;
    case Value::Kind::kBytes: {
      const Bytes& b = value.as_bytes();
      write_header(out, b.size(), kTypeBytes);
      write_raw(out, b.data(), b.size());
      return;
    }
    case Value::Kind::kString: {
      const std::string& s = value.as_string();
      write_header(out, s.size(), kTypeString);
      write_raw(out, s.data(), s.size());
      return;
    }
    case Value::Kind::kArray: {
      const Value::Array& a = value.as_array();
      write_header(out, a.size(), kTypeArray);
      for (const Value& item : a) encode_to(item, out);
      return;
    }
    case Value::Kind::kMap: {
      const Value::Map& m = value.as_map();
      write_header(out, m.size(), kTypeMap);
      for (const auto& [key, item] : m) {
        write_uleb(out, key.size());
        write_raw(out, key.data(), key.size());
        encode_to(item, out);
      }
      return;
    }
  }
}

std::vector<uint8_t> encode(const Value& value) {
  std::vector<uint8_t> out;
  encode_to(value, out);
  return out;
}

namespace {

// The decoder. With `build` it makes the value, counting its footprint against `limits`;
// without, it only checks the bytes (validate()), and holds nothing per item.
Result<Value> decode_impl(std::span<const uint8_t> bytes, const DecodeLimits& limits, bool build,
                          uint64_t* footprint_out, const ValueVisitor* visit) {
  Reader r(bytes);
  std::vector<Frame> stack;
  Header h;
  Footprint fp(build ? limits.max_footprint : UINT64_MAX);
  auto too_big = [&](size_t at) {
    Error e = r.error("footprint_exceeded",
                      "decoded value above " + std::to_string(limits.max_footprint) + " octets of memory", at);
    e.errc = static_cast<int>(DecodeErrc::kFootprintExceeded);
    return e;
  };
  if (!fp.add(sizeof(Value))) return too_big(0);  // the top value
  for (;;) {
    // Read one value; containers with elements are pushed and their elements read next.
    size_t start = r.pos();
    if (Status s = r.read_header(&h); !s) return s.take_error();
    if (visit != nullptr && *visit && h.type != kTypeReserved) {
      static constexpr Value::Kind kKinds[] = {Value::Kind::kNull,  Value::Kind::kInt,    Value::Kind::kInt,
                                               Value::Kind::kBytes, Value::Kind::kString, Value::Kind::kArray,
                                               Value::Kind::kMap};
      Value::Kind kind = kKinds[h.type];
      if (h.type == kTypeAtom && !h.wide) {
        kind = h.payload == kAtomAddress ? Value::Kind::kAddress
               : h.payload == kAtomNull  ? Value::Kind::kNull
                                         : Value::Kind::kBool;
      }
      bool in_map = !stack.empty() && stack.back().is_map;
      (*visit)(stack.size(), in_map ? std::string_view(stack.back().key) : std::string_view(), kind);
    }
    Value v;
    switch (h.type) {
      case kTypeAtom:
        if (h.wide || h.payload > kAtomAddress) {
          return r.error("reserved_atom", "reserved atom", start);
        }
        if (h.payload == kAtomNull) {
          v = Value();
        } else if (h.payload == kAtomFalse || h.payload == kAtomTrue) {
          v = Value(h.payload == kAtomTrue);
        } else {
          if (r.remaining() < kAddressSize) return r.error("truncated", "address cut short", start);
          Bytes raw;
          r.read_bytes(kAddressSize, &raw);
          Address a;
          std::memcpy(a.bytes.data(), raw.data(), kAddressSize);
          v = Value(a);
        }
        break;
      case kTypePosInt:
      case kTypeNegInt: {
        BigInt::Limbs mag;
        if (h.wide) {
          mag = std::move(h.big);
        } else {
          mag = {static_cast<uint32_t>(h.payload), static_cast<uint32_t>(h.payload >> 32)};
        }
        if (h.type == kTypeNegInt) {  // |n| = payload + 1
          bool carry = true;
          for (uint32_t& limb : mag) {
            if (++limb != 0) {
              carry = false;
              break;
            }
          }
          if (carry) mag.push_back(1);
        }
        // The limbs already exist (at most the integer's own wire bytes); counted before the
        // value is kept.
        if (!fp.add(heap_block(mag.capacity() * sizeof(uint32_t)))) return too_big(start);
        if (build) v = Value(BigInt::from_magnitude(h.type == kTypeNegInt, std::move(mag)));
        break;
      }
      case kTypeBytes: {
        uint64_t len = 0;
        if (Status s = r.check_length(h, start, 1, &len); !s) return s.take_error();
        if (len != 0 && !fp.add(heap_block(len))) return too_big(start);
        Bytes b;
        if (build) {
          r.read_bytes(len, &b);
        } else {
          r.skip(len);
        }
        v = Value(std::move(b));
        break;
      }
      case kTypeString: {
        uint64_t len = 0;
        if (Status s = r.check_length(h, start, 1, &len); !s) return s.take_error();
        if (!fp.add(string_heap(len))) return too_big(start);
        std::string str;
        if (Status s = r.read_utf8(len, build ? &str : nullptr); !s) return s.take_error();
        v = Value(std::move(str));
        break;
      }
      case kTypeArray:
      case kTypeMap: {
        bool is_map = h.type == kTypeMap;
        uint64_t len = 0;
        // Every element takes at least one byte (a map entry two: key length and value), so a
        // claimed length is checked against the input before anything is allocated.
        if (Status s = r.check_length(h, start, is_map ? 2 : 1, &len); !s) return s.take_error();
        if (len == 0) {
          v = is_map ? Value(Value::Map{}) : Value(Value::Array{});
          break;
        }
        if (stack.size() >= kMaxDepth) {
          return r.error("depth_exceeded",
                         "nesting deeper than " + std::to_string(kMaxDepth) + " containers", start);
        }
        // An array's elements are allocated at once, to the claimed length: counted first.
        // A map's nodes are counted one by one, with their keys.
        if (!is_map && !fp.add(heap_block(len * sizeof(Value)))) return too_big(start);
        Value container;
        if (build) {
          if (is_map) {
            container = Value(Value::Map{});
          } else {
            Value::Array items;
            items.reserve(len);
            container = Value(std::move(items));
          }
        }
        stack.push_back(Frame{std::move(container), is_map, len, {}, {}});
        if (is_map) {
          size_t key_at = r.pos();
          if (Status s = r.read_key(&stack.back().key, nullptr); !s) return s.take_error();
          if (!fp.add(heap_block(kMapNodeBytes) + string_heap(stack.back().key.size()))) return too_big(key_at);
        }
        continue;
      }
      default:
        return r.error("reserved_type", "reserved type 7", start);
    }
    // Hand the finished value to its parent; a parent that is now full is itself finished.
    for (;;) {
      if (stack.empty()) {
        if (r.remaining() != 0) return r.error("trailing_bytes", "bytes after the value", r.pos());
        if (footprint_out != nullptr) *footprint_out = fp.total();
        return v;
      }
      Frame& f = stack.back();
      if (!build) {
        if (f.is_map) std::swap(f.prev_key, f.key);
      } else if (f.is_map) {
        Value::Map& m = f.container.as_map();
        m.emplace_hint(m.end(), std::move(f.key), std::move(v));
      } else {
        f.container.as_array().push_back(std::move(v));
      }
      if (--f.remaining == 0) {
        v = std::move(f.container);
        stack.pop_back();
        continue;
      }
      if (f.is_map) {
        const std::string& prev = build ? f.container.as_map().rbegin()->first : f.prev_key;
        size_t key_at = r.pos();
        if (Status s = r.read_key(&f.key, &prev); !s) return s.take_error();
        if (!fp.add(heap_block(kMapNodeBytes) + string_heap(f.key.size()))) return too_big(key_at);
      }
      break;
    }
  }
}

}  // namespace

Result<Value> decode(std::span<const uint8_t> bytes) {
  return decode_impl(bytes, DecodeLimits{}, true, nullptr, nullptr);
}

Result<Value> decode(std::span<const uint8_t> bytes, const DecodeLimits& limits, uint64_t* footprint) {
  return decode_impl(bytes, limits, true, footprint, nullptr);
}

Status validate(std::span<const uint8_t> bytes, const ValueVisitor& visit) {
  auto v = decode_impl(bytes, DecodeLimits{}, false, nullptr, &visit);
  if (!v) return v.take_error();
  return {};
}

bool is_valid_utf8(std::string_view s, size_t* bad_offset) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    if (n - i < len) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xc0) != 0x80) {
        if (bad_offset) *bad_offset = i;
        return false;
      }
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

// ------------------------------------------------------------------------------ random values

namespace {

uint64_t below(std::mt19937_64& rng, uint64_t n) { return rng() % n; }  // portable, unlike <random> distributions


uint32_t random_code_point(std::mt19937_64& rng) {
  static constexpr uint32_t kSpecial[] = {'"', '\\', '\n', '\t', 0, 0x1f, 0x7f, 0x80, 0xe9, 0x7ff,
                                          0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600,
                                          0x10ffff};
  switch (below(rng, 6)) {
    case 0:
    case 1:
      return static_cast<uint32_t>('a' + below(rng, 4));  // few letters: keys share prefixes
    case 2:
      return static_cast<uint32_t>(0x20 + below(rng, 0x5f));
    case 3:
      return kSpecial[below(rng, std::size(kSpecial))];
    case 4: {
      auto cp = static_cast<uint32_t>(0x80 + below(rng, 0x10000 - 0x80));
      return (cp >= 0xd800 && cp <= 0xdfff) ? cp - 0x800 : cp;  // never a surrogate
    }
    default:
      return static_cast<uint32_t>(0x10000 + below(rng, 0x100000));
  }
}

std::string random_string(std::mt19937_64& rng, size_t max_len) {
  std::string s;
  size_t len = below(rng, max_len + 1);
  for (size_t i = 0; i < len; ++i) append_utf8(s, random_code_point(rng));
  return s;
}

BigInt random_int(std::mt19937_64& rng) {
  switch (below(rng, 6)) {
    case 0:
      return BigInt(static_cast<int64_t>(below(rng, 200)) - 100);
    case 1:  // around the 1-byte / 2-byte ULEB boundary of the shifted value
      return BigInt(static_cast<int64_t>(below(rng, 40)) - 20 + (below(rng, 2) ? 16 : -16));
    case 2:
      return BigInt(static_cast<int64_t>(rng()));
    case 3: {  // +-(2^k + d): powers of two are where limb and ULEB group edges are
      size_t k = below(rng, 260);
      BigInt::Limbs mag(k / 32 + 1, 0);
      mag[k / 32] = uint32_t{1} << (k % 32);
      int64_t d = static_cast<int64_t>(below(rng, 3)) - 1;
      if (d < 0) {
        for (uint32_t& limb : mag) if (limb-- != 0) break;
      } else if (d > 0) {
        for (uint32_t& limb : mag) if (++limb != 0) break;
      }
      return BigInt::from_magnitude(below(rng, 2) == 1, std::move(mag));
    }
    default: {
      BigInt::Limbs mag(1 + below(rng, 8));
      for (uint32_t& limb : mag) limb = static_cast<uint32_t>(rng());
      return BigInt::from_magnitude(below(rng, 2) == 1, std::move(mag));
    }
  }
}

}  // namespace

Value random_value(std::mt19937_64& rng, size_t max_depth) {
  uint64_t kinds = max_depth == 0 ? 6 : 8;
  switch (below(rng, kinds)) {
    case 0: {
      uint64_t atom = below(rng, 3);
      return atom == 0 ? Value() : Value(atom == 2);
    }
    case 1: {
      Address a;
      for (uint8_t& b : a.bytes) b = static_cast<uint8_t>(rng());
      if (below(rng, 8) == 0) a.bytes.fill(0);
      return Value(a);
    }
    case 2:
    case 3:
      return Value(random_int(rng));
    case 4: {
      Bytes b(below(rng, 2) ? below(rng, 4) : below(rng, 140));
      for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
      return Value(std::move(b));
    }
    case 5:
      return Value(random_string(rng, below(rng, 4) == 0 ? 150 : 8));
    case 6: {
      Value::Array a(below(rng, 6));
      for (Value& item : a) item = random_value(rng, max_depth - 1);
      return Value(std::move(a));
    }
    default: {
      Value::Map m;
      size_t n = below(rng, 6);
      for (size_t i = 0; i < n; ++i) m[random_string(rng, 3)] = random_value(rng, max_depth - 1);
      return Value(std::move(m));
    }
  }
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace genvm::calldata
