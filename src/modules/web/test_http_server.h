// A small HTTP/1.1 server on 127.0.0.1 for the web module's tests (a real socket, a thread per
// connection, one request per connection): the test's handler answers each request, and every
// request path is counted so a test can check what reached the server.
//
//   TestHttpServer s([](const TestHttpServer::Request& r) { return TestHttpServer::reply(200, "", "hi"); });
//   s.url("/x"); s.hits("/x");
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/sha.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/loopback_listener.h"
#include "common/json.h"

namespace genvm::web {

class TestHttpServer {
 public:
  struct Request {
    std::string method, path, body;
    std::string head;  // the request line and header fields as received
  };
  using Handler = std::function<std::string(const Request&)>;

  explicit TestHttpServer(Handler handler) : handler_(std::move(handler)) {
    auto listener = listen_on_loopback(64);
    if (!listener) return;
    fd_ = listener->fd;
    port_ = listener->port;
    thread_ = std::thread([this] { loop(); });
  }
  ~TestHttpServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
    // Connection threads are detached: wait for those still answering (they use *this).
    while (active_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  int port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int hits(const std::string& path) const {
    std::lock_guard<std::mutex> l(m_);
    auto it = hits_.find(path);
    return it == hits_.end() ? 0 : it->second;
  }
  int total_hits() const {
    std::lock_guard<std::mutex> l(m_);
    int n = 0;
    for (const auto& [p, c] : hits_) n += c;
    return n;
  }

  // The 101 answer to a WebSocket handshake (RFC 6455 4.2.2), or a 400 without a key.
  static std::string websocket_accept(const Request& r) {
    std::string lower_head = r.head;
    for (char& c : lower_head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto at = lower_head.find("\r\nsec-websocket-key:");
    if (at == std::string::npos) return reply(400, "", "");
    at += 20;
    auto end = r.head.find("\r\n", at);
    std::string key = r.head.substr(at, end == std::string::npos ? std::string::npos : end - at);
    while (!key.empty() && key.front() == ' ') key.erase(0, 1);
    std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
    return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
           base64_encode(std::string_view(reinterpret_cast<char*>(digest), sizeof(digest))) + "\r\n\r\n";
  }

  static std::string reply(int status, const std::string& extra_headers, const std::string& body, bool sized = true) {
    std::string r = "HTTP/1.1 " + std::to_string(status) + " X\r\nConnection: close\r\n" + extra_headers;
    if (sized) r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return r + "\r\n" + body;
  }

 private:
  void loop() {
    for (;;) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      ++active_;
      std::thread([this, c] {
        serve(c);
        --active_;
      }).detach();
    }
  }
  void serve(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof(buf), 0);
      if (n <= 0) break;
      req.append(buf, static_cast<std::size_t>(n));
    }
    auto head_end = req.find("\r\n\r\n");
    if (head_end == std::string::npos) {
      ::close(c);
      return;
    }
    Request r;
    r.body = req.substr(head_end + 4);
    auto cl = req.find("Content-Length: ");
    if (cl != std::string::npos && cl < head_end) {
      std::size_t want = std::stoul(req.substr(cl + 16));
      while (r.body.size() < want) {
        ssize_t n = ::recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        r.body.append(buf, static_cast<std::size_t>(n));
      }
    }
    r.head = req.substr(0, head_end);
    r.method = req.substr(0, req.find(' '));
    r.path = req.substr(r.method.size() + 1, req.find(' ', r.method.size() + 1) - r.method.size() - 1);
    {
      std::lock_guard<std::mutex> l(m_);
      ++hits_[r.path];
    }
    std::string out = handler_(r);
    std::size_t done = 0;
    while (done < out.size()) {
      ssize_t w = ::send(c, out.data() + done, out.size() - done, MSG_NOSIGNAL);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    ::close(c);
  }
  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex m_;
  std::map<std::string, int> hits_;
  std::atomic<int> active_{0};
};

}  // namespace genvm::web
