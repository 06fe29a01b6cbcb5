#include "common/exe_dir.h"

#include <unistd.h>

#include <climits>
#include <string_view>

namespace genvm {

std::string executable_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<std::size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string expand_exe_dir(std::string text, const std::string& exe_dir) {
  constexpr std::string_view kVar = "${exeDir}";
  for (std::size_t at = 0; (at = text.find(kVar, at)) != std::string::npos; at += exe_dir.size()) {
    text.replace(at, kVar.size(), exe_dir);
  }
  return text;
}

}  // namespace genvm
