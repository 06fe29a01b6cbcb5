// The render proxy: a forward HTTP proxy on 127.0.0.1 that the module's Chromium must send every
// connection through (browser.cc starts Chromium with it as its only proxy, loopback included,
// QUIC off, WebRTC limited to proxied connections and a resolver that resolves nothing), so
// every socket a page opens (documents, sub-resources, fetch/XHR, WebSocket, WebRTC over TCP)
// passes the module's address policy, not only the requests DevTools interception sees.
//
//   auto proxy = RenderProxy::start(config);   // listens on 127.0.0.1, an ephemeral port
//   chromium --proxy-server=http://127.0.0.1:<proxy->port()> ...
//
// It serves CONNECT host:port (https, ws and wss tunnels) and absolute-form plain-HTTP requests
// (`GET http://host/path`), one request per connection: the request goes upstream in origin
// form with `Connection: close`, the client may send only that request's body, and the client
// connection ends with the upstream one, so a kept-alive connection cannot reach a second host
// past the check. For every target: UrlPolicy::check on the URL it stands for (a CONNECT is
// https://host:port/), then the module's own resolution (resolve_addresses: `resolve` pins
// first, else the system resolver); unless the host is allow-listed, every address must pass
// address_forbidden, and the connection goes to exactly the addresses checked (no second
// resolution). A refusal is logged; a CONNECT gets 403, a plain request a closed connection.
// Bounds: render_max_connections open at once (more are closed at accept),
// render_connection_max_bytes per direction per connection (the connection ends there: this
// bounds a page's main document too), render_idle_timeout without a byte either way, 16 KiB of
// request head, connect_timeout per upstream connect. The destructor ends every connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "common/result.h"
#include "modules/web/config.h"
#include "modules/web/url_policy.h"

namespace genvm::web {

class RenderProxy {
 public:
  static Result<std::unique_ptr<RenderProxy>> start(const WebConfig& config);
  ~RenderProxy();
  RenderProxy(const RenderProxy&) = delete;
  RenderProxy& operator=(const RenderProxy&) = delete;

  std::uint16_t port() const { return port_; }
  // Targets refused by the policy so far (tests and the log).
  int refusals() const { return refusals_.load(); }

 private:
  RenderProxy(std::unique_ptr<UrlPolicy> policy, int listen_fd, std::uint16_t port);
  void accept_loop();
  void serve(int client);
  // Registers an fd the destructor shuts down; false once stopping.
  bool track(int fd);
  void untrack(int fd);

  std::unique_ptr<UrlPolicy> policy_;
  int listen_fd_;
  std::uint16_t port_;
  std::atomic<int> refusals_{0};
  std::mutex m_;
  std::condition_variable cv_;
  std::set<int> open_fds_;
  int active_ = 0;  // connection threads running
  bool stopping_ = false;
  std::thread acceptor_;
};

}  // namespace genvm::web
