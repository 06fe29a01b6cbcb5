// The manager's own log: one JSON object per line on a file descriptor (stderr by default).
// Single-threaded by contract, like the registry that writes most lines.
#pragma once

#include <string>
#include <string_view>

namespace genvm::manager {

class Log {
 public:
  explicit Log(int fd = 2) : fd_(fd) {}
  void line(std::string_view json_object);  // appends '\n'; a short write is retried
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace genvm::manager
