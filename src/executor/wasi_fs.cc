// WASI preview 1 file system, arguments and environment of a runner contract
// (spec 02-execution-environment/02-wasip1.rst): the plan's mapped files as a read-only tree
// (runners/file_tree.h), fd 3 its preopened root "/", argv and environ from the plan. Only
// served when the contract has a plan (define_wasi asks wasi_fs_import first then); a raw wasm
// contract keeps wasi.cc's answers.
//
// Descriptors: 0 the startup message (a file until closed), 1 and 2 stdout/stderr, the
// gl_call descriptors (files), and the tree's (files or directories). Every answer depends
// only on the plan and the guest's calls: no metadata (Filestat times, dev and ino are 0),
// directory listings in name order.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "executor/vm_state.h"
#include "executor/wasi_errno.h"

namespace genvm::executor {

using wasm::Caller;
using wasm::Trap;
using runners::FileTree;

namespace {

// WASI filetypes and rights (the preview 1 witx).
enum : std::uint8_t { kTypeUnknown = 0, kTypeCharDevice = 2, kTypeDirectory = 3, kTypeRegularFile = 4 };
enum : std::uint64_t {
  kRightDatasync = 1u << 0,
  kRightRead = 1u << 1,
  kRightSeek = 1u << 2,
  kRightSync = 1u << 4,
  kRightTell = 1u << 5,
  kRightWrite = 1u << 6,
  kRightAdvise = 1u << 7,
  kRightPathOpen = 1u << 13,
  kRightReaddir = 1u << 14,
  kRightReadlink = 1u << 15,
  kRightPathFilestatGet = 1u << 18,
  kRightFilestatGet = 1u << 21,
};
// The spec's fixed rights per descriptor kind (fd_fdstat_get), never a mutating one.
constexpr std::uint64_t kFileRights = kRightRead | kRightSeek | kRightTell | kRightAdvise | kRightSync |
                                      kRightDatasync | kRightReaddir | kRightReadlink | kRightPathOpen |
                                      kRightPathFilestatGet | kRightFilestatGet;
constexpr std::uint64_t kDirRights =
    kRightRead | kRightPathOpen | kRightReaddir | kRightReadlink | kRightPathFilestatGet | kRightFilestatGet;

void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// A Filestat (64 octets): dev, ino and the three times 0, as the spec's VFS keeps no metadata.
bool write_filestat(Caller& c, std::uint32_t addr, std::uint8_t type, std::uint64_t nlink, std::uint64_t size) {
  std::uint8_t st[64] = {};
  st[16] = type;
  put_u64(st + 24, nlink);
  put_u64(st + 32, size);
  return c.write(addr, st, sizeof(st));
}

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A list of strings as WASI hands it over (args, environ): count and octets with NULs, or the
// pointers and the NUL-terminated strings.
std::int32_t list_sizes(Caller& c, const std::vector<std::string>& items, std::uint32_t count_ptr,
                        std::uint32_t size_ptr) {
  std::uint64_t size = 0;
  for (const auto& s : items) size += s.size() + 1;
  bool ok = write_u32(c, count_ptr, static_cast<std::uint32_t>(items.size())) &&
            write_u32(c, size_ptr, static_cast<std::uint32_t>(size));
  return ok ? kWasiSuccess : kWasiFault;
}

std::int32_t list_get(Caller& c, const std::vector<std::string>& items, std::uint32_t ptrs, std::uint32_t buf) {
  std::uint64_t at = buf;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (at > 0xffffffffu) return kWasiFault;
    if (!write_u32(c, static_cast<std::uint32_t>(ptrs + 4 * i), static_cast<std::uint32_t>(at))) return kWasiFault;
    if (!c.write(at, items[i].c_str(), items[i].size() + 1)) return kWasiFault;
    at += items[i].size() + 1;
  }
  return kWasiSuccess;
}

}  // namespace

std::optional<wasm::HostFunc> VmState::wasi_fs_import(const std::string& n) {
  using Args = std::span<const wasm::Value>;
  using Rets = std::span<wasm::Value>;
  auto returns = [](std::int32_t errno_value) -> wasm::HostFunc {
    return [errno_value](Caller&, Args, Rets r) -> std::optional<Trap> {
      set_ret(r, errno_value);
      return std::nullopt;
    };
  };
  // What a descriptor is: a file (bytes and its offset), a tree directory, stdout/stderr.
  struct Fd {
    enum Kind { kNone, kStdio, kFile, kDir } kind = kNone;
    std::span<const std::uint8_t> data;
    std::size_t* pos = nullptr;
    std::uint32_t node = 0;
  };
  auto lookup = [this](std::uint32_t fd) -> Fd {
    if (fd == 0 && !stdin_closed_) return Fd{Fd::kFile, std::span<const std::uint8_t>(stdin_), &stdin_pos_, 0};
    if (fd == 1 || fd == 2) return Fd{Fd::kStdio, {}, nullptr, 0};
    if (auto it = fds_.find(fd); it != fds_.end()) {
      return Fd{Fd::kFile, std::span<const std::uint8_t>(it->second.data), &it->second.pos, 0};
    }
    if (auto it = tree_fds_.find(fd); it != tree_fds_.end()) {
      const FileTree::Node& node = tree_->node(it->second.node);
      if (node.is_dir) return Fd{Fd::kDir, {}, nullptr, it->second.node};
      return Fd{Fd::kFile, bytes_of(node.contents), &it->second.pos, it->second.node};
    }
    return Fd{};
  };
  // Path resolution (02-wasip1.rst): the directory's own path and `path` joined and read
  // lexically (empty and "." dropped, ".." pops, never above the root), then walked.
  auto resolve = [this, lookup](Caller& c, std::uint32_t dir_fd, std::uint32_t path_ptr, std::uint32_t path_len,
                                std::uint32_t& node) -> std::int32_t {
    Fd dir = lookup(dir_fd);
    if (dir.kind != Fd::kDir) return kWasiBadf;
    if (path_len > FileTree::kMaxPathLen) return kWasiNametoolong;
    auto path = guest_bytes(c, path_ptr, path_len);
    if (!path) return kWasiFault;
    std::vector<std::string_view> parts;
    for (std::uint32_t at = dir.node; at != FileTree::kRoot; at = tree_->node(at).parent) {
      parts.insert(parts.begin(), tree_->node(at).name);
    }
    std::string_view text(reinterpret_cast<const char*>(path->data()), path->size());
    if (text.find('\0') != std::string_view::npos) return kWasiInval;
    for (std::size_t pos = 0; pos <= text.size();) {
      std::size_t slash = std::min(text.find('/', pos), text.size());
      std::string_view part = text.substr(pos, slash - pos);
      pos = slash + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
        continue;
      }
      if (parts.size() >= FileTree::kMaxComponents) return kWasiNametoolong;
      parts.push_back(part);
    }
    std::string joined;
    for (std::string_view p : parts) joined.append("/").append(p);
    switch (tree_->resolve(FileTree::kRoot, joined, node)) {
      case FileTree::Lookup::kFound: return kWasiSuccess;
      case FileTree::Lookup::kNotFound: return kWasiNoent;
      case FileTree::Lookup::kNotDir: return kWasiBadf;
      case FileTree::Lookup::kInvalid: return kWasiNametoolong;
    }
    return kWasiInval;
  };

  if (n == "fd_read" || n == "fd_pread") {
    bool positioned = n == "fd_pread";
    return [lookup, positioned](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      std::uint32_t iovs = arg32(a, 1), n_iovs = arg32(a, 2);
      std::uint32_t out = positioned ? arg32(a, 4) : arg32(a, 3);
      Fd fd = lookup(arg32(a, 0));
      if (fd.kind != Fd::kFile) {
        set_ret(r, fd.kind == Fd::kDir ? kWasiIsdir : fd.kind == Fd::kStdio ? kWasiAcces : kWasiBadf);
        return std::nullopt;
      }
      std::uint64_t from = positioned ? static_cast<std::uint64_t>(a[3].as_i64()) : *fd.pos;
      from = std::min<std::uint64_t>(from, fd.data.size());
      std::uint64_t total = 0;
      std::int32_t e = copy_to_iovecs(c, fd.data, from, iovs, n_iovs, total);
      if (!positioned) *fd.pos += total;
      if (e == kWasiSuccess && !write_u32(c, out, static_cast<std::uint32_t>(total))) e = kWasiFault;
      set_ret(r, e);
      return std::nullopt;
    };
  }
  if (n == "fd_seek" || n == "fd_tell") {
    bool tell = n == "fd_tell";
    return [lookup, tell](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      Fd fd = lookup(arg32(a, 0));
      if (fd.kind != Fd::kFile) {
        set_ret(r, fd.kind == Fd::kStdio ? kWasiSpipe : fd.kind == Fd::kDir ? kWasiNotsup : kWasiBadf);
        return std::nullopt;
      }
      if (!tell) {
        // set and cur clamp into [0, size]; end is not supported (02-wasip1.rst, fd_seek).
        std::int64_t offset = a[1].as_i64();
        std::uint32_t whence = arg32(a, 2);
        if (whence == 2) {
          set_ret(r, kWasiNotsup);
          return std::nullopt;
        }
        if (whence > 2) {
          set_ret(r, kWasiInval);
          return std::nullopt;
        }
        __int128 target = (whence == 0 ? 0 : static_cast<__int128>(*fd.pos)) + offset;
        target = std::clamp<__int128>(target, 0, static_cast<__int128>(fd.data.size()));
        *fd.pos = static_cast<std::size_t>(target);
      }
      std::uint32_t out = tell ? arg32(a, 1) : arg32(a, 3);
      set_ret(r, write_u64(c, out, *fd.pos) ? kWasiSuccess : kWasiFault);
      return std::nullopt;
    };
  }
  if (n == "fd_close") {
    return [this](Caller&, Args a, Rets r) -> std::optional<Trap> {
      std::uint32_t fd = arg32(a, 0);
      if (fd == 0 && !stdin_closed_) {
        stdin_closed_ = true;
        set_ret(r, kWasiSuccess);
      } else {
        set_ret(r, fds_.erase(fd) || tree_fds_.erase(fd) ? kWasiSuccess : kWasiBadf);
      }
      return std::nullopt;
    };
  }
  if (n == "fd_fdstat_get") {
    return [lookup](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      Fd fd = lookup(arg32(a, 0));
      std::uint8_t st[24] = {};
      std::uint64_t rights = 0;
      switch (fd.kind) {
        case Fd::kNone:
          set_ret(r, kWasiBadf);
          return std::nullopt;
        case Fd::kStdio: st[0] = kTypeUnknown; rights = kRightWrite; break;
        case Fd::kFile: st[0] = kTypeRegularFile; rights = kFileRights; break;
        case Fd::kDir: st[0] = kTypeDirectory; rights = kDirRights; break;
      }
      put_u64(st + 8, rights);
      put_u64(st + 16, rights);
      set_ret(r, c.write(arg32(a, 1), st, sizeof(st)) ? kWasiSuccess : kWasiFault);
      return std::nullopt;
    };
  }
  if (n == "fd_filestat_get") {
    return [lookup](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      Fd fd = lookup(arg32(a, 0));
      std::uint32_t out = arg32(a, 1);
      bool ok = true;
      switch (fd.kind) {
        case Fd::kNone:
          set_ret(r, kWasiBadf);
          return std::nullopt;
        case Fd::kStdio: ok = write_filestat(c, out, kTypeCharDevice, 1, 0); break;
        case Fd::kFile: ok = write_filestat(c, out, kTypeRegularFile, 1, fd.data.size()); break;
        case Fd::kDir: ok = write_filestat(c, out, kTypeDirectory, 1, 0); break;
      }
      set_ret(r, ok ? kWasiSuccess : kWasiFault);
      return std::nullopt;
    };
  }
  if (n == "path_filestat_get") {
    return [this, resolve](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      std::uint32_t node = 0;
      std::int32_t e = resolve(c, arg32(a, 0), arg32(a, 2), arg32(a, 3), node);
      if (e == kWasiSuccess) {
        const FileTree::Node& nd = tree_->node(node);
        bool ok = write_filestat(c, arg32(a, 4), nd.is_dir ? kTypeDirectory : kTypeRegularFile, 0,
                                 nd.is_dir ? 0 : nd.contents.size());
        e = ok ? kWasiSuccess : kWasiFault;
      }
      set_ret(r, e);
      return std::nullopt;
    };
  }
  if (n == "path_open") {
    // (dirfd, dirflags, path, path_len, oflags, rights_base, rights_inheriting, fdflags, *fd):
    // flags and rights are ignored, the tree is read-only and nothing is created.
    return [this, resolve](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      std::uint32_t node = 0;
      std::int32_t e = resolve(c, arg32(a, 0), arg32(a, 2), arg32(a, 3), node);
      if (e != kWasiSuccess) {
        set_ret(r, e);
        return std::nullopt;
      }
      std::uint32_t out = arg32(a, 8);
      if (!guest_bytes(c, out, 4)) {
        set_ret(r, kWasiFault);
        return std::nullopt;
      }
      auto charge = RamCharge::take(*ctx_.ram, kFdRamCost);
      if (!charge) return out_of_memory();
      std::uint32_t fd = next_fd_++;
      tree_fds_[fd] = TreeFd{node, 0, std::move(*charge)};
      set_ret(r, write_u32(c, out, fd) ? kWasiSuccess : kWasiFault);
      return std::nullopt;
    };
  }
  if (n == "fd_readdir") {
    // (fd, buf, buf_len, cookie, *used): ".", "..", then the children by name; d_next numbers
    // the entries from 1, d_ino is 0; a cut entry answers buf_len (the caller retries).
    return [this, lookup](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      Fd fd = lookup(arg32(a, 0));
      if (fd.kind != Fd::kDir) {
        set_ret(r, kWasiBadf);
        return std::nullopt;
      }
      std::uint32_t buf = arg32(a, 1), buf_len = arg32(a, 2), used_ptr = arg32(a, 4);
      auto cookie = static_cast<std::uint64_t>(a[3].as_i64());
      if (!guest_bytes(c, buf, buf_len)) {
        set_ret(r, kWasiFault);
        return std::nullopt;
      }
      const FileTree::Node& dir = tree_->node(fd.node);
      std::vector<std::uint8_t> out;
      std::uint64_t entries = dir.children.size() + 2;
      for (std::uint64_t i = cookie; i < entries && out.size() < buf_len; ++i) {
        std::string_view name = i == 0 ? "." : i == 1 ? ".." : std::string_view(tree_->node(dir.children[i - 2]).name);
        bool is_dir = i < 2 || tree_->node(dir.children[i - 2]).is_dir;
        std::uint8_t dirent[24] = {};
        put_u64(dirent, i + 1);
        put_u32(dirent + 16, static_cast<std::uint32_t>(name.size()));
        dirent[20] = is_dir ? kTypeDirectory : kTypeRegularFile;
        out.insert(out.end(), dirent, dirent + sizeof(dirent));
        out.insert(out.end(), name.begin(), name.end());
      }
      std::uint32_t used = static_cast<std::uint32_t>(std::min<std::size_t>(out.size(), buf_len));
      bool ok = (used == 0 || c.write(buf, out.data(), used)) && write_u32(c, used_ptr, used);
      set_ret(r, ok ? kWasiSuccess : kWasiFault);
      return std::nullopt;
    };
  }
  if (n == "fd_prestat_get" || n == "fd_prestat_dir_name") {
    // The one preopen is fd 3, the root, named "/" (02-wasip1.rst, "Initial State").
    bool name = n == "fd_prestat_dir_name";
    return [this, name](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      auto it = tree_fds_.find(arg32(a, 0));
      if (it == tree_fds_.end() || it->second.charge || it->second.node != FileTree::kRoot) {
        set_ret(r, kWasiBadf);
        return std::nullopt;
      }
      static constexpr char kRootName[] = "/";
      bool ok = true;
      if (name) {
        if (arg32(a, 2) < 1) {
          set_ret(r, kWasiOverflow);
          return std::nullopt;
        }
        ok = c.write(arg32(a, 1), kRootName, 1);
      } else {
        std::uint8_t prestat[8] = {};  // tag 0: a directory
        put_u32(prestat + 4, 1);
        ok = c.write(arg32(a, 1), prestat, sizeof(prestat));
      }
      set_ret(r, ok ? kWasiSuccess : kWasiFault);
      return std::nullopt;
    };
  }
  if (n == "args_sizes_get" || n == "args_get" || n == "environ_sizes_get" || n == "environ_get") {
    bool env = n.starts_with("environ");
    bool sizes = n.ends_with("sizes_get");
    std::vector<std::string> items;
    if (env) {
      for (const auto& [name, value] : plan_->env) items.push_back(name + "=" + value);
    } else {
      items = plan_->args;
    }
    return [items = std::move(items), sizes](Caller& c, Args a, Rets r) -> std::optional<Trap> {
      set_ret(r, sizes ? list_sizes(c, items, arg32(a, 0), arg32(a, 1)) : list_get(c, items, arg32(a, 0), arg32(a, 1)));
      return std::nullopt;
    };
  }
  if (n == "fd_advise" || n == "fd_sync" || n == "fd_datasync") return returns(kWasiSuccess);
  if (n == "path_readlink") return returns(kWasiBadf);
  if (n == "poll_oneoff" || n == "proc_raise" || n == "sched_yield" || n == "fd_pwrite" || n == "fd_renumber") {
    return returns(kWasiNotsup);
  }
  return std::nullopt;
}

}  // namespace genvm::executor
