// WASI preview 1 for contracts, deterministic (spec/02-execution-environment/02-wasip1.rst):
// stdin is the startup message, descriptors from gl_call are read-only in-memory files, stdout
// and stderr go to the executor's own (captured or discarded by the manager per debug mode),
// the clock reads 0 in deterministic code, random_get is a counter hashed with SHA3-256, there
// are no sockets. A raw wasm contract has no file system, no arguments and no environment; a
// runner contract gets its plan's (wasi_fs.cc, which then serves the descriptor calls).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "executor/vm_state.h"
#include "executor/wasi_errno.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Caller;
using wasm::FuncType;
using wasm::Trap;
using wasm::ValType;

namespace {

// The contract's stdout/stderr become the executor's, which the manager captures (or sends to
// /dev/null) per debug mode. A failed write is dropped: what the guest is told never depends on it.
void write_all(int fd, std::span<const std::uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t w = ::write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    bytes = bytes.subspan(static_cast<std::size_t>(w));
  }
}

}  // namespace

std::int32_t copy_to_iovecs(Caller& c, std::span<const std::uint8_t> data, std::size_t pos, std::uint32_t iovs,
                            std::uint32_t n_iovs, std::uint64_t& copied) {
  copied = 0;
  for (std::uint32_t i = 0; i < n_iovs; ++i) {
    std::uint32_t buf = 0, len = 0;
    if (!read_u32(c, iovs + 8 * i, buf) || !read_u32(c, iovs + 8 * i + 4, len)) return kWasiFault;
    std::size_t at = pos + copied;
    std::size_t take = at >= data.size() ? 0 : std::min<std::size_t>(len, data.size() - at);
    if (take && !c.write(buf, data.data() + at, take)) return kWasiFault;
    copied += take;
    if (take < len) break;
  }
  return kWasiSuccess;
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
        std::int32_t copy = copy_to_iovecs(c, std::span<const std::uint8_t>(*data), *pos, iovs, n_iovs, total);
        *pos += total;
        if (copy != kWasiSuccess) {
          set_ret(r, copy);
          return std::nullopt;
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
        // Each iovec goes straight from guest memory to the descriptor (no host copy), and the
        // total is capped at the size of guest memory: 192 iovecs of one 16 MiB region write
        // at most what the guest owns, and a short count tells it so (a partial write, as
        // writev may make). The first pass checks every iovec, so a FAULT writes nothing; the
        // count is the same whether the output is kept or discarded.
        std::uint64_t cap = std::min<std::uint64_t>(c.memory().size(), 0xffffffffu);
        auto walk = [&](bool emit) -> std::optional<std::uint64_t> {
          std::uint64_t total = 0;
          for (std::uint32_t i = 0; i < n_iovs && total < cap; ++i) {
            std::uint32_t buf = 0, len = 0;
            if (!read_u32(c, iovs + 8 * i, buf) || !read_u32(c, iovs + 8 * i + 4, len)) return std::nullopt;
            auto part = guest_bytes(c, buf, len);
            if (!part) return std::nullopt;
            part = part->first(std::min<std::uint64_t>(part->size(), cap - total));
            if (emit) write_all(fd, *part);
            total += part->size();
          }
          return total;
        };
        auto checked = walk(false);
        if (!checked) {
          set_ret(r, kWasiFault);
          return std::nullopt;
        }
        if (capture(ctx_.debug) != Capture::kDisabled) walk(true);
        std::uint64_t total = *checked;
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
        // Deterministic mode sees time 0 unless unsafe-tracing exposes the real clock; so does
        // a runner's genvm_preinit in every mode (its state may be a shared snapshot).
        std::uint64_t now = 0;
        if (!in_preinit_ && (!frame_.deterministic || allows_nondeterminism(ctx_.debug))) {
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
        if (!guest_bytes(c, buf, len)) {  // before `len` bytes are made
          set_ret(r, kWasiFault);
          return std::nullopt;
        }
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
    // A runner contract's file system, arguments and environment (wasi_fs.cc).
    if (tree_) {
      if (auto served = wasi_fs_import(n)) fn = std::move(*served);
    }
    if (type.results.size() > 1 || (!type.results.empty() && type.results[0] != ValType::I32)) {
      continue;  // not a WASI signature: left unresolved, linking reports it
    }
    linker.define_host(store, m, n, type, std::move(fn));
  }
}

}  // namespace genvm::executor
