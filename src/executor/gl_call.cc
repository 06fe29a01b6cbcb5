// The genlayer_sdk imports (spec 03-wasi_genlayer_sdk/01-functions.rst) and the gl_call
// dispatch: a gl_call request is one calldata map with a single key, the method, looked up in
// one table of handlers. A request that is not such a map, or names no method of the table, is
// INVAL. Handlers here: Return, UserError, Trace, Yield, GetTimestamp, EthCall; the module calls
// are in gl_modules.cc, events and messages are in gl_messages.cc, child sub-VMs in gl_subvm.cc.
#include <algorithm>
#include <chrono>

#include "common/rfc3339.h"
#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Caller;
using wasm::FuncType;
using wasm::Trap;
using wasm::ValType;

namespace {

FuncType i32s(std::size_t params, bool result) {
  FuncType t;
  t.params.assign(params, ValType::I32);
  if (result) t.results.push_back(ValType::I32);
  return t;
}

// The descriptor value of "no file", for answers without data (public NO_FILE, u32::MAX).
constexpr std::uint32_t kNoFd = 0xffffffffu;

// Every gl_call method this executor serves. Absent (INVAL): RegisterRunner, MapFile.
const std::map<std::string_view, GlHandler>& gl_handlers() {
  static const std::map<std::string_view, GlHandler> table = {
      {"Return", &VmState::gl_return},
      {"UserError", &VmState::gl_user_error},
      {"Trace", &VmState::gl_trace},
      {"Yield", &VmState::gl_yield},
      {"GetTimestamp", &VmState::gl_get_timestamp},
      {"EmitEvent", &VmState::gl_emit_event},
      {"PostMessage", &VmState::gl_post_message},
      {"DeployContract", &VmState::gl_post_message},
      {"EthSend", &VmState::gl_eth_send},
      {"EthCall", &VmState::gl_eth_call},
      {"CallContract", &VmState::gl_call_contract},
      {"RunNondet", &VmState::gl_run_nondet},
      {"Sandbox", &VmState::gl_sandbox},
      {"MapFile", &VmState::gl_map_file},
      {"RegisterRunner", &VmState::gl_register_runner},
      {"WebRender", &VmState::gl_web},
      {"WebRequest", &VmState::gl_web},
      {"ExecPrompt", &VmState::gl_llm},
      {"ExecPromptTemplate", &VmState::gl_llm},
  };
  return table;
}

}  // namespace

void VmState::define_sdk(wasm::Linker& linker, wasm::Store& store) {
  const std::string m = "genlayer_sdk";
  linker.define_host(store, m, "storage_read", i32s(4, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       if (in_preinit_) return refused_in_preinit("storage_read");
                       std::uint32_t slot_ptr = arg32(a, 0), index = arg32(a, 1), buf = arg32(a, 2), len = arg32(a, 3);
                       if (!frame_.deterministic) return set_ret(r, kForbidden), std::nullopt;
                       if (std::uint64_t(index) + len > kSlotSize) return set_ret(r, kOverflow), std::nullopt;
                       SlotId slot;
                       // The destination is checked before `len` bytes are read from storage.
                       if (!guest_bytes(c, buf, len) || !c.read(slot_ptr, slot.data(), slot.size())) {
                         return set_ret(r, kFault), std::nullopt;
                       }
                       // Straight into guest memory (already charged), through a bounded host
                       // buffer: a read costs no host copy of its size.
                       auto dest = c.memory().subspan(buf, len);
                       auto read = ctx_.storage->read_into(frame_.state, frame_.self, slot, index, dest, frame_.own_contract);
                       if (!read) return internal(read.error());
                       set_ret(r, kSuccess);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "storage_write", i32s(4, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       if (in_preinit_) return refused_in_preinit("storage_write");
                       std::uint32_t slot_ptr = arg32(a, 0), index = arg32(a, 1), buf = arg32(a, 2), len = arg32(a, 3);
                       if (!frame_.deterministic || !frame_.permissions.write_storage) {
                         return set_ret(r, kForbidden), std::nullopt;
                       }
                       if (std::uint64_t(index) + len > kSlotSize) return set_ret(r, kOverflow), std::nullopt;
                       SlotId slot;
                       auto guest = guest_bytes(c, buf, len);
                       if (!guest || !c.read(slot_ptr, slot.data(), slot.size())) return set_ret(r, kFault), std::nullopt;
                       if (!ctx_.sender_is_upgrader &&
                           std::find(ctx_.locked_slots.begin(), ctx_.locked_slots.end(), slot) != ctx_.locked_slots.end()) {
                         return set_ret(r, kForbidden), std::nullopt;
                       }
                       // A region's first write costs RAM (spec 03-ram-limiting.rst); past the
                       // budget the sub-VM ends, so writes cannot grow host memory without bound.
                       std::uint64_t new_pages = ctx_.storage->unwritten_pages(slot, index, len);
                       // The charge follows the storage, not this sub-VM: it stays with the run
                       // (a Sandbox's writes are its caller's, spec 03-ram-limiting.rst).
                       if (!ctx_.ram->charge(new_pages * kNewStoragePageCost)) return out_of_memory();
                       // And each page a run writes first costs the storage fee (gl_fees.cc).
                       if (auto t = charge_storage_pages(new_pages)) return t;
                       auto s = ctx_.storage->write(slot, index, *guest);
                       if (!s) return internal(s.error());
                       set_ret(r, kSuccess);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "get_balance", i32s(2, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       if (in_preinit_) return refused_in_preinit("get_balance");
                       calldata::Address who;
                       if (!c.read(arg32(a, 0), who.bytes.data(), 20)) return set_ret(r, kFault), std::nullopt;
                       auto b = ctx_.host->get_balance(who);
                       if (!b) return internal(b.error());
                       set_ret(r, c.write(arg32(a, 1), b->data(), 32) ? kSuccess : kFault);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "get_self_balance", i32s(1, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       if (in_preinit_) return refused_in_preinit("get_self_balance");
                       if (!frame_.deterministic) return set_ret(r, kForbidden), std::nullopt;
                       auto b = self_balance();
                       if (!b) return internal(b.error());
                       set_ret(r, c.write(arg32(a, 0), b->data(), 32) ? kSuccess : kFault);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "gl_call", i32s(3, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       if (in_preinit_) return refused_in_preinit("gl_call");
                       std::int32_t ret = kSuccess;
                       auto t = gl_call(c, arg32(a, 0), arg32(a, 1), arg32(a, 2), ret);
                       set_ret(r, ret);
                       return t;
                     });
}

std::optional<Trap> VmState::gl_call(Caller& c, std::uint32_t req_ptr, std::uint32_t len, std::uint32_t fd_ptr,
                                     std::int32_t& ret) {
  ret = kSuccess;
  auto guest = guest_bytes(c, req_ptr, len);
  if (!guest) {
    ret = kFault;
    return std::nullopt;
  }
  // The decoded request is a host copy of guest bytes: charged while it is served (and, for
  // Return / UserError, until the result has been handed on). It is charged at its footprint,
  // what its items take in host memory (56 octets a null), and the decode stops before it holds
  // more than the budget has left: that is the sub-VM's OOM, as deterministic as the budget.
  std::uint64_t footprint = 0;
  auto v = calldata::decode(*guest, calldata::DecodeLimits{.max_footprint = ctx_.ram->left()}, &footprint);
  if (!v && v.error().errc == static_cast<int>(calldata::DecodeErrc::kFootprintExceeded)) return out_of_memory();
  std::optional<RamCharge> copy;
  if (v) copy = charge_copy(footprint);
  if (v && !copy) return out_of_memory();  // not reached: the decode held at most what was left
  if (!v || !v->is_map() || v->as_map().size() != 1) {
    ret = kInval;
    return std::nullopt;
  }
  auto& [method, body] = *v->as_map().begin();
  auto handler = gl_handlers().find(method);
  if (handler == gl_handlers().end()) {
    ret = kInval;
    return std::nullopt;
  }
  GlCall g{c, method, body, fd_ptr, ret, *copy};
  return (this->*handler->second)(g);
}

std::optional<Trap> VmState::give_fd(GlCall& g, calldata::Bytes data) {
  auto fd = new_fd(std::move(data));
  if (!fd) return out_of_memory();
  if (!write_u32(g.caller, g.fd_ptr, *fd)) {
    fds_.erase(*fd);
    g.ret = kFault;
  }
  return std::nullopt;
}

// The value stays charged (the request's charge moves with it) until the result is handed on.
std::optional<Trap> VmState::gl_return(GlCall& g) {
  ending_charge_ = std::move(g.request_charge);
  return end(ResultCode::kReturn, std::move(g.body));
}

std::optional<Trap> VmState::gl_user_error(GlCall& g) {
  ending_charge_ = std::move(g.request_charge);
  return end(ResultCode::kUserError, std::move(g.body));
}

std::optional<Trap> VmState::no_fd(GlCall& g) {
  if (!write_u32(g.caller, g.fd_ptr, kNoFd)) g.ret = kFault;
  return std::nullopt;
}

std::optional<Trap> VmState::gl_trace(GlCall& g) {
  // {"Trace": {"Message": text}}: logged at safe-unbounded and above, returns nothing.
  if (g.body.is_map()) {
    const Value* msg = g.body.find("Message");
    if (g.body.as_map().size() != 1 || !msg || !msg->is_string()) return answer(g, kInval);
    if (allows_tracing(ctx_.debug)) log(LogLevel::kInfo, "trace", msg->as_string());
    return no_fd(g);
  }
  // {"Trace": "RuntimeMicroSec"}: microseconds since this sub-VM started, exactly 0 in
  // deterministic mode unless unsafe-tracing (02-gl_call.rst; the value is never discretionary).
  if (g.body.is_string() && g.body.as_string() == "RuntimeMicroSec") {
    std::int64_t micros = 0;
    if (!frame_.deterministic || allows_nondeterminism(ctx_.debug)) {
      micros = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started_)
                   .count();
    }
    return give_fd(g, calldata::encode(Value(micros)));
  }
  return answer(g, kInval);
}

std::optional<Trap> VmState::gl_yield(GlCall& g) {
  // {"Yield": null}: a cooperative yield that has nothing to yield to here; succeeds, no value.
  if (!g.body.is_null()) return answer(g, kInval);
  return no_fd(g);
}

std::optional<Trap> VmState::gl_get_timestamp(GlCall& g) {
  // {"GetTimestamp": null}: seconds since the Unix epoch as a calldata number, the message's
  // datetime in deterministic mode, the wall clock in non-deterministic mode (floor seconds).
  if (!g.body.is_null()) return answer(g, kInval);
  std::int64_t seconds = 0;
  if (frame_.deterministic) {
    const Value* datetime = frame_.startup_message.find("datetime");
    auto t = datetime && datetime->is_string() ? parse_rfc3339(datetime->as_string())
                                               : Result<UtcTime>(make_error("bad_timestamp", "no message datetime"));
    if (!t) return internal(t.error());
    seconds = t->unix_seconds;
  } else {
    seconds = utc_now().unix_seconds;
  }
  return give_fd(g, calldata::encode(Value(seconds)));
}

std::optional<Trap> VmState::gl_eth_call(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.call_others) return answer(g, kForbidden);
  const Value* address = g.body.find("address");
  const Value* data = g.body.find("calldata");
  if (!address || !address->is_address() || !data || !data->is_bytes()) return answer(g, kInval);
  auto res = ctx_.host->eth_call(address->as_address(), data->as_bytes());
  if (!res) {
    if (host_error(res.error()) == HostError::kEvmReverted) return end_vm_error(VmError::evm().reverted());
    if (host_error(res.error()) == HostError::kForbidden) return answer(g, kForbidden);
    return internal(res.error());
  }
  return give_fd(g, std::move(*res));
}

}  // namespace genvm::executor
