#include "eth/rlp.h"

#include <string>

namespace genvm::eth {

namespace {

struct Header {
  bool is_list;
  std::size_t header_len;
  std::size_t payload_len;
};

// Reads one item's header at the start of `in`; the payload must fit in `in`.
Result<Header> read_header(ByteView in) {
  if (in.empty()) return make_eth_error(Errc::rlp_truncated, "an item was expected, the input ended");
  const std::uint8_t b = in[0];
  if (b < 0x80) return Header{false, 0, 1};
  const bool is_list = b >= 0xc0;
  const std::uint8_t base = is_list ? 0xc0 : 0x80;
  const std::size_t short_max = 55;
  std::size_t header_len = 1, payload_len = 0;
  const std::size_t tag = static_cast<std::size_t>(b - base);
  if (tag <= short_max) {
    payload_len = tag;
    if (!is_list && payload_len == 1) {
      if (in.size() < 2) return make_eth_error(Errc::rlp_truncated, "a 1-octet string's octet is missing");
      if (in[1] < 0x80) {
        return make_eth_error(Errc::rlp_not_canonical,
                              "a single octet below 0x80 must be encoded as itself, not as a string");
      }
    }
  } else {
    const std::size_t len_of_len = tag - short_max;  // 1..8
    if (in.size() < 1 + len_of_len) return make_eth_error(Errc::rlp_truncated, "a long length runs past the input");
    if (in[1] == 0) return make_eth_error(Errc::rlp_not_canonical, "a long length has a leading zero octet");
    std::uint64_t len = 0;
    for (std::size_t i = 0; i < len_of_len; ++i) len = (len << 8) | in[1 + i];
    if (len <= short_max) {
      return make_eth_error(Errc::rlp_not_canonical, "a length of " + std::to_string(len) + " must use the short form");
    }
    header_len = 1 + len_of_len;
    if (len > in.size() - header_len) {
      return make_eth_error(Errc::rlp_truncated, "an item of " + std::to_string(len) + " octets runs past the input");
    }
    payload_len = static_cast<std::size_t>(len);
  }
  if (payload_len > in.size() - header_len) {
    return make_eth_error(Errc::rlp_truncated,
                          "an item of " + std::to_string(payload_len) + " octets runs past the input");
  }
  return Header{is_list, header_len, payload_len};
}

struct Decoder {
  const RlpLimits& limits;
  std::size_t nodes = 0;

  // Decodes the item at the start of `in` into `out`; returns its encoded length.
  Result<std::size_t> item(ByteView in, std::size_t depth, RlpNode& out) {
    if (++nodes > limits.max_nodes) {
      return make_eth_error(Errc::rlp_too_many, "more than " + std::to_string(limits.max_nodes) + " items");
    }
    auto h = read_header(in);
    if (!h) return h.error();
    const std::size_t total = h->header_len + h->payload_len;
    out.is_list = h->is_list;
    out.raw = in.first(total);
    out.payload = in.subspan(h->header_len, h->payload_len);
    if (!h->is_list) return total;
    if (depth >= limits.max_depth) {
      return make_eth_error(Errc::rlp_too_deep, "lists nested deeper than " + std::to_string(limits.max_depth));
    }
    ByteView rest = out.payload;
    while (!rest.empty()) {
      RlpNode child;
      auto n = item(rest, depth + 1, child);
      if (!n) return n.error();
      out.children.push_back(std::move(child));
      rest = rest.subspan(*n);
    }
    return total;
  }
};

void append_length(Bytes& out, std::size_t len, std::uint8_t base) {
  if (len <= 55) {
    out.push_back(static_cast<std::uint8_t>(base + len));
    return;
  }
  std::uint8_t be[8];
  int n = 0;
  for (std::size_t v = len; v != 0; v >>= 8) be[n++] = static_cast<std::uint8_t>(v);
  out.push_back(static_cast<std::uint8_t>(base + 55 + n));
  while (n > 0) out.push_back(be[--n]);
}

Result<ByteView> integer_octets(const RlpNode& node, std::size_t max_octets) {
  if (node.is_list) return make_eth_error(Errc::rlp_shape, "an integer was expected, found a list");
  if (!node.payload.empty() && node.payload[0] == 0) {
    return make_eth_error(Errc::rlp_integer_not_canonical, "an integer has a leading zero octet");
  }
  if (node.payload.size() > max_octets) {
    return make_eth_error(Errc::rlp_integer_too_large, "an integer of " + std::to_string(node.payload.size()) +
                                                           " octets, at most " + std::to_string(max_octets) + " allowed");
  }
  return node.payload;
}

}  // namespace

Result<RlpNode> rlp_decode(ByteView in, const RlpLimits& limits) {
  Decoder d{limits};
  RlpNode top;
  auto n = d.item(in, 0, top);
  if (!n) return n.error();
  if (*n != in.size()) {
    return make_eth_error(Errc::rlp_trailing, std::to_string(in.size() - *n) + " octets after the item");
  }
  return top;
}

Result<std::uint64_t> rlp_uint64(const RlpNode& node) {
  auto o = integer_octets(node, 8);
  if (!o) return o.error();
  std::uint64_t v = 0;
  for (std::uint8_t b : *o) v = (v << 8) | b;
  return v;
}

Result<std::array<std::uint8_t, 32>> rlp_u256(const RlpNode& node) {
  auto o = integer_octets(node, 32);
  if (!o) return o.error();
  std::array<std::uint8_t, 32> v{};
  std::copy(o->begin(), o->end(), v.end() - static_cast<std::ptrdiff_t>(o->size()));
  return v;
}

void rlp_append_string(Bytes& out, ByteView s) {
  if (s.size() == 1 && s[0] < 0x80) {
    out.push_back(s[0]);
    return;
  }
  append_length(out, s.size(), 0x80);
  out.insert(out.end(), s.begin(), s.end());
}

void rlp_append_uint(Bytes& out, std::uint64_t v) {
  std::uint8_t be[8];
  int n = 0;
  for (; v != 0; v >>= 8) be[7 - n++] = static_cast<std::uint8_t>(v);
  rlp_append_string(out, ByteView(be + 8 - n, static_cast<std::size_t>(n)));
}

void rlp_append_list(Bytes& out, ByteView encoded_items) {
  append_length(out, encoded_items.size(), 0xc0);
  out.insert(out.end(), encoded_items.begin(), encoded_items.end());
}

Bytes rlp_string(ByteView s) {
  Bytes out;
  rlp_append_string(out, s);
  return out;
}

Bytes rlp_list(ByteView encoded_items) {
  Bytes out;
  rlp_append_list(out, encoded_items);
  return out;
}

}  // namespace genvm::eth
