// RLP (Ethereum's Recursive Length Prefix, Yellow Paper appendix B): a strict decoder into a tree
// of views over the input, and an encoder.
//
//   auto r = eth::rlp_decode(bytes);              // the whole input must be exactly one item
//   if (!r) return r.error();                     // errc is an eth::Errc (eth/errors.h)
//   const eth::RlpNode& top = *r;                 // top.is_list, top.children, top.payload
//
// Strict means only the canonical encoding of each item is accepted, so decode(encode(x)) == x
// and encode(decode(b)) == b for every accepted b: a single octet below 0x80 is never wrapped in
// a string header, a length below 56 never uses the long form, long-form lengths have no leading
// zero octet, and nothing follows the item. Depth and node count are bounded (RlpLimits), the
// size by the caller's buffer. Nodes view into the input, which must outlive them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "eth/errors.h"

namespace genvm::eth {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

struct RlpNode {
  bool is_list = false;
  ByteView payload;               // a string's octets; a list's concatenated child encodings
  ByteView raw;                   // the whole encoding: header and payload
  std::vector<RlpNode> children;  // a list's items, empty for a string
};

struct RlpLimits {
  std::size_t max_depth = 16;       // nested lists below the top item (a transaction needs 3)
  std::size_t max_nodes = 1 << 16;  // items in the whole tree
};

// Decodes exactly one item covering all of `in`.
Result<RlpNode> rlp_decode(ByteView in, const RlpLimits& limits = {});

// An RLP string read as an unsigned big-endian integer of at most 8 octets, in canonical form:
// zero is the empty string, no leading zero octet (rlp_integer_not_canonical).
Result<std::uint64_t> rlp_uint64(const RlpNode& node);
// The same for at most 32 octets, as a 32-octet big-endian array.
Result<std::array<std::uint8_t, 32>> rlp_u256(const RlpNode& node);

// Encoding. Integers are minimal big-endian strings (0 is the empty string).
void rlp_append_string(Bytes& out, ByteView s);
void rlp_append_uint(Bytes& out, std::uint64_t v);
// Wraps already-encoded items in a list header.
void rlp_append_list(Bytes& out, ByteView encoded_items);
Bytes rlp_string(ByteView s);
Bytes rlp_list(ByteView encoded_items);

}  // namespace genvm::eth
