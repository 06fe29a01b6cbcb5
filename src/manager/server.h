// genvm-manager's listener: HTTP/1.1 and the WebSocket socket protocol (GET /ws) on TCP and/or
// a unix socket, Boost.Beast over the registry's io_context (one thread).
//
//   Server server(io, registry, config, log);
//   server.listen_tcp("127.0.0.1", 0);   // 0: any free port (see tcp_port())
//   server.listen_unix("/run/genvm/manager.sock");
//   io.run();
//
// Routes (manager-api.yaml): GET /ws (upgrade), POST /genvm/run, GET /genvm/{id}[?wait=],
// DELETE /genvm/{id}, GET /genvm/{id}/artifact?field=&offset=&max_len=, GET /status,
// GET|POST /permits, POST /log/level, GET /vm-error/describe?error=, POST
// /contract/detect-version, POST /manifest/reload; and ours, GET /metrics. Anything else,
// a wrong method included, is 404 {"error":"Not Found"} (mod.rs). Bodies: http_api.h.
// Trust (for the debug-mode policy): a unix-socket peer whose uid (SO_PEERCRED) is listed in
// `trusted.uids`, or a request carrying `Authorization: Bearer <t>` with t in `trusted.tokens`.
// A WebSocket message above max_message_bytes drops the connection without a close frame
// (spec: the client observes 1006); HTTP bodies above it answer 413.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "common/result.h"
#include "manager/config.h"
#include "manager/log.h"
#include "manager/registry.h"

namespace genvm::manager {

class Server {
 public:
  Server(boost::asio::io_context& io, Registry& registry, const Config& config, Log& log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Status listen_tcp(const std::string& host, std::uint16_t port);
  Status listen_unix(const std::string& path);  // an existing socket file there is replaced
  std::uint16_t tcp_port() const;

  // Stop accepting; WebSocket sessions close once their queued messages are written, HTTP
  // sessions after their current response. The io_context then runs out of work.
  void stop();
  // Sessions (HTTP or WebSocket) still open.
  std::size_t live_sessions() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace genvm::manager
