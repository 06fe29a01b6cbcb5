#include "manager/log.h"

#include <unistd.h>

#include <cerrno>

namespace genvm::manager {

void Log::line(std::string_view json_object) {
  if (fd_ < 0) return;
  std::string buf(json_object);
  buf += '\n';
  std::size_t off = 0;
  while (off < buf.size()) {
    ssize_t n = ::write(fd_, buf.data() + off, buf.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a log that cannot be written must not take the manager down
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace genvm::manager
