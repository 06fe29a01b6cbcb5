// Signed Ethereum transactions: legacy (EIP-155), EIP-2930 and EIP-1559 envelopes, the signing
// hash each signature covers, and sender recovery through libsecp256k1's recovery module.
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/sha3.h"
#include "eth/eth.h"

namespace genvm::eth {

namespace {

// secp256k1's group order n and n/2 (rounded down), big-endian.
constexpr U256 kOrder = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                         0xff, 0xff, 0xff, 0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48,
                         0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
constexpr U256 kHalfOrder = {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0xff, 0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4,
                             0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0};

bool is_zero(const U256& v) {
  return std::all_of(v.begin(), v.end(), [](std::uint8_t b) { return b == 0; });
}

// Big-endian arrays of equal length compare lexicographically as numbers.
bool less(const U256& a, const U256& b) { return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end()); }

Error field_error(const Error& e, const char* field) {
  Error out = e;
  out.message = std::string(field) + ": " + e.message;
  return out;
}

Result<std::uint64_t> u64_field(const RlpNode& n, const char* field) {
  auto v = rlp_uint64(n);
  if (!v) return field_error(v.error(), field);
  return *v;
}

Result<U256> u256_field(const RlpNode& n, const char* field) {
  auto v = rlp_u256(n);
  if (!v) return field_error(v.error(), field);
  return *v;
}

Result<ByteView> string_field(const RlpNode& n, const char* field) {
  if (n.is_list) return make_eth_error(Errc::rlp_shape, std::string(field) + ": a string was expected, found a list");
  return n.payload;
}

Result<std::optional<Address>> to_field(const RlpNode& n) {
  auto s = string_field(n, "to");
  if (!s) return s.error();
  if (s->empty()) return std::optional<Address>{};
  if (s->size() != 20) {
    return make_eth_error(Errc::tx_bad_address, "to: " + std::to_string(s->size()) + " octets, 0 or 20 expected");
  }
  Address a;
  std::copy(s->begin(), s->end(), a.begin());
  return std::optional<Address>(a);
}

// [[address, [storage key...]]...]: checked for shape, counted.
Result<std::size_t> access_list_field(const RlpNode& n) {
  if (!n.is_list) return make_eth_error(Errc::rlp_shape, "accessList: a list was expected");
  for (const RlpNode& entry : n.children) {
    if (!entry.is_list || entry.children.size() != 2) {
      return make_eth_error(Errc::rlp_shape, "accessList: each entry must be [address, [keys]]");
    }
    const RlpNode& addr = entry.children[0];
    if (addr.is_list || addr.payload.size() != 20) {
      return make_eth_error(Errc::tx_bad_address, "accessList: an address must be 20 octets");
    }
    const RlpNode& keys = entry.children[1];
    if (!keys.is_list) return make_eth_error(Errc::rlp_shape, "accessList: storage keys must be a list");
    for (const RlpNode& k : keys.children) {
      if (k.is_list || k.payload.size() != 32) {
        return make_eth_error(Errc::rlp_shape, "accessList: a storage key must be 32 octets");
      }
    }
  }
  return n.children.size();
}

Status check_chain(std::uint64_t chain_id, const TxPolicy& policy) {
  if (std::find(policy.chain_ids.begin(), policy.chain_ids.end(), chain_id) != policy.chain_ids.end()) return {};
  std::string accepted;
  for (std::uint64_t c : policy.chain_ids) accepted += (accepted.empty() ? "" : ", ") + std::to_string(c);
  return make_eth_error(Errc::tx_wrong_chain, "chain id " + std::to_string(chain_id) + " is not accepted here (" +
                                                  (accepted.empty() ? "none" : accepted) + ")");
}

Hash32 keccak_of(ByteView b) { return keccak256(b); }

// Concatenates the raw encodings of `items` into a list, optionally prefixed by a type octet and
// followed by extra encoded items.
Bytes list_of(std::span<const RlpNode> items, ByteView extra = {}) {
  Bytes body;
  for (const RlpNode& n : items) body.insert(body.end(), n.raw.begin(), n.raw.end());
  body.insert(body.end(), extra.begin(), extra.end());
  return rlp_list(body);
}

Status check_signature_values(const U256& r, const U256& s) {
  if (is_zero(r) || !less(r, kOrder)) return make_eth_error(Errc::tx_bad_signature, "r is not in [1, n-1]");
  if (is_zero(s) || !less(s, kOrder)) return make_eth_error(Errc::tx_bad_signature, "s is not in [1, n-1]");
  if (less(kHalfOrder, s)) {
    return make_eth_error(Errc::tx_high_s, "s is above n/2 (EIP-2: only the lower-s form of a signature is valid)");
  }
  return {};
}

Status finish(SignedTx& tx, ByteView raw, int recid) {
  auto sender = recover_address(tx.signing_hash, tx.r, tx.s, recid);
  if (!sender) return sender.error();
  tx.sender = *sender;
  tx.hash = keccak_of(raw);
  return {};
}

Result<SignedTx> parse_legacy(ByteView raw, const RlpNode& top, const TxPolicy& policy) {
  if (top.children.size() != 9) {
    return make_eth_error(Errc::rlp_shape, "a legacy transaction has 9 items, this one " +
                                               std::to_string(top.children.size()));
  }
  const auto& f = top.children;
  SignedTx tx;
  tx.type = TxType::legacy;
  auto nonce = u64_field(f[0], "nonce");
  if (!nonce) return nonce.error();
  auto gas_price = u256_field(f[1], "gasPrice");
  if (!gas_price) return gas_price.error();
  auto gas = u64_field(f[2], "gas");
  if (!gas) return gas.error();
  auto to = to_field(f[3]);
  if (!to) return to.error();
  auto value = u256_field(f[4], "value");
  if (!value) return value.error();
  auto data = string_field(f[5], "data");
  if (!data) return data.error();
  auto v = u64_field(f[6], "v");
  if (!v) return v.error();
  auto r = u256_field(f[7], "r");
  if (!r) return r.error();
  auto s = u256_field(f[8], "s");
  if (!s) return s.error();
  tx.nonce = *nonce;
  tx.gas_price = *gas_price;
  tx.gas_limit = *gas;
  tx.to = *to;
  tx.value = *value;
  tx.data.assign(data->begin(), data->end());
  tx.v = *v;
  tx.r = *r;
  tx.s = *s;

  int recid = 0;
  if (*v == 27 || *v == 28) {
    if (!policy.allow_unprotected) {
      return make_eth_error(Errc::tx_unprotected,
                            "a legacy transaction signed without a chain id (v = " + std::to_string(*v) +
                                ", before EIP-155) replays on any chain and is not accepted");
    }
    recid = static_cast<int>(*v - 27);
    tx.signing_hash = keccak_of(list_of(std::span(f).first(6)));
  } else if (*v >= 35) {
    const std::uint64_t chain_id = (*v - 35) / 2;
    recid = static_cast<int>((*v - 35) % 2);
    tx.chain_id = chain_id;
    if (auto c = check_chain(chain_id, policy); !c) return c.error();
    Bytes extra;
    rlp_append_uint(extra, chain_id);
    rlp_append_uint(extra, 0);
    rlp_append_uint(extra, 0);
    tx.signing_hash = keccak_of(list_of(std::span(f).first(6), extra));
  } else {
    return make_eth_error(Errc::tx_bad_v, "legacy v = " + std::to_string(*v) + ", expected 27, 28 or chain_id*2+35/36");
  }
  if (auto c = check_signature_values(tx.r, tx.s); !c) return c.error();
  if (auto c = finish(tx, raw, recid); !c) return c.error();
  return tx;
}

Result<SignedTx> parse_typed(ByteView raw, const TxPolicy& policy, const RlpLimits& limits) {
  const std::uint8_t type = raw[0];
  auto top = rlp_decode(raw.subspan(1), limits);
  if (!top) return top.error();
  if (!top->is_list) return make_eth_error(Errc::rlp_shape, "a typed transaction's payload must be a list");
  const bool dynamic = type == 0x02;
  const std::size_t want = dynamic ? 12 : 11;
  const auto& f = top->children;
  if (f.size() != want) {
    return make_eth_error(Errc::rlp_shape, std::string(dynamic ? "an EIP-1559" : "an EIP-2930") + " transaction has " +
                                               std::to_string(want) + " items, this one " + std::to_string(f.size()));
  }
  SignedTx tx;
  tx.type = dynamic ? TxType::dynamic_fee : TxType::access_list;
  std::size_t i = 0;
  auto chain_id = u64_field(f[i++], "chainId");
  if (!chain_id) return chain_id.error();
  auto nonce = u64_field(f[i++], "nonce");
  if (!nonce) return nonce.error();
  if (dynamic) {
    auto tip = u256_field(f[i++], "maxPriorityFeePerGas");
    if (!tip) return tip.error();
    auto max_fee = u256_field(f[i++], "maxFeePerGas");
    if (!max_fee) return max_fee.error();
    tx.max_priority_fee_per_gas = *tip;
    tx.max_fee_per_gas = *max_fee;
  } else {
    auto gas_price = u256_field(f[i++], "gasPrice");
    if (!gas_price) return gas_price.error();
    tx.gas_price = *gas_price;
  }
  auto gas = u64_field(f[i++], "gas");
  if (!gas) return gas.error();
  auto to = to_field(f[i++]);
  if (!to) return to.error();
  auto value = u256_field(f[i++], "value");
  if (!value) return value.error();
  auto data = string_field(f[i++], "data");
  if (!data) return data.error();
  auto access = access_list_field(f[i++]);
  if (!access) return access.error();
  auto y = u64_field(f[i++], "yParity");
  if (!y) return y.error();
  auto r = u256_field(f[i++], "r");
  if (!r) return r.error();
  auto s = u256_field(f[i++], "s");
  if (!s) return s.error();
  if (*y > 1) return make_eth_error(Errc::tx_bad_v, "yParity = " + std::to_string(*y) + ", expected 0 or 1");
  tx.chain_id = *chain_id;
  tx.nonce = *nonce;
  tx.gas_limit = *gas;
  tx.to = *to;
  tx.value = *value;
  tx.data.assign(data->begin(), data->end());
  tx.access_list_entries = *access;
  tx.v = *y;
  tx.r = *r;
  tx.s = *s;
  if (auto c = check_chain(*chain_id, policy); !c) return c.error();
  if (auto c = check_signature_values(tx.r, tx.s); !c) return c.error();
  Bytes preimage{type};
  Bytes body = list_of(std::span(f).first(want - 3));
  preimage.insert(preimage.end(), body.begin(), body.end());
  tx.signing_hash = keccak_of(preimage);
  if (auto c = finish(tx, raw, static_cast<int>(*y)); !c) return c.error();
  return tx;
}

}  // namespace

const Address kStudioConsensusMain = {0xb7, 0x27, 0x8a, 0x61, 0xaa, 0x25, 0xc8, 0x88, 0x81, 0x5a,
                                      0xfc, 0x32, 0xad, 0x3c, 0xc5, 0x2f, 0xf2, 0x4f, 0xe5, 0x75};

Address address_of_public_key(std::span<const std::uint8_t, 64> xy) {
  Hash32 h = keccak256(ByteView(xy.data(), xy.size()));
  Address a;
  std::copy(h.end() - 20, h.end(), a.begin());
  return a;
}

Result<Address> recover_address(const Hash32& signing_hash, const U256& r, const U256& s, int y_parity) {
  if (y_parity != 0 && y_parity != 1) return make_eth_error(Errc::tx_bad_v, "y parity must be 0 or 1");
  if (auto c = check_signature_values(r, s); !c) return c.error();
  // Recovery needs no precomputed signing tables, so the static context serves (libsecp256k1
  // 0.2.0 and later); it is read-only and safe from any thread.
  const secp256k1_context* ctx = secp256k1_context_static;
  unsigned char compact[64];
  std::memcpy(compact, r.data(), 32);
  std::memcpy(compact + 32, s.data(), 32);
  secp256k1_ecdsa_recoverable_signature sig;
  if (secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &sig, compact, y_parity) != 1) {
    return make_eth_error(Errc::tx_bad_signature, "r or s does not parse as a signature");
  }
  secp256k1_pubkey pub;
  if (secp256k1_ecdsa_recover(ctx, &pub, &sig, signing_hash.data()) != 1) {
    return make_eth_error(Errc::tx_recovery_failed, "no public key recovers from this signature and hash");
  }
  unsigned char out[65];
  std::size_t out_len = sizeof out;
  secp256k1_ec_pubkey_serialize(ctx, out, &out_len, &pub, SECP256K1_EC_UNCOMPRESSED);
  return address_of_public_key(std::span<const std::uint8_t, 64>(out + 1, 64));
}

Result<SignedTx> parse_signed_tx(ByteView raw, const TxPolicy& policy) {
  if (raw.empty()) return make_eth_error(Errc::tx_empty, "an empty transaction");
  if (raw.size() > policy.max_size) {
    return make_eth_error(Errc::tx_too_large, "a transaction of " + std::to_string(raw.size()) + " octets, at most " +
                                                  std::to_string(policy.max_size) + " accepted");
  }
  // An access list nests three deep. Only its storage keys (33 octets each) come in numbers, so
  // one node per 32 octets admits every well-formed transaction and bounds the tree's memory
  // (a node is ~80 octets) near 2.5 times the input, where 1-octet items would take 80 times.
  RlpLimits limits;
  limits.max_depth = 4;
  limits.max_nodes = raw.size() / 32 + 64;
  const std::uint8_t first = raw[0];
  if (first >= 0xc0) {
    auto top = rlp_decode(raw, limits);
    if (!top) return top.error();
    return parse_legacy(raw, *top, policy);
  }
  if (first == 0x01 || first == 0x02) return parse_typed(raw, policy, limits);
  if (first < 0x80) {
    return make_eth_error(Errc::tx_unsupported_type,
                          "transaction type " + std::to_string(first) + " (only legacy, 0x01 and 0x02 are supported)");
  }
  return make_eth_error(Errc::rlp_shape, "a transaction is a list or a typed envelope, this is an RLP string");
}

}  // namespace genvm::eth
