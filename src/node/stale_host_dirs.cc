#include "node/stale_host_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <vector>

namespace genvm::node {

namespace {

constexpr const char kPrefix[] = "genvm-node-";
constexpr const char kModulesPrefix[] = "genvm-modules-";  // manager::ModuleSet's folder
constexpr std::size_t kSuffix = 6;  // mkdtemp's XXXXXX

bool mkdtemp_name(const char* name, const char* prefix = kPrefix) {
  const std::size_t n = std::strlen(prefix);
  if (std::strncmp(name, prefix, n) != 0) return false;
  const char* tail = name + n;
  if (std::strlen(tail) != kSuffix) return false;
  for (const char* p = tail; *p; ++p) {
    bool alnum = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z');
    if (!alnum) return false;
  }
  return true;
}

// Nobody listens on `path`: a connect is refused (a live node's socket accepts, or is busy).
bool nobody_listens(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int err = errno;
  ::close(fd);  // a live node accepts it, reads EOF at once and goes on (runner.cc's serve)
  return rc != 0 && err == ECONNREFUSED;
}

bool ends_with(const char* s, const char* tail) {
  const std::size_t n = std::strlen(s), m = std::strlen(tail);
  return n >= m && std::strcmp(s + n - m, tail) == 0;
}

// One of ours (same uid, mode 0700, not a link).
bool private_dir(const std::string& path, uid_t me, struct stat* sb) {
  return ::lstat(path.c_str(), sb) == 0 && S_ISDIR(sb->st_mode) && sb->st_uid == me && (sb->st_mode & 07777) == 0700;
}

// The modules' folder a node with modules makes inside its own (Runner: the ModuleSet's
// runtime_dir): its entries when it holds only what a ModuleSet writes there (`<type>.sock`,
// `<type>-config.json`), else nullopt.
std::optional<std::vector<std::string>> module_files(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::vector<std::string> files;
  bool other = false;
  while (dirent* f = ::readdir(d)) {
    if (std::strcmp(f->d_name, ".") == 0 || std::strcmp(f->d_name, "..") == 0) continue;
    if (!ends_with(f->d_name, ".sock") && !ends_with(f->d_name, "-config.json")) {
      other = true;
    }
    files.push_back(f->d_name);
  }
  ::closedir(d);
  if (other) return std::nullopt;
  return files;
}

}  // namespace

int sweep_stale_host_dirs(const std::string& tmpdir, std::chrono::seconds empty_grace) {
  std::string base = tmpdir;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = t && *t ? t : "/tmp";
  }
  DIR* d = ::opendir(base.c_str());
  if (!d) return 0;
  int removed = 0;
  const uid_t me = ::geteuid();
  const std::time_t now = std::time(nullptr);
  while (dirent* e = ::readdir(d)) {
    if (!mkdtemp_name(e->d_name)) continue;
    std::string dir = base + "/" + e->d_name;
    struct stat sb {};
    if (!private_dir(dir, me, &sb)) continue;
    // Only a socket folder: host.sock or nothing, and the modules' folder of a node with
    // modules. Anything else is not ours to remove.
    DIR* inner = ::opendir(dir.c_str());
    if (!inner) continue;
    bool has_socket = false, other = false;
    std::string modules_dir;
    while (dirent* f = ::readdir(inner)) {
      if (std::strcmp(f->d_name, ".") == 0 || std::strcmp(f->d_name, "..") == 0) continue;
      if (std::strcmp(f->d_name, "host.sock") == 0) {
        has_socket = true;
      } else if (modules_dir.empty() && mkdtemp_name(f->d_name, kModulesPrefix)) {
        modules_dir = dir + "/" + f->d_name;
      } else {
        other = true;
      }
    }
    ::closedir(inner);
    if (other) continue;
    std::optional<std::vector<std::string>> modules;
    if (!modules_dir.empty()) {
      struct stat mb {};
      if (!private_dir(modules_dir, me, &mb) || !(modules = module_files(modules_dir))) continue;
    }
    std::string sock = dir + "/host.sock";
    if (has_socket) {
      struct stat ss {};
      // A socket a second old has listened since (bind and listen are back to back), so a
      // refused connect means its node is gone.
      if (::lstat(sock.c_str(), &ss) != 0 || !S_ISSOCK(ss.st_mode) || now - ss.st_mtime < 2 || !nobody_listens(sock)) {
        continue;
      }
      ::unlink(sock.c_str());
    } else if (now - sb.st_mtime < empty_grace.count()) {
      continue;  // perhaps a node between its mkdtemp and its bind
    }
    // The node is gone, and its modules died with it (they end with their parent): their
    // sockets and configs go with its folder.
    if (modules) {
      for (const std::string& f : *modules) ::unlink((modules_dir + "/" + f).c_str());
      ::rmdir(modules_dir.c_str());
    }
    if (::rmdir(dir.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

}  // namespace genvm::node
