// The consensus contract's addTransaction call data (Solidity ABI, canonical encoding only) and
// the NewTransaction log of its receipt.
#include <algorithm>
#include <string>

#include "common/sha3.h"
#include "eth/eth.h"

namespace genvm::eth {

namespace {

constexpr std::size_t kWord = 32;
constexpr const char* kSignatureV5 = "addTransaction(address,address,uint256,uint256,bytes)";
constexpr const char* kSignatureV6 = "addTransaction(address,address,uint256,uint256,bytes,uint256)";

Selector selector_of(const char* signature) {
  Hash32 h = keccak256(std::string_view(signature));
  return {h[0], h[1], h[2], h[3]};
}

bool zeros(ByteView b) {
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

Result<Address> address_word(ByteView w, const char* name) {
  if (!zeros(w.first(12))) {
    return make_eth_error(Errc::abi_not_canonical, std::string(name) + ": an address word's high 12 octets must be zero");
  }
  Address a;
  std::copy(w.begin() + 12, w.end(), a.begin());
  return a;
}

Result<std::uint64_t> u64_word(ByteView w, const char* name) {
  if (!zeros(w.first(24))) {
    return make_eth_error(Errc::abi_integer_too_large, std::string(name) + ": above 2^64-1");
  }
  std::uint64_t v = 0;
  for (std::uint8_t b : w.subspan(24)) v = (v << 8) | b;
  return v;
}

void put_address(Bytes& out, const Address& a) {
  out.insert(out.end(), 12, 0);
  out.insert(out.end(), a.begin(), a.end());
}

void put_u64(Bytes& out, std::uint64_t v) {
  out.insert(out.end(), 24, 0);
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

Selector add_transaction_selector_v5() {
  static const Selector s = selector_of(kSignatureV5);
  return s;
}

Selector add_transaction_selector_v6() {
  static const Selector s = selector_of(kSignatureV6);
  return s;
}

Result<AddTransactionCall> decode_add_transaction(ByteView call_data, std::size_t max_tx_data) {
  if (call_data.size() < 4) return make_eth_error(Errc::abi_bad_length, "call data shorter than a selector");
  const Selector sel = {call_data[0], call_data[1], call_data[2], call_data[3]};
  bool v6;
  if (sel == add_transaction_selector_v5()) {
    v6 = false;
  } else if (sel == add_transaction_selector_v6()) {
    v6 = true;
  } else {
    return make_eth_error(Errc::abi_unknown_selector, "selector " + to_hex(ByteView(sel)) + " is not " + kSignatureV5 +
                                                          " (" + to_hex(ByteView(add_transaction_selector_v5())) +
                                                          ") nor its 6-argument form (" +
                                                          to_hex(ByteView(add_transaction_selector_v6())) + ")");
  }
  const ByteView args = call_data.subspan(4);
  const std::size_t head = (v6 ? 6 : 5) * kWord;
  if (args.size() < head + kWord) {
    return make_eth_error(Errc::abi_bad_length, "call data of " + std::to_string(call_data.size()) +
                                                    " octets is shorter than its head and the bytes' length");
  }
  auto word = [&](std::size_t i) { return args.subspan(i * kWord, kWord); };
  AddTransactionCall call;
  auto sender = address_word(word(0), "_sender");
  if (!sender) return sender.error();
  auto recipient = address_word(word(1), "_recipient");
  if (!recipient) return recipient.error();
  auto validators = u64_word(word(2), "_numOfInitialValidators");
  if (!validators) return validators.error();
  auto rotations = u64_word(word(3), "_maxRotations");
  if (!rotations) return rotations.error();
  auto offset = u64_word(word(4), "_txData offset");
  if (!offset || *offset != head) {
    return make_eth_error(Errc::abi_not_canonical, "_txData's offset must be " + std::to_string(head) +
                                                       " (right after the head)");
  }
  if (v6) {
    auto until = u64_word(word(5), "_validUntil");
    if (!until) return until.error();
    call.valid_until = *until;
  }
  auto len = u64_word(args.subspan(head, kWord), "_txData length");
  if (!len || *len > max_tx_data) {
    return make_eth_error(Errc::abi_bad_length, "_txData longer than " + std::to_string(max_tx_data) + " octets");
  }
  const std::size_t n = static_cast<std::size_t>(*len);
  const std::size_t padded = (n + kWord - 1) / kWord * kWord;
  const std::size_t want = head + kWord + padded;
  if (args.size() != want) {
    return make_eth_error(Errc::abi_bad_length, "call data of " + std::to_string(call_data.size()) + " octets, " +
                                                    std::to_string(4 + want) + " expected for " + std::to_string(n) +
                                                    " octets of _txData");
  }
  const ByteView data = args.subspan(head + kWord, n);
  if (!zeros(args.subspan(head + kWord + n))) {
    return make_eth_error(Errc::abi_not_canonical, "_txData's padding must be zero");
  }
  call.sender = *sender;
  call.recipient = *recipient;
  call.num_of_initial_validators = *validators;
  call.max_rotations = *rotations;
  call.tx_data.assign(data.begin(), data.end());
  return call;
}

Bytes encode_add_transaction(const AddTransactionCall& call) {
  const bool v6 = call.valid_until.has_value();
  const Selector sel = v6 ? add_transaction_selector_v6() : add_transaction_selector_v5();
  Bytes out(sel.begin(), sel.end());
  put_address(out, call.sender);
  put_address(out, call.recipient);
  put_u64(out, call.num_of_initial_validators);
  put_u64(out, call.max_rotations);
  put_u64(out, (v6 ? 6 : 5) * kWord);
  if (v6) put_u64(out, *call.valid_until);
  put_u64(out, call.tx_data.size());
  out.insert(out.end(), call.tx_data.begin(), call.tx_data.end());
  out.insert(out.end(), (kWord - call.tx_data.size() % kWord) % kWord, 0);
  return out;
}

Hash32 new_transaction_topic() {
  static const Hash32 h = keccak256(std::string_view("NewTransaction(bytes32,address,address)"));
  return h;
}

Log new_transaction_log(const Address& consensus, const Hash32& tx_id, const Address& recipient,
                        const Address& activator) {
  auto padded = [](const Address& a) {
    Hash32 t{};
    std::copy(a.begin(), a.end(), t.begin() + 12);
    return t;
  };
  return Log{consensus, {new_transaction_topic(), tx_id, padded(recipient), padded(activator)}, {}};
}

}  // namespace genvm::eth
