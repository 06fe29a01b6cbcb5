// A small RFC 6455 WebSocket client for Chromium's DevTools endpoint on 127.0.0.1: text
// messages out (masked, as a client must), text/binary messages in, pings answered, every read
// bounded by a deadline and a message size. One thread uses one client.
//
//   auto ws = WebSocketClient::connect(port, "/devtools/browser/ID", deadline);
//   ws->send_text(R"({"id":1,"method":"Target.getTargets"})");
//   Result<std::string> m = ws->receive(deadline, 64 << 20);  // "timeout" when nothing came
//
// The handshake checks the 101 status and Sec-WebSocket-Accept. Errors: "ws_connect",
// "ws_handshake", "ws_closed", "ws_protocol", "ws_too_big", and `timeout` (Errc::kTimeout),
// after which the connection is still usable (no partial frame is consumed).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace genvm::web {

class WebSocketClient {
 public:
  enum class Errc { kFailed = 1, kTimeout = 2 };
  using Deadline = std::chrono::steady_clock::time_point;

  static Result<std::unique_ptr<WebSocketClient>> connect(std::uint16_t port, const std::string& path, Deadline deadline);
  ~WebSocketClient();
  WebSocketClient(const WebSocketClient&) = delete;
  WebSocketClient& operator=(const WebSocketClient&) = delete;

  Status send_text(const std::string& text);
  Result<std::string> receive(Deadline deadline, std::size_t max_bytes);

 private:
  explicit WebSocketClient(int fd) : fd_(fd) {}
  Status send_frame(std::uint8_t opcode, const std::string& payload);
  // Fills buf_ until it holds `n` bytes, or the deadline passes.
  Status fill(std::size_t n, Deadline deadline);
  int fd_;
  std::string buf_;
  std::string partial_;  // the fragments of a message not yet finished
};

}  // namespace genvm::web
