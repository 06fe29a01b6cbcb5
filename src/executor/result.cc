#include "executor/result.h"

#include <algorithm>

namespace genvm::executor {

using calldata::Value;

std::string_view hash_kind(ResultCode kind) {
  switch (kind) {
    case ResultCode::kReturn: return "Return";
    case ResultCode::kUserError: return "UserError";
    default: return "VMError";
  }
}

Value backtrace_value(const std::optional<std::vector<Frame>>& bt) {
  if (!bt) return Value();
  Value::Array frames;
  for (const Frame& f : *bt) {
    frames.push_back(Value::map({{"func", f.func}, {"module_name", f.module_name}}));
  }
  return Value(std::move(frames));
}

Value wasm_store_hashes_value(const WasmStoreHashes& h) {
  Value::Map m;
  for (const auto& [module, fp] : h) {
    Value::Array mems;
    for (const Digest32& d : fp.memories) mems.emplace_back(calldata::Bytes(d.begin(), d.end()));
    m[module] = Value::map({{"memories", Value(std::move(mems))}});
  }
  return Value(std::move(m));
}

Value storage_changes_value(const std::vector<StorageDelta>& deltas) {
  Value::Array a;
  for (const StorageDelta& d : deltas) {
    a.push_back(Value::array({calldata::Bytes(d.key.begin(), d.key.end()), d.value}));
  }
  return Value(std::move(a));
}

namespace {

Value buckets_value(const BucketsConsumed& b) {
  return Value::map({{"event", b.event},
                     {"message_fee", b.message_fee},
                     {"message_receipt", b.message_receipt},
                     {"nondet_output", b.nondet_output},
                     {"storage", b.storage}});
}

Value ints_value(const std::vector<BigInt>& v) {
  Value::Array a;
  for (const auto& i : v) a.emplace_back(i);
  return Value(std::move(a));
}

Value digest_value(const Digest32& d) { return Value(calldata::Bytes(d.begin(), d.end())); }

Digest32 hash_value(const Value& v) { return sha3_256(calldata::encode(v)); }

}  // namespace

Digest32 small_hash(ResultCode kind, const Value& result, const Digest32& subvm_hashes,
                    const WasmStoreHashes& wasm_store_hashes) {
  return hash_value(Value::map({{"kind", std::string(hash_kind(kind))},
                                {"result", result},
                                {"subvm_hashes", digest_value(subvm_hashes)},
                                {"wasm_store_hashes", wasm_store_hashes_value(wasm_store_hashes)}}));
}

RunOutcome publish(RunOutcome o) {
  if (o.kind == ResultCode::kFatalVmError) o.kind = ResultCode::kVmError;
  if (o.kind != ResultCode::kReturn) {
    o.storage_changes.clear();
    o.emissions.clear();
  }
  return o;
}

Value execution_hash_input(const RunOutcome& o) {
  return Value::map({{"backtrace", backtrace_value(o.backtrace)},
                     {"data", o.data},
                     {"data_fees_consumed", buckets_value(o.data_fees_consumed)},
                     {"data_fees_remaining", ints_value(o.data_fees_remaining)},
                     {"emissions", Value(Value::Array(o.emissions))},
                     {"kind", std::string(wire_name(o.kind))},
                     {"storage_changes", storage_changes_value(o.storage_changes)},
                     {"subvm_hashes", digest_value(o.subvm_hashes)},
                     {"wasm_store_hashes", wasm_store_hashes_value(o.wasm_store_hashes)}});
}

Digest32 execution_hash(const RunOutcome& o) { return hash_value(execution_hash_input(o)); }

Value reported_result_value(const RunOutcome& o) {
  // An internal error is the node's failure, not an outcome: it commits to nothing (empty
  // hashes, as the public executor reports it).
  bool internal = o.kind == ResultCode::kInternalError;
  Value::Array nondet;
  for (const auto& b : o.nondet_results) nondet.emplace_back(b);
  return Value::map({
      {"backtrace", backtrace_value(o.backtrace)},
      {"data", o.data},
      {"data_fees_consumed", buckets_value(o.data_fees_consumed)},
      {"data_fees_remaining", ints_value(o.data_fees_remaining)},
      {"emissions", Value(Value::Array(o.emissions))},
      {"execution_hash", internal ? Value(calldata::Bytes{}) : digest_value(execution_hash(o))},
      {"kind", std::string(wire_name(o.kind))},
      {"llm_consumption", o.llm_consumption},
      {"nondet_disagreement", o.nondet_disagreement ? Value(*o.nondet_disagreement) : Value()},
      {"nondet_results", Value(std::move(nondet))},
      {"small_hash", internal ? Value(calldata::Bytes{})
                              : digest_value(small_hash(o.kind, o.data, o.subvm_hashes, o.wasm_store_hashes))},
      {"storage_changes", storage_changes_value(o.storage_changes)},
      {"wasm_store_hashes", wasm_store_hashes_value(o.wasm_store_hashes)},
  });
}

calldata::Bytes encode_reported_result(const RunOutcome& o) { return calldata::encode(reported_result_value(o)); }

calldata::Bytes encode_consumed_result(const RunOutcome& o) { return encode_consumed_result(RunOutcome(o)); }

// The same bytes as reported_result_value, built from an outcome whose large parts (data, storage
// changes, emissions, nondet results) are moved into each map in turn (the execution hash's, the
// small hash's, the report's) instead of copied into each: a result costs the executor its own
// size plus one encoding, whatever its size (docs/PROTOCOLS.md, "Memory model of a run").
calldata::Bytes encode_consumed_result(RunOutcome&& o) {
  bool internal = o.kind == ResultCode::kInternalError;
  Value data = std::move(o.data);
  Value::Array change_items;
  change_items.reserve(o.storage_changes.size());
  for (StorageDelta& d : o.storage_changes) {
    change_items.push_back(Value::array({calldata::Bytes(d.key.begin(), d.key.end()), Value()}));
    change_items.back().as_array()[1] = Value(std::move(d.value));
  }
  o.storage_changes.clear();
  Value changes(std::move(change_items));
  Value emissions(Value::Array(std::move(o.emissions)));
  Value stores = wasm_store_hashes_value(o.wasm_store_hashes);
  Value subvm = digest_value(o.subvm_hashes);
  Value backtrace = backtrace_value(o.backtrace);
  Value fees_consumed = buckets_value(o.data_fees_consumed);
  Value fees_remaining = ints_value(o.data_fees_remaining);
  Value kind = std::string(wire_name(o.kind));
  // Moves a value into a map under `key`, and (take) back out of it.
  auto put = [](Value& map, const char* key, Value& v) { map.as_map()[key] = std::move(v); };
  auto take = [](Value& map, const char* key, Value& v) { v = std::move(map.as_map()[key]); };
  Value exec_hash = Value(calldata::Bytes{}), small = Value(calldata::Bytes{});
  if (!internal) {
    Value m = Value::map({{"backtrace", backtrace},
                          {"data_fees_consumed", fees_consumed},
                          {"data_fees_remaining", fees_remaining},
                          {"kind", kind},
                          {"subvm_hashes", subvm},
                          {"wasm_store_hashes", stores}});
    put(m, "data", data), put(m, "emissions", emissions), put(m, "storage_changes", changes);
    exec_hash = digest_value(hash_value(m));
    take(m, "data", data), take(m, "emissions", emissions), take(m, "storage_changes", changes);
    Value sm = Value::map({{"kind", std::string(hash_kind(o.kind))}, {"subvm_hashes", subvm}, {"wasm_store_hashes", stores}});
    put(sm, "result", data);
    small = digest_value(hash_value(sm));
    take(sm, "result", data);
  }
  Value::Array nondet;
  nondet.reserve(o.nondet_results.size());
  for (auto& b : o.nondet_results) nondet.emplace_back(std::move(b));
  Value report = Value::map({
      {"backtrace", std::move(backtrace)},
      {"data_fees_consumed", std::move(fees_consumed)},
      {"data_fees_remaining", std::move(fees_remaining)},
      {"execution_hash", std::move(exec_hash)},
      {"kind", std::move(kind)},
      {"llm_consumption", o.llm_consumption},
      {"nondet_disagreement", o.nondet_disagreement ? Value(*o.nondet_disagreement) : Value()},
      {"small_hash", std::move(small)},
      {"wasm_store_hashes", std::move(stores)},
  });
  put(report, "data", data), put(report, "emissions", emissions), put(report, "storage_changes", changes);
  Value nondet_value(std::move(nondet));
  put(report, "nondet_results", nondet_value);
  calldata::Bytes out;
  out.reserve(64);
  out.push_back(static_cast<std::uint8_t>(o.kind));
  calldata::encode_to(report, out);
  return out;
}

namespace {

// Octets of a calldata header (ULEB128 of length << 3 | type) for `len` items or bytes; the
// type's 3 bits never change the count.
std::uint64_t header_size(std::uint64_t len) {
  std::uint64_t n = 1;
  for (std::uint64_t v = len >> 4; v != 0; v >>= 7) ++n;
  return n;
}

}  // namespace

bool apply_result_size_limit(RunOutcome& o, std::uint64_t max_bytes) {
  if (o.kind != ResultCode::kReturn && o.kind != ResultCode::kUserError) return false;
  // The storage changes as the report encodes them (storage_changes_value), counted without
  // building it: [key, value] pairs of byte strings. Their headers are 5 of a page's 73 octets,
  // too many to leave to the slice's margin (the arrays' own headers, like the report's, are).
  std::uint64_t size = 0;
  for (const StorageDelta& d : o.storage_changes) {
    size += header_size(2) + header_size(d.key.size()) + d.key.size() + header_size(d.value.size()) + d.value.size();
  }
  if (size <= max_bytes) {
    for (const Value& e : o.emissions) size += calldata::encode(e).size();
  }
  // The value last and only when the rest fits: its encoding is the one large copy made here.
  if (size <= max_bytes) size += calldata::encode(o.data).size();
  if (size <= max_bytes) return false;
  o.kind = ResultCode::kVmError;
  o.data = Value(VmError(VmError::out_of().memory(), "result too large").to_string());
  o.storage_changes.clear();
  o.emissions.clear();
  o.backtrace = std::vector<Frame>{};
  return true;
}

calldata::Bytes subvm_result_buffer(ResultCode kind, const Value& data) {
  calldata::Bytes out;
  if ((kind == ResultCode::kVmError || kind == ResultCode::kFatalVmError) && data.is_string()) {
    // Built in one go: GCC 12 misreads an insert after a one-byte vector as out of bounds.
    const std::string& s = data.as_string();
    out.resize(1 + s.size());
    out[0] = static_cast<std::uint8_t>(kind);
    std::copy(s.begin(), s.end(), out.begin() + 1);
  } else {
    out.push_back(static_cast<std::uint8_t>(kind));
    calldata::encode_to(data, out);
  }
  return out;
}

std::string gvm32(std::span<const std::uint8_t> data) {
  static constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
  std::string out;
  std::uint32_t value = 0;
  int bits = 0;
  for (std::uint8_t b : data) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += kAlphabet[(value >> bits) & 0x1f];
    }
    value &= (1u << bits) - 1;  // keep only the bits not yet emitted
  }
  if (bits > 0) out += kAlphabet[(value << (5 - bits)) & 0x1f];
  return out;
}

void apply_leader_surplus(RunOutcome& o, std::size_t provided, std::size_t consumed) {
  if (provided <= consumed) return;
  ResultCode k = o.kind == ResultCode::kFatalVmError ? ResultCode::kVmError : o.kind;
  Digest32 h = sha3_256(subvm_result_buffer(k, o.data));
  auto e = VmError{VmError::leader_fault().nondet_output().extra()}.with_param(gvm32(h).substr(0, 6));
  o.kind = ResultCode::kVmError;
  o.data = Value(e->to_string());
}

std::string strip_vm_error_detail(const std::string& s) {
  auto pos = s.find(" # ");
  return pos == std::string::npos ? s : s.substr(0, pos);
}

namespace {

bool valid_utf8(std::span<const std::uint8_t> b) {
  std::size_t i = 0;
  while (i < b.size()) {
    std::uint8_t c = b[i];
    std::size_t n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 4;
    if (n == 4 || b.size() - i <= n) return false;
    std::uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1fu) : n == 2 ? (c & 0x0fu) : (c & 0x07u);
    for (std::size_t k = 1; k <= n; ++k) {
      if ((b[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b[i + k] & 0x3fu);
    }
    static constexpr std::uint32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace

std::optional<std::string> check_leader_entry(std::span<const std::uint8_t> entry) {
  auto derived = [](VmErrorCode code) { return VmError(code).to_string(); };
  if (entry.empty()) return derived(VmError::leader_fault().nondet_output().absent());
  auto code = parse_result_code(entry[0]);
  std::span<const std::uint8_t> data = entry.subspan(1);
  if (!code || *code == ResultCode::kInternalError || *code == ResultCode::kFatalVmError) {
    return derived(VmError::leader_fault().nondet_output().malformed());
  }
  if (*code != ResultCode::kVmError) {
    // Checked, not decoded: the host's bytes may be many tiny items (56 octets each decoded).
    // validate() rejects what decode() rejects, trailing bytes included.
    if (!calldata::validate(data)) return derived(VmError::leader_fault().nondet_output().malformed());
    return std::nullopt;
  }
  if (!valid_utf8(data)) return derived(VmError::leader_fault().nondet_output().malformed());
  std::string text(data.begin(), data.end());
  // The derived namespace is checked before trie validity, so a proposal can never be echoed.
  static constexpr std::string_view kDerived = "leader_fault nondet_output";
  if (text == kDerived || (text.size() > kDerived.size() && text.starts_with(kDerived) && text[kDerived.size()] == ' ')) {
    std::string param = gvm32(sha3_256(data)).substr(0, 6);
    auto e = VmError{VmError::leader_fault().nondet_output().uses_this_error()}.with_param(param);
    std::string out = e->to_string();
    if (out == text) out = VmError{VmError::leader_fault().nondet_output().uses_this_error()}.with_param("fix_point")->to_string();
    return out;
  }
  if (text.find(" # ") != std::string::npos) return derived(VmError::leader_fault().nondet_output().malformed());
  auto parsed = VmError::parse(text);
  if (!parsed || parsed->to_string() != text) return derived(VmError::leader_fault().nondet_output().malformed());
  return std::nullopt;
}

}  // namespace genvm::executor
