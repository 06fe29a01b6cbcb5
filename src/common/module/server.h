// The module side of the wire: a listener on a unix socket or 127.0.0.1 TCP, one thread per
// executor connection, each reading the hello and then serving request frames in order.
//
//   auto l = ModuleListener::bind("unix:///run/genvm-web.sock");   // or "127.0.0.1:3032"
//   l->serve([&](const Hello& h, const Value& request) { return handler.answer(h, request); });
//
// A hello that does not parse closes the connection (the public module does the same). A
// request frame that is not calldata is answered FatalError, as the public module answers a
// request it cannot decode; the handler decides everything else.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/module/protocol.h"

namespace genvm::module {

using RequestHandler = std::function<Answer(const Hello& hello, const Value& request)>;

// A module's own bound on a request frame, below kMaxFrame: a longer request is dropped as it
// is read (never held, never decoded) and answered `refuse(length)` instead of reaching the
// handler. The default keeps every frame up to kMaxFrame.
struct RequestLimit {
  std::uint32_t max_bytes = kMaxFrame;
  std::function<Answer(std::uint32_t length)> refuse;
};

// Serves one connection until the executor closes it or a frame fails; closes `fd`. A request
// frame is released once decoded, before the handler runs.
void serve_connection(int fd, const RequestHandler& handler, const RequestLimit& limit = {});

class ModuleListener {
 public:
  // "unix://PATH" (an existing socket file is replaced) or "HOST:PORT" / "tcp://HOST:PORT"
  // with HOST a numeric IPv4 address; port 0 picks a free one (see address()).
  static Result<std::unique_ptr<ModuleListener>> bind(std::string_view address);
  ~ModuleListener();
  ModuleListener(const ModuleListener&) = delete;
  ModuleListener& operator=(const ModuleListener&) = delete;

  // Accepts until stop(); each connection is served on its own detached thread, at most
  // kMaxConnections at once (one more is closed at once: the executor sees a failed module).
  static constexpr int kMaxConnections = 256;
  void serve(RequestHandler handler, RequestLimit limit = {});
  void stop() { stopping_ = true; }
  // The bound address in the form bind() takes (a TCP port resolved).
  const std::string& address() const { return address_; }

 private:
  ModuleListener(int fd, std::string address, std::string unix_path)
      : fd_(fd), address_(std::move(address)), unix_path_(std::move(unix_path)) {}
  int fd_;
  std::string address_;
  std::string unix_path_;
  std::atomic<bool> stopping_{false};
};

}  // namespace genvm::module
