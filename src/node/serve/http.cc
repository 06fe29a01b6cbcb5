#include "node/serve/http.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "node/serve/dashboard.h"

namespace genvm::node::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpServer::Impl {
  const Rpc& rpc;
  EventHub* events = nullptr;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable idle;
  int live = 0;
  std::vector<std::shared_ptr<tcp::socket>> sockets;  // open connections, closed by stop()

  explicit Impl(const Rpc& r, EventHub* e) : rpc(r), events(e) {}

  // GET /events: the response head, then each event as it comes, until the peer goes, the
  // subscriber lags behind, or the server stops. The connection is not reused afterwards.
  void stream_events(tcp::socket& sock, std::shared_ptr<EventHub::Subscriber> sub, bool head_only) {
    std::string out =
        "HTTP/1.1 200 OK\r\nServer: genvm-node\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n";
    if (!head_only) out += "retry: 1000\n: connected\n\n";
    beast::error_code ec;
    asio::write(sock, asio::buffer(out), ec);
    if (ec || head_only) return;
    using clock = std::chrono::steady_clock;
    auto quiet_since = clock::now();
    while (!stopping) {
      // Wakes every second to notice stop(), whose shutdown() does not wake a condition wait.
      auto batch = sub->wait(clock::now() + std::chrono::seconds(1));
      if (sub->lagged()) return;
      // A peer that closed (or sent anything: the stream takes no input) frees its slot now,
      // not at the next write.
      char probe;
      const auto n = ::recv(sock.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return;
      out.clear();
      for (const Event& e : batch) out += "event: " + e.name + "\ndata: " + e.data + "\n\n";
      if (out.empty() && clock::now() - quiet_since >= std::chrono::seconds(kEventKeepaliveSeconds)) {
        out = ": keepalive\n\n";
      }
      if (out.empty()) continue;
      asio::write(sock, asio::buffer(out), ec);
      if (ec) return;
      quiet_since = clock::now();
    }
  }

  void serve(std::shared_ptr<tcp::socket> sock) {
    // A peer that sends nothing for kIdleSeconds frees its thread.
    timeval tv{kIdleSeconds, 0};
    ::setsockopt(sock->native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(sock->native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    beast::flat_buffer buf;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxBody);
      parser.header_limit(64 * 1024);
      beast::error_code ec;
      http::read(*sock, buf, parser, ec);
      if (ec == http::error::body_limit) {
        http::response<http::string_body> res{http::status::payload_too_large, 11};
        res.set(http::field::content_type, "application/json");
        res.body() = error_reply("null", rpc_error(kInvalidRequest, "the request body is larger than " +
                                                                        std::to_string(kMaxBody) + " bytes"));
        res.keep_alive(false);
        res.prepare_payload();
        http::write(*sock, res, ec);
        break;
      }
      if (ec) break;  // closed, timed out, or not HTTP
      auto& req = parser.get();
      http::response<http::string_body> res{http::status::ok, req.version()};
      res.set(http::field::server, "genvm-node");
      res.set(http::field::access_control_allow_origin, "*");
      const std::string_view target(req.target().data(), req.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      const bool get = req.method() == http::verb::get || req.method() == http::verb::head;
      if (path == "/events" && events && get) {
        auto sub = events->subscribe();
        if (sub) {
          stream_events(*sock, std::move(sub), req.method() == http::verb::head);
          break;
        }
        res.result(http::status::service_unavailable);
        res.set(http::field::retry_after, "5");
        res.set(http::field::content_type, "text/plain");
        res.body() = "too many event streams\n";
      } else if (target != "/api" && target != "/api/") {
        const StaticFile* f = path == "/events" ? nullptr : dashboard_file(path);
        if (!f) {
          res.result(http::status::not_found);
          res.set(http::field::content_type, "text/plain");
          res.body() = "genvm-node serves JSON-RPC at POST /api and its dashboard at GET /\n";
        } else if (!get) {
          res.result(http::status::method_not_allowed);
          res.set(http::field::allow, "GET, HEAD");
        } else {
          res.set(http::field::content_type, std::string(f->content_type));
          res.set(http::field::cache_control, "no-cache");
          res.set("X-Content-Type-Options", "nosniff");
          res.body().assign(f->body.data(), f->body.size());
        }
        res.erase(http::field::access_control_allow_origin);  // the dashboard is same-origin only
      } else if (req.method() == http::verb::options) {
        res.result(http::status::no_content);
        res.set(http::field::access_control_allow_methods, "POST, OPTIONS");
        res.set(http::field::access_control_allow_headers, "content-type");
      } else if (req.method() != http::verb::post) {
        res.result(http::status::method_not_allowed);
        res.set(http::field::allow, "POST, OPTIONS");
      } else {
        auto reply = rpc.handle(req.body());
        if (reply) {
          res.set(http::field::content_type, "application/json");
          res.body() = std::move(*reply);
        } else {
          res.result(http::status::no_content);
        }
      }
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      if (req.method() == http::verb::head) res.body().clear();  // the length stays the full one
      http::write(*sock, res, ec);
      if (ec || !req.keep_alive() || stopping) break;
    }
    beast::error_code ignored;
    sock->shutdown(tcp::socket::shutdown_both, ignored);
    sock->close(ignored);
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::listen(const std::string& host, std::uint16_t port, const Rpc& rpc,
                                                       EventHub* events) {
  auto impl = std::make_unique<Impl>(rpc, events);
  beast::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return make_error("bad_host", "--host needs an IP address, not '" + host + "'");
  tcp::endpoint ep(addr, port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return make_error("listen", "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

std::uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpServer::run() {
  Impl& s = *impl_;
  while (!s.stopping) {
    auto sock = std::make_shared<tcp::socket>(s.io);
    beast::error_code ec;
    s.acceptor.accept(*sock, ec);
    if (s.stopping) break;
    if (ec) {
      // EMFILE and friends: wait a moment rather than spin.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    std::unique_lock lk(s.mu);
    if (s.live >= kMaxConnections) {
      lk.unlock();
      http::response<http::string_body> res{http::status::service_unavailable, 11};
      res.set(http::field::retry_after, "1");
      res.keep_alive(false);
      res.prepare_payload();
      http::write(*sock, res, ec);
      sock->close(ec);
      continue;
    }
    ++s.live;
    s.sockets.push_back(sock);
    lk.unlock();
    std::thread([&s, sock] {
      s.serve(sock);
      std::lock_guard g(s.mu);
      --s.live;
      std::erase(s.sockets, sock);
      s.idle.notify_all();
    }).detach();
  }
  std::unique_lock lk(s.mu);
  // Wakes the connection threads blocked in a read (only the descriptor is touched here).
  for (auto& sock : s.sockets) ::shutdown(sock->native_handle(), SHUT_RDWR);
  s.idle.wait(lk, [&] { return s.live == 0; });
}

void HttpServer::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  // Unblocks accept(): shutting the listening socket down makes it return at once.
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
}

}  // namespace genvm::node::serve
