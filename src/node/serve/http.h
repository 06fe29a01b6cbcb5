// The HTTP side of genvm-node serve: one listening TCP socket; each connection is served by its
// own thread (bounded: past kMaxConnections a connection gets 503 and is closed), reading
// requests with keep-alive until the peer closes or stays idle for kIdleSeconds.
//   POST /api   the JSON-RPC body (Rpc::handle); 200 with application/json, 204 for
//               notifications only
//   other paths 404; other methods on /api 405; a body over kMaxBody 413, then the connection
//   is closed. A malformed request line or header closes the connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "node/serve/rpc.h"

namespace genvm::node::serve {

inline constexpr std::size_t kMaxBody = 16 * 1024 * 1024;  // a contract's code, hex-encoded in a signed tx
inline constexpr int kMaxConnections = 64;
inline constexpr int kIdleSeconds = 60;

class HttpServer {
 public:
  // Binds host:port (port 0: any free port, see port()). `host` must be an IP address.
  static Result<std::unique_ptr<HttpServer>> listen(const std::string& host, std::uint16_t port, const Rpc& rpc);
  ~HttpServer();
  std::uint16_t port() const;
  // Serves until stop() (from any thread or a signal-driven loop); returns when every
  // connection thread has ended.
  void run();
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace genvm::node::serve
