#include "executor/module_cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/blake3.h"
#include "runners/runners.h"

namespace genvm::executor {

namespace {

constexpr char kSealKeyName[] = "seal.key";

std::string entry_name(const blake3::Digest& h, const wasm::LoadOptions& lo) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (std::uint8_t b : h) {
    name += kHex[b >> 4];
    name += kHex[b & 15];
  }
  name += lo.deterministic ? "-d1" : "-d0";
  name += lo.metering ? "m1" : "m0";
  // The fusion options change the slot code as much as the two above (the blob records them
  // too): f0 plain code, f1 every fusion, f1o<hex> fusion with the families in the mask left out.
  name += lo.compile.fuse ? "f1" : "f0";
  if (lo.compile.fuse && lo.compile.fuse_off != 0) {
    name += 'o';
    for (int shift = 28; shift >= 0; shift -= 4) name += kHex[(lo.compile.fuse_off >> shift) & 15];
  }
  // The engine: a JIT run's entry holds the JIT's machine code beside the slot code, which an
  // interpreter run would map and check for nothing; each engine keeps its own entry.
  name += lo.engine == wasm::Engine::kJit ? "j1" : "j0";
  return name + ".gvmc";
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// An owned descriptor, closed on destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

// A directory one could plant compiled code in is not a cache: it must be this uid's and
// writable by no one else. Everything after this goes through the descriptor (openat), so a
// rename of the path after the check does not redirect the reads.
Result<int> open_cache_dir(const std::string& dir) {
  ::mkdir(dir.c_str(), 0700);  // first use; EEXIST is the common case
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_error("module_cache", errno_text("cannot open"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return make_error("module_cache", errno_text("fstat"));
  }
  std::string why;
  if (st.st_uid != ::geteuid())
    why = "owned by uid " + std::to_string(st.st_uid) + ", not this executor's uid " + std::to_string(::geteuid());
  else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    why = "writable by group or others (mode " + std::to_string((st.st_mode >> 6) & 7) +
          std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) + ")";
  if (!why.empty()) {
    ::close(fd);
    return make_error("module_cache", why);
  }
  return fd;
}

// Reads DIR/seal.key: a regular file of this uid, readable by no one else, of exactly the key's
// size. Anything else is refused (a file someone else made is a key they know).
Result<wasm::SealKey> read_seal_key(int dirfd) {
  Fd fd(::openat(dirfd, kSealKeyName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.ok()) return make_error(errno == ENOENT ? "absent" : "module_cache", errno_text("seal key"));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return make_error("module_cache", errno_text("seal key fstat"));
  wasm::SealKey key{};
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      std::size_t(st.st_size) != key.size())
    return make_error("module_cache", "seal key is not a 32-byte file of this uid with mode 0600");
  if (::read(fd.get(), key.data(), key.size()) != ssize_t(key.size()))
    return make_error("module_cache", "seal key unreadable");
  return key;
}

// Creates a temp file in the directory (O_EXCL, 0600) and writes `data`; returns its name.
Result<std::string> write_temp(int dirfd, const std::string& stem, std::span<const std::uint8_t> data) {
  std::uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != ssize_t(sizeof r)) r = std::uint64_t(::getpid()) << 20;
  const std::string tmp = stem + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(r);
  int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return make_error("module_cache", errno_text("cannot create a temp file"));
  std::size_t done = 0;
  std::string err;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = errno_text("write");
      break;
    }
    done += std::size_t(n);
  }
  if (::close(fd) != 0 && err.empty()) err = errno_text("close");
  if (!err.empty()) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return make_error("module_cache", err);
  }
  return tmp;
}

// The key of this cache's seals, made on first use from the OS's random source. Racing
// executors each write a candidate and link it to the name: the first link wins, the others
// read the winner's key.
Result<wasm::SealKey> seal_key(int dirfd) {
  auto key = read_seal_key(dirfd);
  if (key || key.error().code != "absent") return key;
  wasm::SealKey fresh{};
  if (::getrandom(fresh.data(), fresh.size(), 0) != ssize_t(fresh.size()))
    return make_error("module_cache", errno_text("getrandom"));
  auto tmp = write_temp(dirfd, kSealKeyName, fresh);
  if (!tmp) return tmp.take_error();
  int linked = ::linkat(dirfd, tmp->c_str(), dirfd, kSealKeyName, 0);
  int link_errno = errno;
  ::unlinkat(dirfd, tmp->c_str(), 0);
  if (linked != 0 && link_errno != EEXIST) {
    errno = link_errno;
    return make_error("module_cache", errno_text("seal key link"));
  }
  return read_seal_key(dirfd);
}

// A cache file mapped read-only (no copy: a 1 MiB contract's entry is ~3 MB); empty when the
// file cannot be read (absent is the common case: a miss). The stamp is the mapped
// descriptor's (fstat), so it names the bytes mapped, not whatever the name points at later.
// The descriptor stays open with the mapping: a module-cache hit maps its JIT code from it
// (Module::Prechecked::blob_fd), the same inode whose bytes the seal was checked over, and the
// hit's module holds the mapping itself (Prechecked::blob_owner) to read its slot code in place.
// Unmapped and closed on destruction.
class MappedFile {
 public:
  MappedFile(int dirfd, const std::string& name) : fd_(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) {
    if (!fd_.ok()) return;
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd_.get(), 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const std::uint8_t*>(p);
        size_ = std::size_t(st.st_size);
        stamp_ = {std::uint64_t(st.st_dev), std::uint64_t(st.st_ino), std::uint64_t(st.st_size),
                  std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                  std::int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
      }
    }
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  bool ok() const { return data_ != nullptr; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  int fd() const { return fd_.get(); }
  const runners::FileStamp& stamp() const { return stamp_; }

 private:
  Fd fd_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  runners::FileStamp stamp_;
};

// Temp file, then rename: a reader sees the old entry, no entry, or the whole new one, however
// many runs race to write it. Returns "" or why it failed.
std::string write_atomically(int dirfd, const std::string& name, const std::vector<std::uint8_t>& data) {
  auto tmp = write_temp(dirfd, name, data);
  if (!tmp) return tmp.error().message;
  if (::renameat(dirfd, tmp->c_str(), dirfd, name.c_str()) != 0) {
    std::string err = errno_text("rename");
    ::unlinkat(dirfd, tmp->c_str(), 0);
    return err;
  }
  return "";
}

// Whether `sealed` ends in the keyed BLAKE3 of the rest (constant time: how many leading bytes
// matched says nothing to a prober).
bool seal_checks(const wasm::SealKey& key, std::span<const std::uint8_t> sealed) {
  if (sealed.size() < blake3::kOutLen) return false;
  blake3::Digest seal = blake3::keyed_hash(key, sealed.first(sealed.size() - blake3::kOutLen));
  std::uint8_t diff = 0;
  for (std::size_t i = 0; i < blake3::kOutLen; ++i) diff |= std::uint8_t(seal[i] ^ sealed[sealed.size() - blake3::kOutLen + i]);
  return diff == 0;
}

// Seal marks (docs/PROTOCOLS.md, "Seal marks"): hashing a 35 MB JIT entry or a 5 MB snapshot on
// every run costs more than the rest of a warm run's checks; a file whose seal checked once and
// that has not changed since (same stamp) needs no second hash. Files under kMarkFrom are hashed
// every time (a mark would cost about as much to read). The mark DIR/<name>.gvmk is itself a
// sealed file: "GVMSEAL1", the stamp (dev, ino, size, mtime ns, ctime ns; u64 LE), the file's
// seal (its last 32 bytes), then the name.
constexpr std::size_t kMarkFrom = std::size_t(1) << 20;
constexpr char kMarkMagic[8] = {'G', 'V', 'M', 'S', 'E', 'A', 'L', '1'};

std::string mark_name(const std::string& name) { return name + ".gvmk"; }

std::vector<std::uint8_t> mark_body(const std::string& name, const MappedFile& file) {
  std::vector<std::uint8_t> out(kMarkMagic, kMarkMagic + sizeof kMarkMagic);
  const runners::FileStamp& st = file.stamp();
  for (std::uint64_t v : {st.dev, st.ino, st.size, std::uint64_t(st.mtime_ns), std::uint64_t(st.ctime_ns)})
    for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
  auto seal = file.bytes().last(blake3::kOutLen);
  out.insert(out.end(), seal.begin(), seal.end());
  out.insert(out.end(), name.begin(), name.end());
  return out;
}

// Whether DIR/<name>.gvmk checks its own seal and vouches for exactly this file's stamp and seal.
bool marked(int dirfd, const wasm::SealKey& key, const std::string& name, const MappedFile& file) {
  MappedFile mark(dirfd, mark_name(name));
  if (!mark.ok() || !seal_checks(key, mark.bytes())) return false;
  std::vector<std::uint8_t> want = mark_body(name, file);
  auto body = mark.bytes().first(mark.bytes().size() - blake3::kOutLen);
  return std::equal(body.begin(), body.end(), want.begin(), want.end());
}

// Whether a file's last change (mtime and ctime) is at least 2 s before now: timestamps are a
// clock tick coarse, so a write in the same tick as the check could leave the stamp unchanged.
bool settled(const runners::FileStamp& st) {
  struct timespec now {};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0) return false;
  const std::int64_t now_ns = std::int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
  constexpr std::int64_t kMargin = 2'000'000'000;
  return st.ctime_ns < now_ns - kMargin && st.mtime_ns < now_ns - kMargin;
}

// The seal check of a mapped cache file: by its mark when one vouches for it, else by hashing
// (then marking it, when it is large and settled). "module_cache" when it does not check.
Result<SealCheck> check_seal(int dirfd, const wasm::SealKey& key, const std::string& name, const MappedFile& file) {
  if (file.bytes().size() < blake3::kOutLen) return make_error("module_cache", name + ": shorter than its seal");
  const bool large = file.bytes().size() >= kMarkFrom;
  if (large && marked(dirfd, key, name, file)) return SealCheck::kByMark;
  if (!seal_checks(key, file.bytes())) return make_error("module_cache", name + ": the seal does not check");
  if (large && settled(file.stamp())) {
    std::vector<std::uint8_t> body = mark_body(name, file);
    blake3::Digest seal = blake3::keyed_hash(key, body);
    body.insert(body.end(), seal.begin(), seal.end());
    (void)write_atomically(dirfd, mark_name(name), body);  // unwritten: the next run hashes again
  }
  return SealCheck::kHashed;
}

}  // namespace

struct SealedFile::Mapping {
  MappedFile file;
  Mapping(int dirfd, const std::string& name) : file(dirfd, name) {}
};

SealedFile::SealedFile(std::unique_ptr<Mapping> mapping, SealCheck check)
    : mapping_(std::move(mapping)), check_(check) {}
SealedFile::SealedFile(SealedFile&&) noexcept = default;
SealedFile& SealedFile::operator=(SealedFile&&) noexcept = default;
SealedFile::~SealedFile() = default;

std::span<const std::uint8_t> SealedFile::body() const {
  auto bytes = mapping_->file.bytes();
  return bytes.first(bytes.size() - blake3::kOutLen);
}

Result<SealedFile> map_sealed_file(const std::string& dir, const std::string& name) {
  auto opened = open_cache_dir(dir);
  if (!opened) return opened.take_error();
  Fd dirfd(*opened);
  auto key = seal_key(dirfd.get());
  if (!key) return key.take_error();
  auto mapping = std::make_unique<SealedFile::Mapping>(dirfd.get(), name);
  if (!mapping->file.ok()) return make_error("absent", "no " + name);
  auto check = check_seal(dirfd.get(), *key, name, mapping->file);
  if (!check) return check.take_error();
  return SealedFile(std::move(mapping), *check);
}

Result<std::vector<std::uint8_t>> read_sealed_file(const std::string& dir, const std::string& name) {
  auto file = map_sealed_file(dir, name);
  if (!file) return file.take_error();
  auto body = file->body();
  return std::vector<std::uint8_t>(body.begin(), body.end());
}

Status write_sealed_file(const std::string& dir, const std::string& name, std::vector<std::uint8_t> body) {
  auto opened = open_cache_dir(dir);
  if (!opened) return opened.take_error();
  Fd dirfd(*opened);
  auto key = seal_key(dirfd.get());
  if (!key) return key.take_error();
  blake3::Digest seal = blake3::keyed_hash(*key, body);
  body.insert(body.end(), seal.begin(), seal.end());
  if (std::string err = write_atomically(dirfd.get(), name, body); !err.empty()) return make_error("module_cache", err);
  return {};
}

Result<std::shared_ptr<const wasm::Module>> load_module_cached(const std::string& dir, std::span<const std::uint8_t> code,
                                                               const wasm::LoadOptions& lo, const CacheLog& log) {
  if (dir.empty()) return wasm::Module::load(code, lo);
  auto opened = open_cache_dir(dir);
  if (!opened) {
    log(true, "module cache " + dir + " refused (" + opened.error().message + "); running without the cache");
    return wasm::Module::load(code, lo);
  }
  Fd dirfd(*opened);
  auto key = seal_key(dirfd.get());
  if (!key) {
    log(true, "module cache " + dir + " refused (" + key.error().message + "); running without the cache");
    return wasm::Module::load(code, lo);
  }
  const blake3::Digest code_hash = blake3::hash(code);
  const std::string name = entry_name(code_hash, lo);
  const std::string path = dir + "/" + name;
  // A cache that cannot be written costs the next run its compile, never this run its result.
  auto store = [&](const wasm::Module& m) {
    auto blob = m.serialize_compiled(*key);
    std::string err = blob ? write_atomically(dirfd.get(), name, *blob) : blob.error().to_string();
    log(false, err.empty() ? "module cache stored " + path : "module cache write failed (" + err + "): " + path);
  };
  // Shared: a hit's module keeps the mapping and reads its slot code and offsets in place.
  if (auto blob = std::make_shared<const MappedFile>(dirfd.get(), name); blob->ok()) {
    // A file truncated under the mapping by a concurrent writer cannot happen: writers rename a
    // new file over the name, so this mapping keeps the old inode whole. The seal is checked
    // here (or vouched for by its mark), with the blob's own format: last 32 bytes.
    auto check = check_seal(dirfd.get(), *key, name, *blob);
    wasm::Module::Prechecked pre;
    pre.seal = check.ok();
    pre.module_blake3 = &code_hash;
    pre.blob_fd = blob->fd();
    pre.blob_owner = blob;
    auto hit = check ? wasm::Module::load_with_compiled(code, lo, blob->bytes(), *key, pre)
                     : Result<std::shared_ptr<const wasm::Module>>(
                           make_error("module_cache", "blob seal mismatch (corrupt, or not sealed with this executor's key)"));
    if (hit) {
      log(false, "module cache hit " + path + (*check == SealCheck::kByMark ? " (seal vouched for by its mark)" : ""));
      // An entry without JIT code that the JIT compiled now (written where this CPU could not
      // run the JIT, say): rewritten with the code, so the next run maps it.
      if (wasm::jit_code_origin(**hit) == wasm::JitCodeOrigin::kCompiled) store(**hit);
      return hit;
    }
    log(false, "module cache entry refused (" + hit.error().to_string() + "), compiling: " + path);
  } else {
    log(false, "module cache miss " + path);
  }
  auto loaded = wasm::Module::load(code, lo);
  if (!loaded) return loaded;
  store(**loaded);
  return loaded;
}

}  // namespace genvm::executor
