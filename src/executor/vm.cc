#include "executor/vm.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "common/blake3.h"
#include "wasm/wasm.h"

namespace genvm::executor {

namespace {

using calldata::Value;
using wasm::Caller;
using wasm::FuncType;
using wasm::Trap;
using wasm::TrapKind;
using wasm::ValType;

// genlayer_sdk error codes (spec 03-wasi_genlayer_sdk/index.rst).
enum : std::int32_t {
  kSuccess = 0,
  kOverflow = 1,
  kInval = 2,
  kFault = 3,
  kIo = 5,
  kForbidden = 6,
  kInbalance = 7,
};

// RAM charged for the first write of a kPageSize storage region (spec internal-constants.rst,
// memory_limiter_consts.new_storage_page).
constexpr std::uint64_t kNewStoragePageCost = 256;

// WASI errno values used here.
enum : std::int32_t {
  kWasiSuccess = 0,
  kWasiAcces = 2,
  kWasiBadf = 8,
  kWasiFault = 21,
  kWasiInval = 28,
  kWasiNosys = 52,
  kWasiRofs = 69,
  kWasiSpipe = 70,
};

// How a run ended, when it ended from inside an import.
struct Ending {
  ResultCode kind = ResultCode::kVmError;
  Value data;
};

Result<calldata::Bytes> module_call(const std::string& uri, std::unique_ptr<HostConnection>& conn,
                                    const calldata::Bytes& request);

// One sub-VM's mutable state while its module runs.
class VmState {
 public:
  VmState(RunContext& ctx, const VmFrame& frame) : ctx_(ctx), frame_(frame) {
    stdin_ = calldata::encode(frame.startup_message);
  }

  VmResult run(const calldata::Bytes& code);

 private:
  // Module::load through ctx_.module_cache_dir when set (hit, or load then store the entry).
  Result<std::shared_ptr<const wasm::Module>> load_module_cached(const calldata::Bytes& code,
                                                                 const wasm::LoadOptions& lo);
  const calldata::Bytes* code_ = nullptr;  // this sub-VM's module (nondet blocks run it too)
  Trap end(ResultCode kind, Value data) {
    ending_ = Ending{kind, std::move(data)};
    Trap t;
    t.kind = TrapKind::kHostExit;
    return t;
  }
  Trap internal(const Error& e) {
    ending_ = Ending{ResultCode::kInternalError, Value(e.to_string())};
    Trap t;
    t.kind = TrapKind::kHostError;
    t.message = e.to_string();
    return t;
  }

  void define_wasi(wasm::Linker& linker, wasm::Store& store, const wasm::Module& module);
  void define_sdk(wasm::Linker& linker, wasm::Store& store);
  std::optional<Trap> gl_call(Caller& c, std::uint32_t req, std::uint32_t len, std::uint32_t fd_ptr,
                              std::int32_t& ret);
  template <typename GiveFd>
  std::optional<Trap> run_nondet(Caller& c, const Value& body, std::int32_t& ret, GiveFd& give_fd);
  std::uint32_t new_fd(calldata::Bytes data) {
    std::uint32_t fd = next_fd_++;
    fds_[fd] = {std::move(data), 0};
    return fd;
  }
  void log(std::string_view kind, std::string_view text);
  Result<U256Le> self_balance() {
    auto b = ctx_.host->get_balance(frame_.self);
    if (!b || !frame_.own_contract) return b;
    return u256_sub(u256_add(*b, ctx_.message_value), ctx_.value_sent);
  }
  // Reserves `value` from the contract's balance for a message; false: not enough (INBALANCE).
  Result<bool> spend(const Value& value) {
    U256Le v = u256_from(value.as_int());
    if (v == U256Le{}) return true;
    auto b = self_balance();
    if (!b) return b.take_error();
    if (u256_less(*b, v)) return false;
    ctx_.value_sent = u256_add(ctx_.value_sent, v);
    return true;
  }

  RunContext& ctx_;
  const VmFrame& frame_;
  calldata::Bytes stdin_;
  std::size_t stdin_pos_ = 0;
  bool stdin_closed_ = false;
  struct ReadFd {
    calldata::Bytes data;
    std::size_t pos;
  };
  std::map<std::uint32_t, ReadFd> fds_;
  std::uint32_t next_fd_ = 3;
  std::optional<Ending> ending_;
  SubVmHashAccumulator subvm_;
  std::uint64_t random_counter_ = 0;
};

std::string json_escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void VmState::log(std::string_view kind, std::string_view text) {
  if (ctx_.log_fd < 0) return;
  std::string line = "{\"event\":\"" + std::string(kind) + "\",\"text\":\"" + json_escape(text) + "\"}\n";
  // Best effort: a log line that cannot be written must not change the run's result.
  [[maybe_unused]] ssize_t n = ::write(ctx_.log_fd, line.data(), line.size());
}

bool read_u32(Caller& c, std::uint32_t addr, std::uint32_t& out) {
  std::uint8_t b[4];
  if (!c.read(addr, b, 4)) return false;
  out = std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
  return true;
}

bool write_u32(Caller& c, std::uint32_t addr, std::uint32_t v) {
  std::uint8_t b[4] = {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
  return c.write(addr, b, 4);
}

bool write_u64(Caller& c, std::uint32_t addr, std::uint64_t v) {
  std::uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return c.write(addr, b, 8);
}

std::uint32_t arg32(std::span<const wasm::Value> a, std::size_t i) { return static_cast<std::uint32_t>(a[i].as_i32()); }

void set_ret(std::span<wasm::Value> r, std::int32_t v) {
  if (!r.empty()) r[0] = wasm::Value::i32(v);
}

void VmState::define_wasi(wasm::Linker& linker, wasm::Store& store, const wasm::Module& module) {
  const std::string m = "wasi_snapshot_preview1";
  for (const auto& imp : module.imports()) {
    if (imp.module != m || imp.kind != 'f') continue;
    const std::string& n = imp.name;
    const FuncType& type = imp.func_type;
    wasm::HostFunc fn;
    auto returns = [](std::int32_t errno_value) {
      return [errno_value](Caller&, std::span<const wasm::Value>, std::span<wasm::Value> r) -> std::optional<Trap> {
        set_ret(r, errno_value);
        return std::nullopt;
      };
    };
    if (n == "proc_exit") {
      fn = [this](Caller&, std::span<const wasm::Value> a, std::span<wasm::Value>) -> std::optional<Trap> {
        auto e = VmError{VmError::exit_code()}.with_param(std::to_string(a[0].as_i32()));
        return end(ResultCode::kVmError, Value(e->to_string()));
      };
    } else if (n == "fd_read") {
      fn = [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        std::uint32_t fd = arg32(a, 0), iovs = arg32(a, 1), n_iovs = arg32(a, 2), out = arg32(a, 3);
        calldata::Bytes* data = nullptr;
        std::size_t* pos = nullptr;
        if (fd == 0 && !stdin_closed_) {
          data = &stdin_;
          pos = &stdin_pos_;
        } else if (auto it = fds_.find(fd); it != fds_.end()) {
          data = &it->second.data;
          pos = &it->second.pos;
        } else {
          set_ret(r, kWasiBadf);
          return std::nullopt;
        }
        std::uint64_t total = 0;
        for (std::uint32_t i = 0; i < n_iovs; ++i) {
          std::uint32_t buf = 0, len = 0;
          if (!read_u32(c, iovs + 8 * i, buf) || !read_u32(c, iovs + 8 * i + 4, len)) {
            set_ret(r, kWasiFault);
            return std::nullopt;
          }
          std::size_t take = std::min<std::size_t>(len, data->size() - *pos);
          if (take && !c.write(buf, data->data() + *pos, take)) {
            set_ret(r, kWasiFault);
            return std::nullopt;
          }
          *pos += take;
          total += take;
          if (take < len) break;
        }
        set_ret(r, write_u32(c, out, static_cast<std::uint32_t>(total)) ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n == "fd_write") {
      fn = [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        std::uint32_t fd = arg32(a, 0), iovs = arg32(a, 1), n_iovs = arg32(a, 2), out = arg32(a, 3);
        if (fd != 1 && fd != 2) {
          set_ret(r, kWasiBadf);
          return std::nullopt;
        }
        std::uint64_t total = 0;
        std::string text;
        for (std::uint32_t i = 0; i < n_iovs; ++i) {
          std::uint32_t buf = 0, len = 0;
          if (!read_u32(c, iovs + 8 * i, buf) || !read_u32(c, iovs + 8 * i + 4, len)) {
            set_ret(r, kWasiFault);
            return std::nullopt;
          }
          std::string part(len, '\0');
          if (len && !c.read(buf, part.data(), len)) {
            set_ret(r, kWasiFault);
            return std::nullopt;
          }
          text += part;
          total += len;
        }
        // The contract's stdout/stderr become the executor's, which the manager captures (or
        // sends to /dev/null) per debug mode; the answer to the guest is the same either way.
        if (capture(ctx_.debug) != Capture::kDisabled) {
          [[maybe_unused]] ssize_t w = ::write(fd, text.data(), text.size());
        }
        set_ret(r, write_u32(c, out, static_cast<std::uint32_t>(total)) ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n == "fd_close") {
      fn = [this](Caller&, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        std::uint32_t fd = arg32(a, 0);
        if (fd == 0 && !stdin_closed_) {
          stdin_closed_ = true;
          set_ret(r, kWasiSuccess);
        } else {
          set_ret(r, fds_.erase(fd) ? kWasiSuccess : kWasiBadf);
        }
        return std::nullopt;
      };
    } else if (n == "fd_fdstat_get") {
      fn = [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        std::uint32_t fd = arg32(a, 0), out = arg32(a, 1);
        std::uint8_t st[24] = {};
        if (fd <= 2) {
          st[0] = 2;  // character device
        } else if (fds_.count(fd)) {
          st[0] = 4;  // regular file
        } else {
          set_ret(r, kWasiBadf);
          return std::nullopt;
        }
        std::memset(st + 8, 0xff, 16);  // all rights
        set_ret(r, c.write(out, st, sizeof(st)) ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n == "fd_prestat_get" || n == "fd_prestat_dir_name") {
      fn = returns(kWasiBadf);  // no preopened directories
    } else if (n == "fd_seek" || n == "fd_tell") {
      fn = returns(kWasiSpipe);
    } else if (n == "args_sizes_get" || n == "environ_sizes_get") {
      fn = [](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        bool ok = write_u32(c, arg32(a, 0), 0) && write_u32(c, arg32(a, 1), 0);
        set_ret(r, ok ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n == "args_get" || n == "environ_get" || n == "sched_yield") {
      fn = returns(kWasiSuccess);
    } else if (n == "clock_time_get") {
      fn = [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        // Deterministic mode sees time 0 unless unsafe-tracing exposes the real clock.
        std::uint64_t now = 0;
        if (!frame_.deterministic || allows_nondeterminism(ctx_.debug)) {
          now = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count());
        }
        set_ret(r, write_u64(c, arg32(a, 2), now) ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n == "clock_res_get") {
      fn = [](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        set_ret(r, write_u64(c, arg32(a, 1), 1) ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n == "random_get") {
      fn = [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
        // Deterministic: SHA3-256 blocks of a per-VM counter, identical on every node.
        std::uint32_t buf = arg32(a, 0), len = arg32(a, 1);
        calldata::Bytes out;
        while (out.size() < len) {
          std::uint8_t ctr[8];
          for (int i = 0; i < 8; ++i) ctr[i] = static_cast<std::uint8_t>(random_counter_ >> (8 * i));
          ++random_counter_;
          Digest32 d = sha3_256(ctr);
          out.insert(out.end(), d.begin(), d.end());
        }
        set_ret(r, c.write(buf, out.data(), len) ? kWasiSuccess : kWasiFault);
        return std::nullopt;
      };
    } else if (n.starts_with("sock_")) {
      fn = returns(kWasiAcces);
    } else if (n == "fd_allocate" || n == "fd_fdstat_set_flags" || n == "fd_fdstat_set_rights" ||
               n == "fd_filestat_set_size" || n == "fd_filestat_set_times" || n == "path_create_directory" ||
               n == "path_filestat_set_times" || n == "path_link" || n == "path_remove_directory" ||
               n == "path_rename" || n == "path_symlink" || n == "path_unlink_file") {
      fn = returns(kWasiRofs);
    } else {
      fn = returns(kWasiNosys);
    }
    if (type.results.size() > 1 || (!type.results.empty() && type.results[0] != ValType::I32)) {
      continue;  // not a WASI signature: left unresolved, linking reports it
    }
    linker.define_host(store, m, n, type, std::move(fn));
  }
}

FuncType i32s(std::size_t params, bool result) {
  FuncType t;
  t.params.assign(params, ValType::I32);
  if (result) t.results.push_back(ValType::I32);
  return t;
}

void VmState::define_sdk(wasm::Linker& linker, wasm::Store& store) {
  const std::string m = "genlayer_sdk";
  linker.define_host(store, m, "storage_read", i32s(4, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       std::uint32_t slot_ptr = arg32(a, 0), index = arg32(a, 1), buf = arg32(a, 2), len = arg32(a, 3);
                       if (!frame_.deterministic) return set_ret(r, kForbidden), std::nullopt;
                       if (std::uint64_t(index) + len > kSlotSize) return set_ret(r, kOverflow), std::nullopt;
                       SlotId slot;
                       if (!c.read(slot_ptr, slot.data(), slot.size())) return set_ret(r, kFault), std::nullopt;
                       auto data = ctx_.storage->read(frame_.state, frame_.self, slot, index, len, frame_.own_contract);
                       if (!data) return internal(data.error());
                       if (len && !c.write(buf, data->data(), len)) return set_ret(r, kFault), std::nullopt;
                       set_ret(r, kSuccess);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "storage_write", i32s(4, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       std::uint32_t slot_ptr = arg32(a, 0), index = arg32(a, 1), buf = arg32(a, 2), len = arg32(a, 3);
                       if (!frame_.deterministic || !frame_.permissions.write_storage) {
                         return set_ret(r, kForbidden), std::nullopt;
                       }
                       if (std::uint64_t(index) + len > kSlotSize) return set_ret(r, kOverflow), std::nullopt;
                       SlotId slot;
                       calldata::Bytes data(len);
                       if (!c.read(slot_ptr, slot.data(), slot.size()) || (len && !c.read(buf, data.data(), len))) {
                         return set_ret(r, kFault), std::nullopt;
                       }
                       if (!ctx_.sender_is_upgrader &&
                           std::find(ctx_.locked_slots.begin(), ctx_.locked_slots.end(), slot) != ctx_.locked_slots.end()) {
                         return set_ret(r, kForbidden), std::nullopt;
                       }
                       // A region's first write costs RAM (spec 03-ram-limiting.rst); past the
                       // budget the sub-VM ends, so writes cannot grow host memory without bound.
                       std::uint64_t cost = ctx_.storage->unwritten_pages(slot, index, len) * kNewStoragePageCost;
                       if (!c.store().charge_ram(cost)) {
                         return end(ResultCode::kVmError,
                                    Value(VmError(VmError::out_of().memory(), "storage writes").to_string()));
                       }
                       auto s = ctx_.storage->write(slot, index, data);
                       if (!s) return internal(s.error());
                       set_ret(r, kSuccess);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "get_balance", i32s(2, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       calldata::Address who;
                       if (!c.read(arg32(a, 0), who.bytes.data(), 20)) return set_ret(r, kFault), std::nullopt;
                       auto b = ctx_.host->get_balance(who);
                       if (!b) return internal(b.error());
                       set_ret(r, c.write(arg32(a, 1), b->data(), 32) ? kSuccess : kFault);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "get_self_balance", i32s(1, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       if (!frame_.deterministic) return set_ret(r, kForbidden), std::nullopt;
                       auto b = self_balance();
                       if (!b) return internal(b.error());
                       set_ret(r, c.write(arg32(a, 0), b->data(), 32) ? kSuccess : kFault);
                       return std::nullopt;
                     });
  linker.define_host(store, m, "gl_call", i32s(3, true),
                     [this](Caller& c, std::span<const wasm::Value> a, std::span<wasm::Value> r) -> std::optional<Trap> {
                       std::int32_t ret = kSuccess;
                       auto t = gl_call(c, arg32(a, 0), arg32(a, 1), arg32(a, 2), ret);
                       set_ret(r, ret);
                       return t;
                     });
}

bool is_u256(const Value& v) { return v.is_int() && !v.as_int().is_negative() && v.as_int().bit_length() <= 256; }

std::optional<Trap> VmState::gl_call(Caller& c, std::uint32_t req_ptr, std::uint32_t len, std::uint32_t fd_ptr,
                                     std::int32_t& ret) {
  calldata::Bytes req(len);
  if (len && !c.read(req_ptr, req.data(), len)) {
    ret = kFault;
    return std::nullopt;
  }
  auto v = calldata::decode(req);
  if (!v || !v->is_map() || v->as_map().size() != 1) {
    ret = kInval;
    return std::nullopt;
  }
  const std::string& method = v->as_map().begin()->first;
  const Value& body = v->as_map().begin()->second;
  const Permissions& p = frame_.permissions;
  auto inval = [&]() -> std::optional<Trap> {
    ret = kInval;
    return std::nullopt;
  };
  auto forbidden = [&]() -> std::optional<Trap> {
    ret = kForbidden;
    return std::nullopt;
  };
  auto give_fd = [&](calldata::Bytes data) -> std::optional<Trap> {
    std::uint32_t fd = new_fd(std::move(data));
    if (!write_u32(c, fd_ptr, fd)) {
      fds_.erase(fd);
      ret = kFault;
    }
    return std::nullopt;
  };

  if (method == "Return") return end(ResultCode::kReturn, body);
  if (method == "UserError") return end(ResultCode::kUserError, body);
  if (method == "Trace") {
    // Trace never fails and returns nothing; output only at safe-unbounded and above.
    const Value* msg = body.find("Message");
    if (allows_tracing(ctx_.debug) && msg && msg->is_string()) log("trace", msg->as_string());
    return std::nullopt;
  }
  if (method == "EmitEvent") {
    if (!frame_.deterministic || !p.write_storage) return forbidden();
    const Value* topics = body.find("topics");
    const Value* blob = body.find("blob");
    if (!body.is_map() || !topics || !topics->is_array() || topics->as_array().size() > 4 || !blob || !blob->is_map()) {
      return inval();
    }
    for (const Value& t : topics->as_array()) {
      if (!t.is_bytes() || t.as_bytes().size() != 32) return inval();
    }
    ctx_.emissions.push_back(Value::map({{"type", "EmitEvent"}, {"topics", *topics}, {"blob", *blob}, {"storage_fee", 0}}));
    return std::nullopt;
  }
  if (method == "PostMessage" || method == "DeployContract") {
    if (!frame_.deterministic || !p.send_messages) return forbidden();
    const Value* calldata_v = body.find("calldata");
    const Value* value = body.find("value");
    const Value* on = body.find("on");
    const Value* address = body.find("address");
    const Value* code = body.find("code");
    const Value* use_balance = body.find("use_balance");
    bool deploy = method == "DeployContract";
    if (!body.is_map() || !calldata_v || !value || !is_u256(*value) || !on || !on->is_string() ||
        (on->as_string() != "finalized" && on->as_string() != "accepted")) {
      return inval();
    }
    if (deploy ? (!code || !code->is_bytes()) : (!address || !address->is_address())) return inval();
    // Balance-funded fees need fee metering, which this executor does not do yet.
    if (use_balance && !(use_balance->is_bool() && !use_balance->as_bool())) return inval();
    if (!validate_entry(calldata::encode(*calldata_v), deploy).ok()) return inval();
    auto key = call_key(*calldata_v, deploy);
    if (!key) return inval();
    Value::Map e{{"type", method}, {"calldata", *calldata_v}, {"value", *value}, {"on", *on},
                 {"call_key", *key}, {"message_fee", 0}, {"receipt_fee", 0}, {"use_balance", false}};
    if (deploy) {
      const Value* salt = body.find("salt_nonce");
      if (!salt || !is_u256(*salt)) return inval();
      e["code"] = *code;
      e["salt_nonce"] = *salt;
    } else {
      e["address"] = *address;
    }
    auto funded = spend(*value);
    if (!funded) return internal(funded.error());
    if (!*funded) {
      ret = kInbalance;
      return std::nullopt;
    }
    ctx_.emissions.push_back(Value(std::move(e)));
    return std::nullopt;
  }
  if (method == "EthSend") {
    if (!frame_.deterministic || !p.send_messages) return forbidden();
    const Value* address = body.find("address");
    const Value* data = body.find("calldata");
    const Value* value = body.find("value");
    if (!address || !address->is_address() || !data || !data->is_bytes() || !value || !is_u256(*value)) return inval();
    auto funded = spend(*value);
    if (!funded) return internal(funded.error());
    if (!*funded) {
      ret = kInbalance;
      return std::nullopt;
    }
    ctx_.emissions.push_back(Value::map({{"type", "EthSend"}, {"address", *address}, {"calldata", *data},
                                         {"value", *value}, {"message_fee", 0}, {"receipt_fee", 0}}));
    return std::nullopt;
  }
  if (method == "EthCall") {
    if (!frame_.deterministic || !p.call_others) return forbidden();
    const Value* address = body.find("address");
    const Value* data = body.find("calldata");
    if (!address || !address->is_address() || !data || !data->is_bytes()) return inval();
    auto res = ctx_.host->eth_call(address->as_address(), data->as_bytes());
    if (!res) {
      if (res.error().code == "host_evm_reverted") {
        VmError e{VmError::evm().reverted()};
        return end(ResultCode::kVmError, Value(e.to_string()));
      }
      if (res.error().code == "host_forbidden") return forbidden();
      return internal(res.error());
    }
    return give_fd(std::move(*res));
  }
  if (method == "CallContract") {
    if (!frame_.deterministic || !p.call_others) return forbidden();
    const Value* address = body.find("address");
    const Value* data = body.find("calldata");
    const Value* state = body.find("state");
    if (!address || !address->is_address() || !data || !state || !state->is_int()) return inval();
    auto st = state->as_int().to_uint64();
    if (!st || *st > 2) return inval();
    if (!validate_entry(calldata::encode(*data), false).ok()) return inval();
    if (frame_.depth + 1 >= kMaxVmDepth) {
      VmError e{VmError::out_of().vm_recursion()};
      return end(ResultCode::kVmError, Value(e.to_string()));
    }
    // Ask the host whether the callee runs elsewhere; only the in-process path exists here.
    auto route = ctx_.host->resolve_callcontract_executor(address->as_address(), static_cast<StorageType>(*st),
                                                          kCurrentMajor);
    if (!route) return internal(route.error());
    if (!route->is_null()) return inval();
    StorageType child_state = *st == 0 ? frame_.state : static_cast<StorageType>(*st);
    // A read-only child never sees this run's uncommitted writes (depth > 0 reads skip them).
    auto code = read_contract_code(*ctx_.storage, address->as_address(), child_state, false);
    if (!code) return internal(code.error());
    VmFrame child;
    child.self = address->as_address();
    child.state = child_state;
    child.permissions = Permissions{};
    child.deterministic = true;
    child.depth = frame_.depth + 1;
    child.own_contract = false;
    child.ram_budget = frame_.ram_budget;
    Value::Map msg = frame_.startup_message.as_map();
    msg["contract_address"] = address->as_address();
    Value::Array stack = msg["stack"].is_array() ? msg["stack"].as_array() : Value::Array{};
    stack.emplace_back(frame_.self);
    msg["stack"] = std::move(stack);
    msg["entry_data"] = calldata::encode(*data);
    msg["value"] = 0;
    msg["is_init"] = false;
    child.startup_message = Value(std::move(msg));
    std::vector<Value> saved;
    saved.swap(ctx_.emissions);
    VmResult res = run_vm(ctx_, child, *code);
    saved.swap(ctx_.emissions);  // a read-only child cannot emit; restore the parent's list
    if (res.kind == ResultCode::kInternalError) return internal(make_error("child", res.data.is_string() ? res.data.as_string() : ""));
    subvm_.fold(small_hash(res.kind, res.data, res.subvm_hashes, res.wasm_store_hashes));
    if (res.kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, res.data);
    return give_fd(subvm_result_buffer(res.kind, res.data));
  }
  if (method == "RunNondet") return run_nondet(c, body, ret, give_fd);
  if (method == "Sandbox") {
    const Value* data = body.find("data");
    const Value* runner = body.find("runner");
    const Value* allow_write = body.find("allow_write_storage");
    const Value* allow_send = body.find("allow_send_messages");
    const Value* allow_register = body.find("allow_register_runners");
    if (!body.is_map() || !data || !data->is_bytes() || !runner || !runner->is_string() || !allow_write ||
        !allow_write->is_bool() || !allow_send || !allow_send->is_bool() || !allow_register || !allow_register->is_bool()) {
      return inval();
    }
    // Only the calling contract's own code is a runner here (no runner archives yet).
    if (runner->as_string() != "contract") return inval();
    if (frame_.depth + 1 >= kMaxVmDepth) {
      VmError e{VmError::out_of().vm_recursion()};
      return end(ResultCode::kVmError, Value(e.to_string()));
    }
    VmFrame child;
    child.self = frame_.self;
    child.state = frame_.state;
    child.deterministic = frame_.deterministic;  // the caller's determinism level
    child.permissions.write_storage = p.write_storage && allow_write->as_bool();
    child.permissions.send_messages = p.send_messages && allow_send->as_bool();
    child.permissions.call_others = p.call_others;
    child.permissions.spawn_nondet = false;  // nondet blocks only from the entry VM (docs: ## Consensus)
    child.depth = frame_.depth + 1;
    child.ram_budget = frame_.ram_budget;
    child.fuel = frame_.fuel;
    child.own_contract = frame_.own_contract;
    Value::Map msg = frame_.startup_message.as_map();
    msg["entry_kind"] = static_cast<int>(EntryKind::kSandbox);
    msg["entry_data"] = data->as_bytes();
    msg["entry_stage_data"] = Value();
    child.startup_message = Value(std::move(msg));
    // Its writes and emissions are the caller's own and are not reverted on error (gl_call spec).
    VmResult res = run_vm(ctx_, child, *code_);
    if (res.kind == ResultCode::kInternalError) return internal(make_error("sandbox", res.data.is_string() ? res.data.as_string() : ""));
    if (child.deterministic) subvm_.fold(small_hash(res.kind, res.data, res.subvm_hashes, res.wasm_store_hashes));
    if (res.kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, res.data);
    return give_fd(subvm_result_buffer(res.kind, res.data));
  }
  if (method == "WebRender" || method == "WebRequest" || method == "ExecPrompt" || method == "ExecPromptTemplate") {
    if (frame_.deterministic) return forbidden();
    bool web = method.starts_with("Web");
    const std::string& uri = web ? ctx_.module_web_uri : ctx_.module_llm_uri;
    std::unique_ptr<HostConnection>& conn = web ? ctx_.module_web : ctx_.module_llm;
    if (uri.empty()) return forbidden();  // requirement "module availability" not met
    auto answer = module_call(uri, conn, req);
    if (!answer) {
      // A module that fails is the block's I/O failure: only non-deterministic code sees it.
      log("module_error", answer.error().to_string());
      ret = kIo;
      return std::nullopt;
    }
    return give_fd(std::move(*answer));
  }
  // RegisterRunner, MapFile: not in this executor yet.
  return inval();
}

// RunNondet (docs/PROTOCOLS.md, ## Consensus). The block is this contract's own module run again
// as a non-deterministic sub-VM (entry_kind consensus_stage): `data_leader` as entry_data in a
// leader run; in a validator run `data_validator` as entry_data and the leader's entry as
// entry_stage_data, and what it returns is the vote. Either way the contract gets the leader's
// [code][data] on a descriptor, so leader and validators continue from the same value.
template <typename GiveFd>
std::optional<Trap> VmState::run_nondet(Caller&, const Value& body, std::int32_t& ret, GiveFd& give_fd) {
  if (!frame_.deterministic || !frame_.permissions.spawn_nondet) {
    ret = kForbidden;
    return std::nullopt;
  }
  const Value* data_leader = body.find("data_leader");
  const Value* data_validator = body.find("data_validator");
  const Value* runner = body.find("runner");
  if (!body.is_map() || !data_leader || !data_leader->is_bytes() || !data_validator || !data_validator->is_bytes() ||
      (runner && !(runner->is_string() && runner->as_string() == "contract"))) {
    ret = kInval;
    return std::nullopt;
  }
  // Faults from here on are fatal: the consensus data is unusable, no parent may catch it.
  auto fatal = [&](VmErrorCode code, std::string detail) {
    return end(ResultCode::kFatalVmError, Value(VmError(code, std::move(detail)).to_string()));
  };
  if (ctx_.nondet_calls >= kMaxNondetBlocks) {
    return fatal(VmError::oom().ram().limit(), "more than " + std::to_string(kMaxNondetBlocks) + " nondet blocks");
  }
  std::uint32_t call_no = ctx_.nondet_calls++;
  VmFrame child;
  child.self = frame_.self;
  child.state = frame_.state;
  child.permissions = Permissions{};
  child.deterministic = false;
  child.depth = frame_.depth + 1;
  child.ram_budget = frame_.ram_budget;  // seeded from the caller's
  child.fuel = ctx_.nondet_fuel;
  Value::Map msg = frame_.startup_message.as_map();
  msg["entry_kind"] = static_cast<int>(EntryKind::kConsensusStage);
  // Runs the leader or validator stage of the block. Its emissions are not the caller's: they
  // are set aside for the stage and restored after it. (Only one stage runs per call.)
  auto run_stage = [&](Value entry_data, Value stage_data) {
    msg["entry_data"] = std::move(entry_data);
    msg["entry_stage_data"] = std::move(stage_data);
    child.startup_message = Value(std::move(msg));
    std::vector<Value> saved;
    saved.swap(ctx_.emissions);
    VmResult res = run_vm(ctx_, child, *code_);
    saved.swap(ctx_.emissions);
    return res;
  };
  if (ctx_.is_leader) {
    VmResult res = run_stage(data_leader->as_bytes(), Value());
    if (res.kind == ResultCode::kInternalError) {
      return internal(make_error("nondet", res.data.is_string() ? res.data.as_string() : ""));
    }
    if (res.kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, res.data);
    // The nondet channel carries bare codes: the detail is not consensus data.
    Value published = res.kind == ResultCode::kVmError ? Value(strip_vm_error_detail(res.data.as_string())) : res.data;
    calldata::Bytes entry = subvm_result_buffer(res.kind, published);
    ctx_.nondet_results.push_back(entry);
    return give_fd(std::move(entry));
  }
  if (!ctx_.leader_results || call_no >= ctx_.leader_results->size()) {
    return fatal(VmError::leader_fault().nondet_output().absent(), "no leader entry for call " + std::to_string(call_no));
  }
  const calldata::Bytes& entry = (*ctx_.leader_results)[call_no];
  if (auto derived = check_leader_entry(entry)) {
    auto e = VmError::parse(*derived);
    return end(ResultCode::kFatalVmError, Value(e ? e->with_detail("call " + std::to_string(call_no)).to_string() : *derived));
  }
  // Sync mode: the accepted entry is simply the call's result; there is no vote to cast.
  if (ctx_.sync) return give_fd(calldata::Bytes(entry));
  VmResult res = run_stage(data_validator->as_bytes(), entry);
  if (res.kind == ResultCode::kInternalError) {
    return internal(make_error("nondet", res.data.is_string() ? res.data.as_string() : ""));
  }
  if (res.kind == ResultCode::kFatalVmError) return end(ResultCode::kFatalVmError, res.data);
  // The vote: Return true agrees; every other result counts as false.
  bool agrees = res.kind == ResultCode::kReturn && res.data.is_bool() && res.data.as_bool();
  if (!agrees && !ctx_.nondet_disagreement) {
    ctx_.nondet_disagreement = call_no;
    if (auto s = ctx_.host->notify_nondet_disagreement(call_no); !s) return internal(s.error());
  }
  return give_fd(calldata::Bytes(entry));
}

// One module request: `u32 BE length ‖ calldata` each way. The answer must be calldata.
Result<calldata::Bytes> module_call(const std::string& uri, std::unique_ptr<HostConnection>& conn,
                                    const calldata::Bytes& request) {
  static constexpr std::uint32_t kMaxModuleFrame = 64u << 20;
  if (!conn) {
    auto c = HostConnection::connect(uri, {});
    if (!c) return c.take_error();
    conn = std::move(*c);
  }
  if (conn->poisoned()) return *conn->poisoned();
  auto fail = [&](Error e) {
    conn->poison(e);
    return e;
  };
  std::uint32_t n = static_cast<std::uint32_t>(request.size());
  std::uint8_t len[4] = {std::uint8_t(n >> 24), std::uint8_t(n >> 16), std::uint8_t(n >> 8), std::uint8_t(n)};
  if (auto s = conn->write_all(len); !s) return fail(s.error());
  if (auto s = conn->write_all(request); !s) return fail(s.error());
  if (auto s = conn->read_exact(len, 4); !s) return fail(s.error());
  std::uint32_t m = std::uint32_t(len[0]) << 24 | std::uint32_t(len[1]) << 16 | std::uint32_t(len[2]) << 8 | len[3];
  if (m > kMaxModuleFrame) return fail(make_error("module_oversized", "answer of " + std::to_string(m) + " bytes"));
  calldata::Bytes answer(m);
  if (m) {
    if (auto s = conn->read_exact(answer.data(), m); !s) return fail(s.error());
  }
  if (!calldata::decode(answer)) return fail(make_error("module_protocol", "answer is not calldata"));
  return answer;
}

WasmStoreHashes fingerprint(const wasm::Store& store) {
  WasmStoreHashes out;
  for (const auto& mv : wasm::memories_for_fingerprint(store)) {
    blake3::Digest d = blake3::hash(mv.bytes);
    Digest32 dd;
    std::copy(d.begin(), d.end(), dd.begin());
    out[mv.module].memories.push_back(dd);
  }
  return out;
}

std::string module_cache_path(const std::string& dir, const calldata::Bytes& code, const wasm::LoadOptions& lo) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto h = blake3::hash(code);
  std::string name;
  for (std::uint8_t b : h) {
    name += kHex[b >> 4];
    name += kHex[b & 15];
  }
  name += lo.deterministic ? "-d1" : "-d0";
  name += lo.metering ? "m1" : "m0";
  return dir + "/" + name + ".gvmc";
}

// A cache entry mapped read-only (no copy: a 1 MiB contract's entry is ~3 MB); empty when the
// file cannot be read (absent is the common case: a miss). Unmapped on destruction.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const std::uint8_t*>(p);
        size_ = std::size_t(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  bool ok() const { return data_ != nullptr; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// Temp file in the cache directory, then rename: a reader sees the old entry, no entry, or the
// whole new one, however many runs race to write it. Returns "" or why it failed.
std::string write_atomically(const std::string& path, const std::vector<std::uint8_t>& data) {
  // The directory is made on first use (owner-only: see --help on who may write it).
  if (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0)
    ::mkdir(path.substr(0, slash).c_str(), 0700);
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return std::string("cannot create a temp file: ") + std::strerror(errno);
  std::size_t done = 0;
  std::string err;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = std::string("write: ") + std::strerror(errno);
      break;
    }
    done += std::size_t(n);
  }
  if (::close(fd) != 0 && err.empty()) err = std::string("close: ") + std::strerror(errno);
  if (err.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) err = std::string("rename: ") + std::strerror(errno);
  if (!err.empty()) ::unlink(tmp.c_str());
  return err;
}

Result<std::shared_ptr<const wasm::Module>> VmState::load_module_cached(const calldata::Bytes& code,
                                                                        const wasm::LoadOptions& lo) {
  if (ctx_.module_cache_dir.empty()) return wasm::Module::load(code, lo);
  const std::string path = module_cache_path(ctx_.module_cache_dir, code, lo);
  if (MappedFile blob(path); blob.ok()) {
    // A file truncated under the mapping by a concurrent writer cannot happen: writers rename a
    // new file over the name, so this mapping keeps the old inode whole.
    auto hit = wasm::Module::load_with_compiled(code, lo, blob.bytes());
    if (hit) {
      log("module_cache", "module cache hit " + path);
      return hit;
    }
    log("module_cache", "module cache entry refused (" + hit.error().to_string() + "), compiling: " + path);
  } else {
    log("module_cache", "module cache miss " + path);
  }
  auto loaded = wasm::Module::load(code, lo);
  if (!loaded) return loaded;
  // A cache that cannot be written costs the next run its compile, never this run its result.
  auto blob = (*loaded)->serialize_compiled();
  std::string err = blob ? write_atomically(path, *blob) : blob.error().to_string();
  log("module_cache", err.empty() ? "module cache stored " + path : "module cache write failed (" + err + "): " + path);
  return loaded;
}

VmResult VmState::run(const calldata::Bytes& code) {
  code_ = &code;
  VmResult out;
  auto fail = [&](VmErrorCode error_code, std::string detail) {
    out.kind = ResultCode::kVmError;
    out.data = Value(VmError(error_code, std::move(detail)).to_string());
    out.subvm_hashes = subvm_.finalize();
    return out;
  };
  static constexpr std::uint8_t kWasmMagic[4] = {0, 'a', 's', 'm'};
  if (code.size() < 4 || std::memcmp(code.data(), kWasmMagic, 4) != 0) {
    return fail(VmError::invalid_contract().runner().malformed(), "code is not a wasm module");
  }
  wasm::LoadOptions lo;
  lo.deterministic = frame_.deterministic;
  lo.metering = frame_.fuel.has_value();
  auto key = std::make_tuple(code, lo.deterministic, lo.metering);
  auto cached = ctx_.modules.find(key);
  std::shared_ptr<const wasm::Module> module;
  if (cached != ctx_.modules.end()) {
    module = cached->second;
  } else {
    auto loaded = load_module_cached(code, lo);
    if (!loaded) return fail(VmError::invalid_contract().wasm().validating(), "");
    module = *loaded;
    ctx_.modules.emplace(std::move(key), module);
  }
  wasm::StoreConfig sc;
  sc.ram_budget = frame_.ram_budget;
  if (frame_.fuel) {
    sc.fuel_enabled = true;
    sc.fuel = *frame_.fuel;
  }
  wasm::Store store(sc);
  if (frame_.fuel) store.set_fuel(*frame_.fuel);
  wasm::Linker linker;
  define_wasi(linker, store, *module);
  define_sdk(linker, store);
  auto inst = linker.instantiate(store, module, "contract");
  if (!inst) {
    const Error& e = inst.error();
    if (e.code == "unlinkable") return fail(VmError::invalid_contract().wasm().linking(), "");
    // An initial reservation over the RAM budget (spec 03-ram-limiting.rst: out_of memory
    // wasm_memory / wasm_table), or a trap of the start function or of a segment initializer
    // (code "uninstantiable", message "wasm_trap <kind>").
    if (e.code == "memory_over_budget") return fail(VmError::out_of().memory().wasm_memory(), "");
    if (e.code == "table_over_budget") return fail(VmError::out_of().memory().wasm_table(), "");
    if (e.message.starts_with("wasm_trap ")) {
      if (auto t = VmError::parse(e.message)) {
        out.kind = ResultCode::kVmError;
        out.data = Value(t->to_string());
        out.subvm_hashes = subvm_.finalize();
        return out;
      }
    }
    return fail(VmError::wasm_trap().fault(), e.message);
  }
  wasm::FuncInst* start = (*inst)->get_func("_start");
  if (!start || !wasm::func_type(start).params.empty() || !wasm::func_type(start).results.empty()) {
    return fail(VmError::invalid_contract().wasm().entrypoint(), "");
  }
  auto outcome = store.call(start, {});
  out.subvm_hashes = subvm_.finalize();
  if (ending_) {
    out.kind = ending_->kind;
    out.data = std::move(ending_->data);
  } else if (!outcome) {
    out.kind = ResultCode::kInternalError;
    out.data = Value(outcome.error().to_string());
  } else if (outcome->ok()) {
    auto e = VmError{VmError::exit_code()}.with_param("0");
    out.kind = ResultCode::kVmError;
    out.data = Value(e->to_string());
  } else {
    const Trap& t = *outcome->trap;
    out.kind = ResultCode::kVmError;
    out.data = Value(t.public_string());
  }
  if (out.kind == ResultCode::kUserError || out.kind == ResultCode::kVmError || out.kind == ResultCode::kFatalVmError) {
    out.wasm_store_hashes = fingerprint(store);
    // The wasm call stack where the run ended (spec 05-result.rst), most recent frame first: a
    // trap's own frames, or for an import that ended the run (UserError, proc_exit) the frames
    // below that call. A plain return from _start has no stack left: [].
    std::vector<Frame> bt;
    if (outcome && outcome->trap) {
      for (const wasm::TrapFrame& f : outcome->trap->frames) {
        if (bt.size() == kMaxBacktraceFrames) break;
        bt.push_back(Frame{f.module, f.func_index});
      }
    }
    out.backtrace = std::move(bt);
  }
  return out;
}

}  // namespace

VmResult run_vm(RunContext& ctx, const VmFrame& frame, const calldata::Bytes& code) {
  VmState st(ctx, frame);
  return st.run(code);
}

Result<calldata::Bytes> read_contract_code(Storage& storage, const calldata::Address& address, StorageType state,
                                           bool with_own_writes) {
  auto code_slot_bytes = storage.read(state, address, kRootSlot, kRootOffsetCodeSlot, kSlotIdSize, with_own_writes);
  if (!code_slot_bytes) return code_slot_bytes.take_error();
  SlotId slot{};
  std::copy(code_slot_bytes->begin(), code_slot_bytes->end(), slot.begin());
  if (slot == SlotId{}) slot = indirection_slot(kRootSlot, kRootOffsetCode);
  auto len_le = storage.read(state, address, slot, 0, 4, with_own_writes);
  if (!len_le) return len_le.take_error();
  std::uint32_t len = std::uint32_t((*len_le)[0]) | std::uint32_t((*len_le)[1]) << 8 |
                      std::uint32_t((*len_le)[2]) << 16 | std::uint32_t((*len_le)[3]) << 24;
  if (std::uint64_t(len) + 4 > kSlotSize) return make_error("storage_overflow", "stored code length too large");
  return storage.read(state, address, slot, 4, len, with_own_writes);
}

Status write_deployed_code(Storage& storage, const calldata::Bytes& code) {
  if (code.size() + 4 > kSlotSize) return make_error("storage_overflow", "code too large");
  calldata::Bytes blob(4 + code.size());
  auto n = static_cast<std::uint32_t>(code.size());
  for (int i = 0; i < 4; ++i) blob[i] = static_cast<std::uint8_t>(n >> (8 * i));
  std::copy(code.begin(), code.end(), blob.begin() + 4);
  if (auto s = storage.write(indirection_slot(kRootSlot, kRootOffsetCode), 0, blob); !s) return s;
  std::uint8_t major = kCurrentMajor;
  return storage.write(kRootSlot, kRootOffsetMajor, std::span<const std::uint8_t>(&major, 1));
}

U256Le u256_add(const U256Le& a, const U256Le& b) {
  U256Le out{};
  unsigned carry = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    unsigned x = unsigned(a[i]) + unsigned(b[i]) + carry;
    out[i] = static_cast<std::uint8_t>(x);
    carry = x >> 8;
  }
  if (carry) out.fill(0xff);
  return out;
}

U256Le u256_sub(const U256Le& a, const U256Le& b) {
  if (u256_less(a, b)) return U256Le{};
  U256Le out{};
  int borrow = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    int x = int(a[i]) - int(b[i]) - borrow;
    borrow = x < 0;
    out[i] = static_cast<std::uint8_t>(x + (borrow ? 256 : 0));
  }
  return out;
}

bool u256_less(const U256Le& a, const U256Le& b) {
  for (std::size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

U256Le u256_from(const BigInt& v) {
  U256Le out{};
  const auto& limbs = v.magnitude();
  for (std::size_t l = 0; l < limbs.size() && l < 8; ++l) {
    for (int k = 0; k < 4; ++k) out[4 * l + k] = static_cast<std::uint8_t>(limbs[l] >> (8 * k));
  }
  return out;
}

Result<WriteProtection> read_write_protection(Storage& storage, const calldata::Address& address) {
  WriteProtection out;
  auto list = [&](std::uint32_t offset, std::size_t item, std::uint32_t limit,
                  VmErrorCode too_many) -> Result<calldata::Bytes> {
    SlotId slot = indirection_slot(kRootSlot, offset);
    auto n_le = storage.read(StorageType::kDefault, address, slot, 0, 4);
    if (!n_le) return n_le.take_error();
    std::uint32_t n = std::uint32_t((*n_le)[0]) | std::uint32_t((*n_le)[1]) << 8 |
                      std::uint32_t((*n_le)[2]) << 16 | std::uint32_t((*n_le)[3]) << 24;
    if (n > limit) return make_error(std::string(too_many.wire_code()), "the root slot lists " + std::to_string(n));
    return storage.read(StorageType::kDefault, address, slot, 4, static_cast<std::uint32_t>(n * item));
  };
  auto locked = list(kRootOffsetLockedSlots, kSlotIdSize, kMaxLockedSlots, VmError::out_of().locked_slots());
  if (!locked) return locked.take_error();
  for (std::size_t i = 0; i + kSlotIdSize <= locked->size(); i += kSlotIdSize) {
    SlotId s;
    std::copy(locked->begin() + static_cast<std::ptrdiff_t>(i), locked->begin() + static_cast<std::ptrdiff_t>(i + kSlotIdSize), s.begin());
    out.locked_slots.push_back(s);
  }
  auto ups = list(kRootOffsetUpgraders, kAddressSize, kMaxUpgraders, VmError::out_of().upgraders());
  if (!ups) return ups.take_error();
  for (std::size_t i = 0; i + kAddressSize <= ups->size(); i += kAddressSize) {
    calldata::Address a;
    std::copy(ups->begin() + static_cast<std::ptrdiff_t>(i), ups->begin() + static_cast<std::ptrdiff_t>(i + kAddressSize), a.bytes.begin());
    out.upgraders.push_back(a);
  }
  return out;
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
