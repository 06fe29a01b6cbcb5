// The HTTP side of genvm-node serve: one listening TCP socket; each connection is served by its
// own thread (bounded: past kMaxConnections a connection gets 503 and is closed), reading
// requests with keep-alive until the peer closes or stays idle for kIdleSeconds.
//   POST /api     the JSON-RPC body (Rpc::handle); 200 with application/json, 204 for
//                 notifications only
//   GET /events   the transactions' status changes as Server-Sent Events (EventHub), until the
//                 peer closes, the subscriber lags, or the server stops; 503 past
//                 kMaxEventClients; 404 without a hub
//   GET / and the dashboard's files (dashboard.h), with their content types; HEAD too
//   other paths 404; other methods on /api 405 and on a file 405; a body over kMaxBody 413,
//   then the connection is closed. A malformed request line or header closes the connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "node/serve/events.h"
#include "node/serve/rpc.h"

namespace genvm::node::serve {

inline constexpr std::size_t kMaxBody = 16 * 1024 * 1024;  // a contract's code, hex-encoded in a signed tx
inline constexpr int kMaxConnections = 64;
inline constexpr int kIdleSeconds = 60;
inline constexpr int kEventKeepaliveSeconds = 15;  // a comment line, so a gone peer is noticed

class HttpServer {
 public:
  // Binds host:port (port 0: any free port, see port()). `host` must be an IP address.
  // `events` (may be null: no /events) outlives the server.
  static Result<std::unique_ptr<HttpServer>> listen(const std::string& host, std::uint16_t port, const Rpc& rpc,
                                                    EventHub* events = nullptr);
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
