#include "common/module/server.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace genvm::module {

void serve_connection(int fd, const RequestHandler& handler, const RequestLimit& limit) {
  auto hello_frame = read_frame(fd);
  std::optional<Hello> hello;
  if (hello_frame && *hello_frame) {
    auto v = calldata::decode(**hello_frame);
    if (v) {
      auto h = parse_hello(*v);
      if (h) hello = std::move(*h);
    }
  }
  while (hello) {
    std::uint32_t dropped = 0;
    auto f = read_frame(fd, std::min(limit.max_bytes, kMaxFrame), &dropped);
    if (!f || !*f) break;
    if (dropped > 0) {
      Answer refused = limit.refuse ? limit.refuse(dropped) : Answer::fatal("request frame of " + std::to_string(dropped) + " bytes");
      if (!write_frame(fd, calldata::encode(answer_value(refused)))) break;
      continue;
    }
    auto request = calldata::decode(**f);
    Bytes().swap(**f);  // the decoded value is all the handler needs: do not hold both
    Answer a = request ? handler(*hello, *request) : Answer::fatal("request is not calldata: " + request.error().to_string());
    if (!write_frame(fd, calldata::encode(answer_value(a)))) break;
  }
  ::close(fd);
}

Result<std::unique_ptr<ModuleListener>> ModuleListener::bind(std::string_view address) {
  if (address.starts_with("unix://")) {
    std::string path(address.substr(7));
    sockaddr_un sa{};
    if (path.empty() || path.size() >= sizeof(sa.sun_path)) return make_error("bad_address", "unix socket path length");
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return make_error("bad_address", std::strerror(errno));
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, path.c_str(), path.size());
    ::unlink(path.c_str());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      Error e = make_error("bad_address", "cannot listen on " + path + ": " + std::strerror(errno));
      ::close(fd);
      return e;
    }
    return std::unique_ptr<ModuleListener>(new ModuleListener(fd, std::string(address), path));
  }
  std::string_view hostport = address.starts_with("tcp://") ? address.substr(6) : address;
  auto colon = hostport.rfind(':');
  if (colon == std::string_view::npos) return make_error("bad_address", "expected unix://PATH or HOST:PORT");
  std::string host(hostport.substr(0, colon));
  std::string_view port_text = hostport.substr(colon + 1);
  unsigned port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port > 65535) {
    return make_error("bad_address", "bad port in " + std::string(address));
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) {
    return make_error("bad_address", "HOST must be a numeric IPv4 address: " + host);
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error("bad_address", std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    Error e = make_error("bad_address", "cannot listen on " + std::string(address) + ": " + std::strerror(errno));
    ::close(fd);
    return e;
  }
  socklen_t len = sizeof(sa);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  std::string bound = host + ":" + std::to_string(ntohs(sa.sin_port));
  return std::unique_ptr<ModuleListener>(new ModuleListener(fd, bound, ""));
}

ModuleListener::~ModuleListener() {
  ::close(fd_);
  if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
}

void ModuleListener::serve(RequestHandler handler, RequestLimit limit) {
  auto shared = std::make_shared<RequestHandler>(std::move(handler));
  auto shared_limit = std::make_shared<RequestLimit>(std::move(limit));
  auto active = std::make_shared<std::atomic<int>>(0);
  while (!stopping_) {
    pollfd pfd{fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, 200);  // wakes to notice stop()
    if (r <= 0) continue;
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    if (active->fetch_add(1) >= kMaxConnections) {
      active->fetch_sub(1);
      ::close(c);
      continue;
    }
    std::thread([c, shared, shared_limit, active] {
      serve_connection(c, *shared, *shared_limit);
      active->fetch_sub(1);
    }).detach();
  }
}

}  // namespace genvm::module
