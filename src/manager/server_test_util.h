// Test helpers for the server over real sockets: the manager (registry + server) on its own
// io thread with `sh` as the executor, a Beast WebSocket client, one-shot HTTP calls.
// Included by server_test.cc and server_trust_test.cc only (GENVM_MANAGER_HAS_SUPERVISOR).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "manager/server.h"
#include "manager/test_util.h"

namespace genvm::manager::server_test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

// The token the trust tests configure as a trusted caller's.
constexpr const char* kTrustedToken = "0123456789abcdef0123";

// A whole file as text (a run's artifacts, the manager's log); empty when it cannot be read.
inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;
using testing::run_body;

// The manager under test, on its own thread.
// The executor is `sh` running the request's extra_args[0] as a script; `scripts` lets an
// untrusted caller pass any (extra_args.untrusted_allowed: ["*"]), as the tests of other things
// need. `log_fd`: where the manager's log goes (-1: nowhere). `stand_in` false: no `sh`, the
// yaml's executors_dir and manifest_path resolve every run's line.
class Manager {
 public:
  explicit Manager(const std::string& yaml, bool scripts = true, int log_fd = -1, bool stand_in = true) {
    std::string base = stand_in ? "executor: [sh, -c, 'eval \"$3\"', sh]\nexecutor_protocol: plain\n" : "";
    if (scripts) base += "extra_args: {untrusted_allowed: [\"*\"]}\n";
    auto c = parse_config(base + yaml);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    config_ = *c;
    socket_path_ = ::testing::TempDir() + "mgr_test_" + std::to_string(::getpid()) + "_" +
                   std::to_string(counter_++) + ".sock";
    log_ = std::make_unique<Log>(log_fd);
    registry_ = std::make_unique<Registry>(io_, config_, *log_, 64ull << 30);
    EXPECT_TRUE(registry_->load_manifest().ok());
    server_ = std::make_unique<Server>(io_, *registry_, config_, *log_);
    EXPECT_TRUE(server_->listen_tcp("127.0.0.1", 0).ok());
    EXPECT_TRUE(server_->listen_unix(socket_path_).ok());
    work_.emplace(asio::make_work_guard(io_));
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Manager() {
    std::promise<void> done;
    asio::post(io_, [&] {
      registry_->shutdown([&] {
        server_->stop();
        done.set_value();
      });
    });
    done.get_future().wait();
    work_.reset();
    io_.stop();
    thread_.join();
    server_.reset();
    registry_.reset();
  }
  std::uint16_t port() const { return server_->tcp_port(); }
  const std::string& socket_path() const { return socket_path_; }
  // Reads registry state on the manager's thread.
  template <class F>
  auto on_thread(F f) {
    std::promise<decltype(f())> p;
    asio::post(io_, [&] { p.set_value(f()); });
    return p.get_future().get();
  }
  Registry& registry() { return *registry_; }

 private:
  static inline int counter_ = 0;
  asio::io_context io_;
  Config config_;
  std::string socket_path_;
  std::unique_ptr<Log> log_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<Server> server_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

template <class Socket>
class WsClient {
 public:
  WsClient(Socket socket, const std::string& host, const std::string& token = "") : ws_(std::move(socket)) {
    if (!token.empty()) {
      ws_.set_option(websocket::stream_base::decorator(
          [token](websocket::request_type& req) { req.set(http::field::authorization, "Bearer " + token); }));
    }
    ws_.handshake(host, "/ws");
    ws_.binary(true);
    hello_ = read();
  }
  void send_raw(const std::vector<std::uint8_t>& bytes, bool binary = true) {
    ws_.binary(binary);
    ws_.write(asio::buffer(bytes));
    ws_.binary(true);
  }
  void send(Method m, std::uint64_t id, const Value& payload) { send_raw(encode_frame(m, id, payload)); }
  Frame read() {
    beast::flat_buffer buf;
    ws_.read(buf);
    auto d = buf.cdata();
    auto f = decode_frame(std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(d.data()), d.size()));
    EXPECT_TRUE(f.ok());
    return f.ok() ? *f : Frame{0xFFFF, 0, Value()};
  }
  // The reply to request `id` (events that arrive first are kept in `events`).
  Frame reply(std::uint64_t id) {
    for (;;) {
      Frame f = read();
      if (f.request_id == id) return f;
      events.push_back(f);
    }
  }
  // The next event of kind `kind` for run `genvm_id` (kept ones first).
  Value event(std::string_view kind, std::uint64_t genvm_id) {
    for (;;) {
      for (auto it = events.begin(); it != events.end(); ++it) {
        const auto& m = it->payload.as_map();
        if (m.begin()->first == kind && *m.begin()->second.find("genvm_id") == Value(genvm_id)) {
          Value v = m.begin()->second;
          events.erase(it);
          return v;
        }
      }
      events.push_back(read());
    }
  }
  Value terminal(std::uint64_t genvm_id) {
    for (;;) {
      for (auto it = events.begin(); it != events.end(); ++it) {
        const auto& m = it->payload.as_map();
        if ((m.begin()->first == "finished" || m.begin()->first == "failed_to_start") &&
            *m.begin()->second.find("genvm_id") == Value(genvm_id)) {
          Value v = it->payload;
          events.erase(it);
          return v;
        }
      }
      events.push_back(read());
    }
  }
  std::uint64_t boot_id() const { return hello_.payload.find("hello")->find("boot_id")->as_int().to_uint64().value(); }
  websocket::stream<Socket>& ws() { return ws_; }
  Frame hello_;
  std::vector<Frame> events;

 private:
  websocket::stream<Socket> ws_;
};

struct TcpWs : WsClient<tcp::socket> {
  TcpWs(asio::io_context& io, std::uint16_t port, const std::string& token = "")
      : WsClient(connect(io, port), "127.0.0.1", token) {}
  static tcp::socket connect(asio::io_context& io, std::uint16_t port) {
    tcp::socket s(io);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    return s;
  }
};

struct UnixWs : WsClient<unix_socket::socket> {
  UnixWs(asio::io_context& io, const std::string& path) : WsClient(connect(io, path), "localhost") {}
  static unix_socket::socket connect(asio::io_context& io, const std::string& path) {
    unix_socket::socket s(io);
    s.connect(unix_socket::endpoint(path));
    return s;
  }
};

inline Value run_payload(const std::string& script, Value::Map extra = {}) {
  extra["extra_args"] = Value::array({script});
  return Value::map({{"run", run_body(true, extra)}});
}

inline std::uint64_t genvm_id_of(const Frame& reply) {
  EXPECT_EQ(reply.method, static_cast<std::uint16_t>(Method::kRun)) << calldata::to_text(reply.payload);
  return reply.payload.find("genvm_id")->as_int().to_uint64().value();
}

inline int error_code_of(const Frame& f) {
  EXPECT_EQ(f.method, 0) << calldata::to_text(f.payload);
  const Value* c = f.payload.find("code");
  return c ? static_cast<int>(c->as_int().to_int64().value()) : -1;
}

inline http::response<http::string_body> http_call(std::uint16_t port, http::verb verb, const std::string& target,
                                            std::string body = "", const std::string& token = "") {
  asio::io_context io;
  tcp::socket s = TcpWs::connect(io, port);
  http::request<http::string_body> req(verb, target, 11);
  req.set(http::field::host, "127.0.0.1");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.body() = std::move(body);
  req.prepare_payload();
  http::write(s, req);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> p;
  p.body_limit(1 << 30);
  http::read(s, buf, p);
  return p.release();
}

// One HTTP exchange with extra header fields (a browser's Origin, an upgrade, ...).
inline http::response<http::string_body> http_with(std::uint16_t port, http::verb verb, const std::string& target,
                                                   const std::vector<std::pair<std::string, std::string>>& fields,
                                                   std::string body = "") {
  asio::io_context io;
  tcp::socket s = TcpWs::connect(io, port);
  http::request<http::string_body> req(verb, target, 11);
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : fields) req.set(k, v);
  req.body() = std::move(body);
  req.prepare_payload();
  http::write(s, req);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> p;
  http::read_header(s, buf, p);
  if (p.get().result() != http::status::switching_protocols) http::read(s, buf, p);
  return p.release();
}

inline std::string calldata_body(const Value& v) {
  auto b = calldata::encode(v);
  return std::string(b.begin(), b.end());
}


}  // namespace genvm::manager::server_test
