// WASI preview1 for `genvm-wasm run`: enough for clang --target=wasm32-wasi programs that print,
// read stdin, read files and list directories under --dir pre-opens. Honest and simple: the
// clock and random are the host's (the GenVM executor has its own deterministic WASI). Paths
// that are absolute or contain ".." are refused (ENOTCAPABLE). Unimplemented imports from
// wasi_snapshot_preview1 return ENOSYS (52).
#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include "tools/genvm-wasm/tool.h"

namespace genvm_wasm_tool {

using namespace genvm::wasm;

namespace {

constexpr int32_t kSuccess = 0, kEAcces = 2, kEBadf = 8, kEExist = 20, kEFault = 21, kEInval = 28,
                  kEIo = 29, kEIsdir = 31, kENoent = 44, kENosys = 52, kENotdir = 54,
                  kENotempty = 55, kENotcapable = 76;
constexpr uint8_t kFtUnknown = 0, kFtChar = 2, kFtDir = 3, kFtFile = 4, kFtSymlink = 7;

int32_t map_errno(int e) {
  switch (e) {
    case ENOENT: return kENoent;
    case EACCES: case EPERM: return kEAcces;
    case EBADF: return kEBadf;
    case EEXIST: return kEExist;
    case EINVAL: return kEInval;
    case ENOTDIR: return kENotdir;
    case EISDIR: return kEIsdir;
    case ENOTEMPTY: return kENotempty;
    default: return kEIo;
  }
}

uint8_t filetype_of(mode_t m) {
  if (S_ISDIR(m)) return kFtDir;
  if (S_ISREG(m)) return kFtFile;
  if (S_ISCHR(m)) return kFtChar;
  if (S_ISLNK(m)) return kFtSymlink;
  return kFtUnknown;
}

struct Fd {
  int host = -1;
  bool is_dir = false;
  bool preopen = false;
  std::string guest_name;  // for pre-opens
  std::string host_path;   // for directories (readdir, path_* relative lookups)
};

struct Wasi {
  std::vector<std::string> args, env;
  std::map<int32_t, Fd> fds;
  int32_t next_fd = 3;

  // Memory helpers; false when out of bounds.
  static bool get(Caller& c, uint64_t addr, void* out, uint64_t n) { return c.read(addr, out, n); }
  static bool put(Caller& c, uint64_t addr, const void* in, uint64_t n) { return c.write(addr, in, n); }
  template <class T>
  static bool put_t(Caller& c, uint64_t addr, T v) { return put(c, addr, &v, sizeof v); }

  int32_t strings_sizes(Caller& c, const std::vector<std::string>& v, uint32_t count_ptr, uint32_t size_ptr) {
    uint32_t total = 0;
    for (const auto& s : v) total += uint32_t(s.size() + 1);
    if (!put_t<uint32_t>(c, count_ptr, uint32_t(v.size())) || !put_t<uint32_t>(c, size_ptr, total)) return kEFault;
    return kSuccess;
  }
  int32_t strings_get(Caller& c, const std::vector<std::string>& v, uint32_t ptrs, uint32_t buf) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!put_t<uint32_t>(c, ptrs + 4 * i, buf)) return kEFault;
      if (!put(c, buf, v[i].c_str(), v[i].size() + 1)) return kEFault;
      buf += uint32_t(v[i].size() + 1);
    }
    return kSuccess;
  }

  // Resolves a guest path relative to a directory fd; refuses escapes.
  int32_t resolve(Caller& c, int32_t dirfd, uint32_t ptr, uint32_t len, std::string& out) {
    auto it = fds.find(dirfd);
    if (it == fds.end()) return kEBadf;
    if (!it->second.is_dir) return kENotdir;
    std::string p(len, '\0');
    if (!get(c, ptr, p.data(), len)) return kEFault;
    if (!p.empty() && p[0] == '/') return kENotcapable;
    size_t start = 0;
    while (start <= p.size()) {
      size_t e = p.find('/', start);
      if (e == std::string::npos) e = p.size();
      if (p.compare(start, e - start, "..") == 0 && e - start == 2) return kENotcapable;
      start = e + 1;
    }
    out = it->second.host_path + "/" + p;
    return kSuccess;
  }

  int32_t iov_io(Caller& c, int32_t fd, uint32_t iovs, uint32_t n, uint32_t result_ptr, bool write) {
    auto it = fds.find(fd);
    int host = -1;
    if (fd >= 0 && fd <= 2 && it == fds.end()) host = fd;
    else if (it != fds.end() && !it->second.is_dir) host = it->second.host;
    else return kEBadf;
    auto mem = c.memory();
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t iov[2];
      if (!get(c, uint64_t(iovs) + 8ull * i, iov, 8)) return kEFault;
      if (uint64_t(iov[0]) + iov[1] > mem.size()) return kEFault;
      ssize_t r = write ? ::write(host, mem.data() + iov[0], iov[1]) : ::read(host, mem.data() + iov[0], iov[1]);
      if (r < 0) return map_errno(errno);
      total += uint64_t(r);
      if (size_t(r) < iov[1]) break;
    }
    if (!put_t<uint32_t>(c, result_ptr, uint32_t(total))) return kEFault;
    return kSuccess;
  }
};

using Args = std::span<const Value>;

}  // namespace

int run_wasi(const std::string& path, const RunOptions& opts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "genvm-wasm: cannot read " << path << "\n";
    return 2;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LoadOptions lo;
  lo.metering = opts.fuel;
  lo.deterministic = opts.deterministic;
  lo.engine = opts.engine;
  lo.compile = opts.compile;
  auto m = Module::load(bytes, lo);
  if (!m) {
    std::cerr << "genvm-wasm: " << m.error().to_string() << "\n";
    return 1;
  }
  if (opts.engine == Engine::kJit) std::cerr << engine_note(**m) << "\n";
  StoreConfig sc;
  sc.fuel_enabled = opts.fuel;
  sc.fuel = opts.fuel_amount;
  Store store(sc);
  Linker linker;
  auto w = std::make_shared<Wasi>();
  w->args = opts.args;
  w->env = opts.env;
  for (const auto& [host, guest] : opts.dirs) {
    int fd = ::open(host.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
      std::cerr << "genvm-wasm: cannot open --dir " << host << "\n";
      return 2;
    }
    Fd f;
    f.host = fd;
    f.is_dir = true;
    f.preopen = true;
    f.guest_name = guest;
    f.host_path = host;
    w->fds[w->next_fd++] = f;
  }

  using V = ValType;
  const std::string W = "wasi_snapshot_preview1";
  std::map<std::string, std::pair<FuncType, HostFunc>> impls;
  auto def = [&](const std::string& name, std::vector<V> params, std::vector<V> results, HostFunc fn) {
    impls[name] = {FuncType{std::move(params), std::move(results)}, std::move(fn)};
  };
  auto ret = [](std::span<Value> r, int32_t v) -> std::optional<Trap> {
    r[0] = Value::i32(v);
    return std::nullopt;
  };
  auto u = [](const Value& v) { return uint32_t(v.as_i32()); };

  def("args_sizes_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    return ret(r, w->strings_sizes(c, w->args, u(a[0]), u(a[1])));
  });
  def("args_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    return ret(r, w->strings_get(c, w->args, u(a[0]), u(a[1])));
  });
  def("environ_sizes_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    return ret(r, w->strings_sizes(c, w->env, u(a[0]), u(a[1])));
  });
  def("environ_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    return ret(r, w->strings_get(c, w->env, u(a[0]), u(a[1])));
  });
  def("fd_write", {V::I32, V::I32, V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    return ret(r, w->iov_io(c, a[0].as_i32(), u(a[1]), u(a[2]), u(a[3]), true));
  });
  def("fd_read", {V::I32, V::I32, V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    return ret(r, w->iov_io(c, a[0].as_i32(), u(a[1]), u(a[2]), u(a[3]), false));
  });
  def("clock_time_get", {V::I32, V::I64, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    clockid_t id;
    switch (a[0].as_i32()) {
      case 0: id = CLOCK_REALTIME; break;
      case 1: id = CLOCK_MONOTONIC; break;
      case 2: id = CLOCK_PROCESS_CPUTIME_ID; break;
      case 3: id = CLOCK_THREAD_CPUTIME_ID; break;
      default: return ret(r, kEInval);
    }
    timespec ts;
    clock_gettime(id, &ts);
    uint64_t ns = uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
    return ret(r, Wasi::put_t<uint64_t>(c, u(a[2]), ns) ? kSuccess : kEFault);
  });
  def("clock_res_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    if (a[0].as_i32() < 0 || a[0].as_i32() > 3) return ret(r, kEInval);
    return ret(r, Wasi::put_t<uint64_t>(c, u(a[1]), 1) ? kSuccess : kEFault);
  });
  def("random_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    auto mem = c.memory();
    uint64_t p = u(a[0]), n = u(a[1]);
    if (p + n > mem.size()) return ret(r, kEFault);
    uint64_t done = 0;
    while (done < n) {
      ssize_t k = getrandom(mem.data() + p + done, n - done, 0);
      if (k <= 0) return ret(r, kEIo);
      done += uint64_t(k);
    }
    return ret(r, kSuccess);
  });
  def("proc_exit", {V::I32}, {}, [=](Caller&, Args a, std::span<Value>) -> std::optional<Trap> {
    Trap t;
    t.kind = TrapKind::kHostExit;
    t.exit_code = a[0].as_i32();
    t.message = "proc_exit";
    return t;
  });
  def("sched_yield", {}, {V::I32}, [=](Caller&, Args, std::span<Value> r) { return ret(r, kSuccess); });
  def("fd_close", {V::I32}, {V::I32}, [=](Caller&, Args a, std::span<Value> r) {
    auto it = w->fds.find(a[0].as_i32());
    if (it == w->fds.end()) return ret(r, a[0].as_i32() >= 0 && a[0].as_i32() <= 2 ? kSuccess : kEBadf);
    ::close(it->second.host);
    w->fds.erase(it);
    return ret(r, kSuccess);
  });
  def("fd_seek", {V::I32, V::I64, V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    auto it = w->fds.find(a[0].as_i32());
    if (it == w->fds.end()) return ret(r, kEBadf);
    if (it->second.is_dir) return ret(r, kEIsdir);
    int whence = a[2].as_i32() == 0 ? SEEK_SET : a[2].as_i32() == 1 ? SEEK_CUR : a[2].as_i32() == 2 ? SEEK_END : -1;
    if (whence < 0) return ret(r, kEInval);
    off_t o = lseek(it->second.host, off_t(a[1].as_i64()), whence);
    if (o < 0) return ret(r, map_errno(errno));
    return ret(r, Wasi::put_t<uint64_t>(c, u(a[3]), uint64_t(o)) ? kSuccess : kEFault);
  });
  def("fd_fdstat_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    int32_t fd = a[0].as_i32();
    uint8_t buf[24] = {0};
    auto it = w->fds.find(fd);
    if (it == w->fds.end() && (fd < 0 || fd > 2)) return ret(r, kEBadf);
    int host = it == w->fds.end() ? fd : it->second.host;
    struct stat st;
    if (fstat(host, &st) != 0) return ret(r, map_errno(errno));
    buf[0] = it == w->fds.end() ? kFtChar : filetype_of(st.st_mode);
    uint64_t rights = ~uint64_t(0);
    std::memcpy(buf + 8, &rights, 8);
    std::memcpy(buf + 16, &rights, 8);
    return ret(r, Wasi::put(c, u(a[1]), buf, 24) ? kSuccess : kEFault);
  });
  def("fd_fdstat_set_flags", {V::I32, V::I32}, {V::I32}, [=](Caller&, Args, std::span<Value> r) { return ret(r, kENosys); });
  def("fd_prestat_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    auto it = w->fds.find(a[0].as_i32());
    if (it == w->fds.end() || !it->second.preopen) return ret(r, kEBadf);
    uint32_t pre[2] = {0, uint32_t(it->second.guest_name.size())};
    return ret(r, Wasi::put(c, u(a[1]), pre, 8) ? kSuccess : kEFault);
  });
  def("fd_prestat_dir_name", {V::I32, V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    auto it = w->fds.find(a[0].as_i32());
    if (it == w->fds.end() || !it->second.preopen) return ret(r, kEBadf);
    const std::string& n = it->second.guest_name;
    if (u(a[2]) < n.size()) return ret(r, kEInval);
    return ret(r, Wasi::put(c, u(a[1]), n.data(), n.size()) ? kSuccess : kEFault);
  });
  auto filestat = [](Caller& c, uint32_t ptr, const struct stat& st) {
    uint8_t buf[64] = {0};
    uint64_t v;
    v = uint64_t(st.st_dev); std::memcpy(buf + 0, &v, 8);
    v = uint64_t(st.st_ino); std::memcpy(buf + 8, &v, 8);
    buf[16] = filetype_of(st.st_mode);
    v = uint64_t(st.st_nlink); std::memcpy(buf + 24, &v, 8);
    v = uint64_t(st.st_size); std::memcpy(buf + 32, &v, 8);
    v = uint64_t(st.st_atim.tv_sec) * 1000000000ull + uint64_t(st.st_atim.tv_nsec); std::memcpy(buf + 40, &v, 8);
    v = uint64_t(st.st_mtim.tv_sec) * 1000000000ull + uint64_t(st.st_mtim.tv_nsec); std::memcpy(buf + 48, &v, 8);
    v = uint64_t(st.st_ctim.tv_sec) * 1000000000ull + uint64_t(st.st_ctim.tv_nsec); std::memcpy(buf + 56, &v, 8);
    return Wasi::put(c, ptr, buf, 64);
  };
  def("fd_filestat_get", {V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    int32_t fd = a[0].as_i32();
    auto it = w->fds.find(fd);
    if (it == w->fds.end() && (fd < 0 || fd > 2)) return ret(r, kEBadf);
    struct stat st;
    if (fstat(it == w->fds.end() ? fd : it->second.host, &st) != 0) return ret(r, map_errno(errno));
    return ret(r, filestat(c, u(a[1]), st) ? kSuccess : kEFault);
  });
  def("path_filestat_get", {V::I32, V::I32, V::I32, V::I32, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    std::string p;
    int32_t e = w->resolve(c, a[0].as_i32(), u(a[2]), u(a[3]), p);
    if (e) return ret(r, e);
    struct stat st;
    int rc = (a[1].as_i32() & 1) ? stat(p.c_str(), &st) : lstat(p.c_str(), &st);
    if (rc != 0) return ret(r, map_errno(errno));
    return ret(r, filestat(c, u(a[4]), st) ? kSuccess : kEFault);
  });
  def("path_open", {V::I32, V::I32, V::I32, V::I32, V::I32, V::I64, V::I64, V::I32, V::I32}, {V::I32},
      [=](Caller& c, Args a, std::span<Value> r) {
        std::string p;
        int32_t e = w->resolve(c, a[0].as_i32(), u(a[2]), u(a[3]), p);
        if (e) return ret(r, e);
        uint32_t oflags = u(a[4]);
        uint64_t rights = uint64_t(a[5].as_i64());
        uint32_t fdflags = u(a[7]);
        bool want_read = rights & 0x2, want_write = rights & 0x40;
        int flags = O_CLOEXEC;
        if (oflags & 2) flags |= O_DIRECTORY;
        if (oflags & 1) flags |= O_CREAT;
        if (oflags & 4) flags |= O_EXCL;
        if (oflags & 8) flags |= O_TRUNC;
        if (fdflags & 1) flags |= O_APPEND;
        struct stat st;
        bool is_dir = stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        if (is_dir || (oflags & 2)) flags |= O_RDONLY;
        else if (want_write && want_read) flags |= O_RDWR;
        else if (want_write) flags |= O_WRONLY;
        else flags |= O_RDONLY;
        int fd = ::open(p.c_str(), flags, 0644);
        if (fd < 0) return ret(r, map_errno(errno));
        Fd f;
        f.host = fd;
        f.is_dir = is_dir || (oflags & 2);
        f.host_path = p;
        int32_t gfd = w->next_fd++;
        w->fds[gfd] = f;
        return ret(r, Wasi::put_t<uint32_t>(c, u(a[8]), uint32_t(gfd)) ? kSuccess : kEFault);
      });
  def("fd_readdir", {V::I32, V::I32, V::I32, V::I64, V::I32}, {V::I32}, [=](Caller& c, Args a, std::span<Value> r) {
    auto it = w->fds.find(a[0].as_i32());
    if (it == w->fds.end()) return ret(r, kEBadf);
    if (!it->second.is_dir) return ret(r, kENotdir);
    DIR* d = opendir(it->second.host_path.c_str());
    if (!d) return ret(r, map_errno(errno));
    std::vector<std::pair<std::string, std::pair<uint64_t, uint8_t>>> entries;
    while (dirent* de = readdir(d)) {
      uint8_t t = de->d_type == DT_DIR ? kFtDir : de->d_type == DT_REG ? kFtFile : de->d_type == DT_LNK ? kFtSymlink : kFtUnknown;
      entries.push_back({de->d_name, {uint64_t(de->d_ino), t}});
    }
    closedir(d);
    std::sort(entries.begin(), entries.end());
    uint64_t cookie = uint64_t(a[3].as_i64());
    uint32_t buf = u(a[1]), len = u(a[2]), used = 0;
    for (uint64_t i = cookie; i < entries.size() && used < len; ++i) {
      const auto& [name, info] = entries[i];
      uint8_t hdr[24] = {0};
      uint64_t next = i + 1;
      std::memcpy(hdr, &next, 8);
      std::memcpy(hdr + 8, &info.first, 8);
      uint32_t nl = uint32_t(name.size());
      std::memcpy(hdr + 16, &nl, 4);
      hdr[20] = info.second;
      std::string rec(reinterpret_cast<char*>(hdr), 24);
      rec += name;
      uint32_t n = std::min<uint32_t>(uint32_t(rec.size()), len - used);
      if (!Wasi::put(c, uint64_t(buf) + used, rec.data(), n)) return ret(r, kEFault);
      used += n;
    }
    return ret(r, Wasi::put_t<uint32_t>(c, u(a[4]), used) ? kSuccess : kEFault);
  });

  for (const auto& im : (*m)->imports()) {
    if (im.kind != 'f') {
      std::cerr << "genvm-wasm: unsupported import " << im.module << "." << im.name << "\n";
      return 1;
    }
    auto it = im.module == W ? impls.find(im.name) : impls.end();
    if (it != impls.end() && it->second.first == im.func_type) {
      linker.define_host(store, im.module, im.name, it->second.first, it->second.second);
      continue;
    }
    // Unimplemented (or unknown module): ENOSYS if it returns an i32, else nothing.
    FuncType ft = im.func_type;
    linker.define_host(store, im.module, im.name, ft,
                       [ft](Caller&, Args, std::span<Value> res) -> std::optional<Trap> {
                         for (size_t i = 0; i < res.size(); ++i) res[i] = Value::zero(ft.results[i]);
                         if (!res.empty() && ft.results[0] == ValType::I32) res[0] = Value::i32(kENosys);
                         return std::nullopt;
                       });
  }
  auto inst = linker.instantiate(store, *m, "main");
  if (!inst) {
    std::cerr << "genvm-wasm: " << inst.error().to_string() << "\n";
    return inst.error().message.rfind("wasm_trap", 0) == 0 ? 3 : 1;
  }
  FuncInst* start = (*inst)->get_func("_start");
  if (!start) {
    std::cerr << "genvm-wasm: module has no _start export\n";
    return 1;
  }
  store.set_fuel(opts.fuel_amount);
  auto out = store.call(start, {});
  std::fflush(stdout);
  int code = 0;
  if (!out) {
    std::cerr << "genvm-wasm: " << out.error().to_string() << "\n";
    code = 1;
  } else if (out->trap) {
    if (out->trap->kind == TrapKind::kHostExit) {
      code = out->trap->exit_code;
    } else {
      std::cerr << "trap: " << out->trap->public_string() << " (" << out->trap->message << ")\n"
                << format_backtrace(out->trap->frames);
      code = 3;
    }
  }
  for (auto& [fd, f] : w->fds) ::close(f.host);
  return code;
}

}  // namespace genvm_wasm_tool
