#include "executor/module_cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/blake3.h"

namespace genvm::executor {

namespace {

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

}  // namespace

Result<std::shared_ptr<const wasm::Module>> load_module_cached(const std::string& dir, const calldata::Bytes& code,
                                                               const wasm::LoadOptions& lo, const CacheLog& log) {
  if (dir.empty()) return wasm::Module::load(code, lo);
  const std::string path = module_cache_path(dir, code, lo);
  if (MappedFile blob(path); blob.ok()) {
    // A file truncated under the mapping by a concurrent writer cannot happen: writers rename a
    // new file over the name, so this mapping keeps the old inode whole.
    auto hit = wasm::Module::load_with_compiled(code, lo, blob.bytes());
    if (hit) {
      log("module cache hit " + path);
      return hit;
    }
    log("module cache entry refused (" + hit.error().to_string() + "), compiling: " + path);
  } else {
    log("module cache miss " + path);
  }
  auto loaded = wasm::Module::load(code, lo);
  if (!loaded) return loaded;
  // A cache that cannot be written costs the next run its compile, never this run its result.
  auto blob = (*loaded)->serialize_compiled();
  std::string err = blob ? write_atomically(path, *blob) : blob.error().to_string();
  log(err.empty() ? "module cache stored " + path : "module cache write failed (" + err + "): " + path);
  return loaded;
}

}  // namespace genvm::executor
