#include "modules/web/render_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "common/loopback_listener.h"

namespace genvm::web {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHead = 16u << 10;
constexpr std::size_t kRelayBuffer = 64u << 10;

void log_line(const std::string& line) { std::fprintf(stderr, "genvm-module-web: render proxy: %s\n", line.c_str()); }

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// Both sockets are non-blocking: a peer that stops reading ends the connection after idle_ms.
bool send_all(int fd, std::string_view data, int idle_ms = 10'000) {
  while (!data.empty()) {
    ssize_t w = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, idle_ms) <= 0) return false;
      continue;
    }
    if (w <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

// The request head (through the blank line) and whatever followed it in the same reads.
struct Head {
  std::string method, target, version;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string rest;
};

std::optional<Head> read_head(int fd, int idle_ms) {
  std::string buf;
  char chunk[4096];
  for (;;) {
    auto end = buf.find("\r\n\r\n");
    if (end != std::string::npos) {
      Head h;
      h.rest = buf.substr(end + 4);
      std::string_view text(buf.data(), end);
      auto line_end = text.find("\r\n");
      std::string_view line = text.substr(0, line_end);
      auto sp1 = line.find(' ');
      auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos) return std::nullopt;
      h.method = line.substr(0, sp1);
      h.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
      h.version = line.substr(sp2 + 1);
      std::string_view fields = line_end == std::string_view::npos ? std::string_view() : text.substr(line_end + 2);
      while (!fields.empty()) {
        auto e = fields.find("\r\n");
        std::string_view f = fields.substr(0, e);
        fields = e == std::string_view::npos ? std::string_view() : fields.substr(e + 2);
        auto colon = f.find(':');
        if (colon == std::string_view::npos || colon == 0) return std::nullopt;
        std::string_view v = f.substr(colon + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
        h.headers.emplace_back(std::string(f.substr(0, colon)), std::string(v));
      }
      return h;
    }
    if (buf.size() > kMaxHead) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, idle_ms) <= 0) return std::nullopt;
    ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return std::nullopt;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
}

// A connected socket to one of `addresses`, tried in order, or -1.
int connect_any(const std::vector<sockaddr_storage>& addresses, std::uint64_t timeout_ms) {
  for (const auto& a : addresses) {
    int fd = ::socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    socklen_t len = a.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), len);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t elen = sizeof(err);
      if (::poll(&p, 1, static_cast<int>(std::min<std::uint64_t>(timeout_ms, 600'000))) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0) {
        rc = 0;
      }
    }
    if (rc == 0) return fd;
    ::close(fd);
  }
  return -1;
}

struct Target {
  std::string url;   // what the policy checks
  bool tunnel = false;
  std::string origin_path;  // plain HTTP: the request target upstream
};

// The URL a request stands for, or nullopt for a request this proxy does not serve.
std::optional<Target> target_of(const Head& h) {
  Target t;
  if (h.method == "CONNECT") {
    // host:port, the port required; a CONNECT names no scheme: it is checked as https
    // (ws/wss tunnels are the same connection to the same port).
    auto colon = h.target.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == h.target.size()) return std::nullopt;
    if (h.target.find_first_of("/?#@ ") != std::string::npos) return std::nullopt;
    t.url = "https://" + h.target + "/";
    t.tunnel = true;
    return t;
  }
  if (!lower(h.target.substr(0, 7)).starts_with("http://")) return std::nullopt;
  auto path = h.target.find_first_of("/?#", 7);
  t.url = h.target;
  t.origin_path = path == std::string::npos ? "/" : h.target.substr(path);
  if (t.origin_path.front() != '/') t.origin_path = "/" + t.origin_path;
  if (auto hash = t.origin_path.find('#'); hash != std::string::npos) t.origin_path.resize(hash);
  return t;
}

}  // namespace

Result<std::unique_ptr<RenderProxy>> RenderProxy::start(const WebConfig& config) {
  auto policy = UrlPolicy::create(config);
  if (!policy) return policy.take_error();
  auto listener = listen_on_loopback(128);
  if (!listener) return make_error("render_proxy", listener.error().message);
  return std::unique_ptr<RenderProxy>(new RenderProxy(std::move(*policy), listener->fd, listener->port));
}

RenderProxy::RenderProxy(std::unique_ptr<UrlPolicy> policy, int listen_fd, std::uint16_t port)
    : policy_(std::move(policy)), listen_fd_(listen_fd), port_(port) {
  acceptor_ = std::thread([this] { accept_loop(); });
}

RenderProxy::~RenderProxy() {
  {
    std::lock_guard<std::mutex> l(m_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);  // wakes every poll and recv
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::unique_lock<std::mutex> l(m_);
  cv_.wait(l, [this] { return active_ == 0; });
}

bool RenderProxy::track(int fd) {
  std::lock_guard<std::mutex> l(m_);
  if (stopping_) return false;
  open_fds_.insert(fd);
  return true;
}

void RenderProxy::untrack(int fd) {
  std::lock_guard<std::mutex> l(m_);
  open_fds_.erase(fd);
}

void RenderProxy::accept_loop() {
  const WebConfig& config = policy_->config();
  for (;;) {
    int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::lock_guard<std::mutex> l(m_);
        if (stopping_) return;
        continue;
      }
      return;  // shut down
    }
    {
      std::lock_guard<std::mutex> l(m_);
      if (stopping_) {
        ::close(c);
        return;
      }
      if (active_ >= static_cast<int>(config.render_max_connections)) {
        ::close(c);
        log_line("connection closed: " + std::to_string(active_) + " open (render_max_connections)");
        continue;
      }
      ++active_;
      open_fds_.insert(c);
    }
    std::thread([this, c] {
      serve(c);
      untrack(c);
      ::close(c);
      std::lock_guard<std::mutex> l(m_);
      --active_;
      cv_.notify_all();
    }).detach();
  }
}

void RenderProxy::serve(int client) {
  const WebConfig& config = policy_->config();
  const int idle_ms = static_cast<int>(std::clamp<std::uint64_t>(config.render_idle_timeout_ms, 1, 600'000));
  auto head = read_head(client, idle_ms);
  if (!head) return;
  auto target = target_of(*head);
  auto refuse = [&](const std::string& why) {
    ++refusals_;
    log_line("refused " + head->method + " " + head->target.substr(0, 256) + ": " + why);
    if (head->method == "CONNECT") (void)send_all(client, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  };
  if (!target) return refuse("not a CONNECT or an absolute http:// request");
  auto verdict = policy_->check(target->url);
  if (!verdict) {
    const calldata::Value* causes = verdict.error().answer.value.find("causes");
    return refuse(causes && causes->is_array() && !causes->as_array().empty() && causes->as_array()[0].is_string()
                      ? causes->as_array()[0].as_string()
                      : "the URL check");
  }
  if (!target->tunnel && verdict->scheme != "http") return refuse("not http");
  auto addresses = resolve_addresses(config, verdict->host, verdict->port);
  if (!addresses) return refuse(addresses.error().message);
  if (!verdict->allowlisted) {
    for (const auto& a : *addresses) {
      const auto* sa = reinterpret_cast<const sockaddr*>(&a);
      if (address_forbidden(sa)) return refuse("ADDRESS_FORBIDDEN " + address_text(sa));
    }
  }
  std::string to_upstream;
  std::uint64_t client_body_left = 0;  // plain HTTP: the bytes of body the client may still send
  if (target->tunnel) {
    to_upstream = head->rest;
  } else {
    std::string out = head->method + " " + target->origin_path + " HTTP/1.1\r\n";
    bool has_host = false;
    for (const auto& [name, value] : head->headers) {
      std::string n = lower(name);
      if (n == "proxy-connection" || n == "connection" || n == "keep-alive" || n == "proxy-authorization") continue;
      if (n == "transfer-encoding") return refuse("a chunked request body");
      if (n == "content-length") {
        if (value.empty() || value.size() > 12 || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          return refuse("a bad Content-Length");
        }
        client_body_left = std::stoull(value);
      }
      has_host = has_host || n == "host";
      out += name + ": " + value + "\r\n";
    }
    if (!has_host) out += "Host: " + verdict->host + ":" + std::to_string(verdict->port) + "\r\n";
    out += "Connection: close\r\n\r\n";
    if (head->rest.size() > client_body_left) return refuse("more than one request on the connection");
    client_body_left -= head->rest.size();
    to_upstream = out + head->rest;
  }
  int upstream = connect_any(*addresses, config.connect_timeout_ms);
  if (upstream < 0) {
    log_line("cannot connect to " + verdict->host + ":" + std::to_string(verdict->port));
    if (target->tunnel) (void)send_all(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  if (!track(upstream)) {
    ::close(upstream);
    return;
  }
  struct Close {
    RenderProxy* self;
    int fd;
    ~Close() {
      self->untrack(fd);
      ::close(fd);
    }
  } close_upstream{this, upstream};
  if (target->tunnel && !send_all(client, "HTTP/1.1 200 Connection established\r\n\r\n")) return;
  if (!send_all(upstream, to_upstream, idle_ms)) return;

  // Relay both ways until both are done, a side passes its byte bound or nothing moves for
  // idle_ms. A half-close is passed on.
  const std::uint64_t max_bytes = config.render_connection_max_bytes;
  std::uint64_t up_bytes = to_upstream.size(), down_bytes = 0;
  bool client_open = true, upstream_open = true;
  std::vector<char> buf(kRelayBuffer);
  while (upstream_open) {
    pollfd p[2] = {{client, static_cast<short>(client_open ? POLLIN : 0), 0}, {upstream, POLLIN, 0}};
    int n = ::poll(p, 2, idle_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // idle
    if (client_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = ::recv(client, buf.data(), buf.size(), 0);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
        // spurious wake-up
      } else if (r <= 0) {
        client_open = false;
        ::shutdown(upstream, SHUT_WR);
      } else {
        if (!target->tunnel) {
          // One request per connection: only the rest of its body may follow the head.
          if (static_cast<std::uint64_t>(r) > client_body_left) return;
          client_body_left -= static_cast<std::uint64_t>(r);
        }
        up_bytes += static_cast<std::uint64_t>(r);
        if (up_bytes > max_bytes) {
          log_line("connection to " + verdict->host + " ended at render_connection_max_bytes");
          return;
        }
        if (!send_all(upstream, std::string_view(buf.data(), static_cast<std::size_t>(r)), idle_ms)) return;
      }
    }
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t r = ::recv(upstream, buf.data(), buf.size(), 0);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
        // spurious wake-up
      } else if (r <= 0) {
        upstream_open = false;
      } else {
        down_bytes += static_cast<std::uint64_t>(r);
        if (down_bytes > max_bytes) {
          log_line("connection to " + verdict->host + " ended at render_connection_max_bytes");
          return;
        }
        if (!send_all(client, std::string_view(buf.data(), static_cast<std::size_t>(r)), idle_ms)) return;
      }
    }
  }
  // The upstream side ended: so does the client's (a plain-HTTP client connection is never
  // reused for another request).
}

}  // namespace genvm::web
