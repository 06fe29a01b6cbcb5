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
// /contract/detect-version, POST /manifest/reload, POST /module/start|stop|restart (the
// registry's ModuleSet, modules.h), POST /llm/check (llm_check.h); and ours, GET /metrics.
// Anything else,
// a wrong method included, is 404 {"error":"Not Found"} (mod.rs). Bodies: http_api.h.
// Trust (docs/PROTOCOLS.md, "Trust model"): a unix-socket peer whose uid (SO_PEERCRED) is
// listed in `trusted.uids`, or a request carrying `Authorization: Bearer <t>` with t in
// `trusted.tokens`, is trusted; every other caller is not.
//  - Ownership (config `ownership`, policy.h RunOwnership): `shared` (default, the public
//    model): every caller may use every run. `per_caller`: a run belongs to the bearer token its
//    request carried (any token, trusted or not, by its digest), else to the unix peer's uid,
//    else to its TCP connection alone; cancel, ack, status (GET /genvm/{id}), attach and
//    artifacts on another's run are answered as for an unknown id, /status lists only the
//    caller's runs; a trusted caller may act on every run.
//  - Browser pages: a request with an Origin not in `allowed_origins`, or without Origin but
//    with Sec-Fetch-Site other than `none`, is answered 403 on every route, the upgrade included.
//  - extra_args: flags the manager owns (policy.h is_reserved_executor_flag) are refused from
//    every caller; an untrusted caller may pass only `extra_args.untrusted_allowed` (default
//    none). Refused before a run exists: an `internal` error reply (socket), a 500 (HTTP).
// Connections (config `connections`): at most connection_cap() open, a connection past it is
// closed at once; one peer (TCP remote address, unix uid) at most max_per_peer (default half
// the cap), one past it answered 429 and closed; idle ones are closed after idle_timeout; a
// client whose queued output stays above max_queued_bytes for stall_timeout is dropped (not
// read from meanwhile); a failed accept (EMFILE) is retried after a backoff. Each drop, refusal
// and failure is a log line.
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

// The connection cap for `fd_limit` descriptors when `concurrent_runs` may run at once: the
// limit less a reserve and the descriptors of every run (at least a quarter of the limit, at
// least 1), or `configured` (ConnectionLimits::max) when that is lower.
std::size_t connection_cap(std::uint64_t fd_limit, std::uint64_t concurrent_runs, std::size_t configured);

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
