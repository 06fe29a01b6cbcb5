#include "executor/entry.h"

#include <algorithm>
#include <optional>

#include "executor/sha3.h"

namespace genvm::executor {

using calldata::Value;

Status validate_entry(std::span<const std::uint8_t> entry, bool is_init) {
  // Checked as it is read, never decoded: an entry of many tiny items would otherwise take
  // ~56 octets of host memory per input byte, uncharged. The first failing field (in key
  // order) names the error.
  bool is_map = false;
  std::optional<Error> bad;
  auto check = [&](std::size_t depth, std::string_view key, Value::Kind kind) {
    if (depth == 0) is_map = kind == Value::Kind::kMap;
    if (depth != 1 || bad) return;
    if (key.empty()) {
      if (is_init) bad = make_error("malformed_entry", "a deployment entry must not name a method");
      else if (kind != Value::Kind::kString) bad = make_error("malformed_entry", "the method name (key \"\") must be a string");
    } else if (key == "args") {
      if (kind != Value::Kind::kArray) bad = make_error("malformed_entry", "\"args\" must be an array");
    } else if (key == "kwargs") {
      if (kind != Value::Kind::kMap) bad = make_error("malformed_entry", "\"kwargs\" must be a map");
    } else {
      bad = make_error("malformed_entry", "unknown key in entry");
    }
  };
  if (auto s = calldata::validate(entry, check); !s) {
    return make_error("malformed_entry", "entry is not calldata: " + s.error().to_string());
  }
  if (!is_map) return make_error("malformed_entry", "entry must be a map");
  if (bad) return *bad;
  return {};
}

Value startup_message(const ExecutionData& d, EntryKind kind) {
  Value::Array stack;
  if (d.nested) {
    for (const auto& a : d.nested->stack) stack.emplace_back(a);
  }
  return Value(Value::Map{
      {"contract_address", d.message.contract_address},
      {"sender_address", d.message.sender_address},
      {"origin_address", d.message.origin_address},
      {"signer_address", d.message.signer_address},
      {"stack", std::move(stack)},
      {"chain_id", d.message.chain_id},
      {"value", d.message.value},
      {"is_init", d.message.is_init},
      {"datetime", d.message.datetime},
      {"entry_kind", static_cast<int>(kind)},
      {"entry_data", d.calldata},
      {"entry_stage_data", Value()},
  });
}

Result<Permissions> parse_permissions(std::string_view letters) {
  Permissions p;
  for (char c : letters) {
    bool* slot = nullptr;
    switch (c) {
      case 'w': slot = &p.write_storage; break;
      case 's': slot = &p.send_messages; break;
      case 'c': slot = &p.call_others; break;
      case 'n': slot = &p.spawn_nondet; break;
      case 'u': slot = &p.register_runners; break;
      default:
        return make_error("bad_permissions", std::string("unknown permission letter '") + c +
                                                 "' (expected letters from \"wscnu\")");
    }
    if (*slot) return make_error("bad_permissions", std::string("permission letter '") + c + "' repeated");
    *slot = true;
  }
  return p;
}


Result<calldata::Bytes> call_key(const Value& call, bool is_deploy) {
  calldata::Bytes key(32, 0);
  if (is_deploy) return key;
  const Value* name = call.find("");
  if (!name) return key;
  if (!name->is_string()) return make_error("call_key", "method name must be a string");
  const std::string& s = name->as_string();
  if (s.size() >= 32) {
    // 02-abi.rst: keccak256(name) with the lowest bit forced to 1, so it can never equal a
    // zero-padded short name (whose last octet is 0) nor the reserved 0.
    Digest32 k = keccak256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
    std::copy(k.begin(), k.end(), key.begin());
    key[31] |= 1;
    return key;
  }
  std::copy(s.begin(), s.end(), key.begin());
  return key;
}


}  // namespace genvm::executor
