// genvm-test-host: the in-memory test host as a process, for scripted integration tests.
//
// Serves connections one after another on a unix socket (or one inherited descriptor) and
// prints one JSON line per consume_result on stdout: {"result_hex":"…"}.
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "test_host.h"

namespace {

constexpr const char* kUsage =
    "usage: genvm-test-host (--socket PATH | --fd N) [--connections N] [--hello-size N]\n"
    "                       [--balance ADDRHEX=DECIMAL]... [--storage ADDRHEX:SLOTHEX=BYTESHEX]...\n"
    "Serves the GenVM host protocol with in-memory state. Connections are served one at a time;\n"
    "--connections N exits after N of them (default: serve until killed). Each consume_result\n"
    "is printed to stdout as a JSON line {\"result_hex\":\"...\"}.\n";

int fail(const std::string& line) {
  std::fprintf(stderr, "genvm-test-host: %s\n", line.c_str());
  return 2;
}

bool parse_hex(std::string_view hex, std::vector<std::uint8_t>& out) {
  if (hex.size() % 2) return false;
  out.clear();
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    if (ec != std::errc() || p != hex.data() + i + 2) return false;
    out.push_back(static_cast<std::uint8_t>(v));
  }
  return true;
}

bool parse_u64(std::string_view s, std::uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

std::string hex(const std::vector<std::uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace genvm::test_host;
  std::string socket_path;
  int inherited_fd = -1;
  std::uint64_t connections = 0;
  TestHost host;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--socket") {
      const char* v = next();
      if (!v) return fail("--socket needs a path");
      socket_path = v;
    } else if (a == "--fd") {
      const char* v = next();
      std::uint64_t n = 0;
      if (!v || !parse_u64(v, n) || n > 1u << 20) return fail("--fd needs a descriptor number");
      inherited_fd = static_cast<int>(n);
    } else if (a == "--connections") {
      const char* v = next();
      if (!v || !parse_u64(v, connections)) return fail("--connections needs a number");
    } else if (a == "--hello-size") {
      const char* v = next();
      std::uint64_t n = 0;
      if (!v || !parse_u64(v, n) || n > 1u << 20) return fail("--hello-size needs a number up to 1048576");
      host.set_hello_size(n);
    } else if (a == "--balance") {
      const char* v = next();
      std::string_view s = v ? v : "";
      auto eq = s.find('=');
      std::vector<std::uint8_t> addr;
      std::uint64_t amount = 0;
      if (eq == std::string_view::npos || !parse_hex(s.substr(0, eq), addr) || addr.size() != 20 ||
          !parse_u64(s.substr(eq + 1), amount)) {
        return fail("--balance needs ADDRHEX(40 digits)=DECIMAL(u64)");
      }
      std::array<std::uint8_t, 20> key;
      std::copy(addr.begin(), addr.end(), key.begin());
      host.state().balances[key] = u256_le(amount);
    } else if (a == "--storage") {
      const char* v = next();
      std::string_view s = v ? v : "";
      auto colon = s.find(':');
      auto eq = s.find('=');
      std::vector<std::uint8_t> addr, slot, bytes;
      if (colon == std::string_view::npos || eq == std::string_view::npos || eq < colon ||
          !parse_hex(s.substr(0, colon), addr) || addr.size() != 20 ||
          !parse_hex(s.substr(colon + 1, eq - colon - 1), slot) || slot.size() != 32 ||
          !parse_hex(s.substr(eq + 1), bytes)) {
        return fail("--storage needs ADDRHEX(40):SLOTHEX(64)=BYTESHEX");
      }
      std::array<std::uint8_t, 20> ka;
      Slot ks;
      std::copy(addr.begin(), addr.end(), ka.begin());
      std::copy(slot.begin(), slot.end(), ks.begin());
      host.state().storage[{ka, ks}] = bytes;
    } else {
      return fail("unknown argument '" + std::string(a) + "' (see --help)");
    }
  }
  if (socket_path.empty() == (inherited_fd < 0)) return fail("give exactly one of --socket PATH or --fd N");

  std::size_t printed = 0;
  auto print_new = [&] {
    for (; printed < host.state().results.size(); ++printed) {
      std::printf("{\"result_hex\":\"%s\"}\n", hex(host.state().results[printed]).c_str());
    }
    std::fflush(stdout);
  };

  if (inherited_fd >= 0) {
    auto s = host.serve_connection(inherited_fd);
    print_new();
    if (!s) return fail(s.error().to_string());
    return 0;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) return fail("socket path too long");
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  ::unlink(socket_path.c_str());
  int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(lfd, 16) != 0) {
    return fail("cannot listen on " + socket_path + ": " + std::strerror(errno));
  }
  for (std::uint64_t served = 0; connections == 0 || served < connections; ++served) {
    int c = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR) { --served; continue; }
      return fail(std::string("accept: ") + std::strerror(errno));
    }
    auto s = host.serve_connection(c);
    ::close(c);
    print_new();
    if (!s) std::fprintf(stderr, "genvm-test-host: connection ended with %s\n", s.error().to_string().c_str());
  }
  ::close(lfd);
  ::unlink(socket_path.c_str());
  return 0;
}
