#include "modules/web/websocket_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <utility>

#include <openssl/sha.h>

#include "common/json.h"

namespace genvm::web {

namespace {

using Clock = std::chrono::steady_clock;

Error failed(const char* code, std::string message) {
  return make_error(WebSocketClient::Errc::kFailed, code, std::move(message));
}

int ms_until(WebSocketClient::Deadline d) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1'000'000 ? 1'000'000 : static_cast<int>(left);
}

std::string random_bytes(std::size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

Result<std::unique_ptr<WebSocketClient>> WebSocketClient::connect(std::uint16_t port, const std::string& path,
                                                                    Deadline deadline) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed("ws_connect", std::strerror(errno));
  std::unique_ptr<WebSocketClient> ws(new WebSocketClient(fd));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    return failed("ws_connect", "127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string key = base64_encode(random_bytes(16));
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                        "\r\nSec-WebSocket-Version: 13\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    return failed("ws_handshake", "cannot send the upgrade request");
  }
  constexpr std::size_t kMaxHead = 16 * 1024;
  std::size_t end = std::string::npos;
  while ((end = ws->buf_.find("\r\n\r\n")) == std::string::npos) {
    if (ws->buf_.size() > kMaxHead) return failed("ws_handshake", "response head above 16 KiB");
    if (auto s = ws->fill(ws->buf_.size() + 1, deadline); !s) return s.take_error();
  }
  std::string head = ws->buf_.substr(0, end + 2);
  ws->buf_.erase(0, end + 4);
  if (!head.starts_with("HTTP/1.1 101")) return failed("ws_handshake", head.substr(0, head.find('\r')));
  std::string expected_accept;
  {
    std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
    expected_accept = base64_encode(std::string_view(reinterpret_cast<char*>(digest), sizeof(digest)));
  }
  std::string lhead = lower(head);
  auto at = lhead.find("\r\nsec-websocket-accept:");
  if (at == std::string::npos) return failed("ws_handshake", "no Sec-WebSocket-Accept");
  std::size_t v = at + 23;
  while (v < head.size() && head[v] == ' ') ++v;
  if (head.compare(v, expected_accept.size(), expected_accept) != 0) {
    return failed("ws_handshake", "Sec-WebSocket-Accept does not match the key");
  }
  return ws;
}

WebSocketClient::~WebSocketClient() { ::close(fd_); }

Status WebSocketClient::fill(std::size_t n, Deadline deadline) {
  char chunk[64 * 1024];
  while (buf_.size() < n) {
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, ms_until(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return failed("ws_closed", std::strerror(errno));
    if (r == 0) return make_error(Errc::kTimeout, "timeout", "nothing from the browser before the deadline");
    ssize_t got = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return failed("ws_closed", "the browser closed the DevTools connection");
    buf_.append(chunk, static_cast<std::size_t>(got));
  }
  return {};
}

Status WebSocketClient::send_frame(std::uint8_t opcode, const std::string& payload) {
  std::string frame;
  frame.push_back(static_cast<char>(0x80 | opcode));
  std::uint64_t n = payload.size();
  if (n < 126) {
    frame.push_back(static_cast<char>(0x80 | n));
  } else if (n <= 0xffff) {
    frame.push_back(static_cast<char>(0x80 | 126));
    frame.push_back(static_cast<char>(n >> 8));
    frame.push_back(static_cast<char>(n & 0xff));
  } else {
    frame.push_back(static_cast<char>(0x80 | 127));
    for (int i = 7; i >= 0; --i) frame.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  std::string mask = random_bytes(4);
  frame += mask;
  std::size_t at = frame.size();
  frame += payload;
  for (std::size_t i = 0; i < payload.size(); ++i) frame[at + i] = static_cast<char>(frame[at + i] ^ mask[i % 4]);
  std::size_t done = 0;
  while (done < frame.size()) {
    ssize_t w = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return failed("ws_closed", "cannot write to the DevTools connection");
    done += static_cast<std::size_t>(w);
  }
  return {};
}

Status WebSocketClient::send_text(const std::string& text) { return send_frame(0x1, text); }

Result<std::string> WebSocketClient::receive(Deadline deadline, std::size_t max_bytes) {
  std::string& message = partial_;
  for (;;) {
    // A frame is parsed only once it is whole in buf_, so a timeout leaves the stream intact.
    if (auto s = fill(2, deadline); !s) return s.take_error();
    auto b = [this](std::size_t i) { return static_cast<std::uint8_t>(buf_[i]); };
    bool fin = b(0) & 0x80;
    std::uint8_t opcode = b(0) & 0x0f;
    if (b(1) & 0x80) return failed("ws_protocol", "a masked frame from the server");
    std::uint64_t len = b(1) & 0x7f;
    std::size_t header = 2;
    if (len == 126) {
      header = 4;
      if (auto s = fill(header, deadline); !s) return s.take_error();
      len = (std::uint64_t{b(2)} << 8) | b(3);
    } else if (len == 127) {
      header = 10;
      if (auto s = fill(header, deadline); !s) return s.take_error();
      len = 0;
      for (int i = 0; i < 8; ++i) len = (len << 8) | b(2 + static_cast<std::size_t>(i));
    }
    if (len > max_bytes || message.size() + len > max_bytes) {
      return failed("ws_too_big", "a DevTools message above " + std::to_string(max_bytes) + " bytes");
    }
    if (auto s = fill(header + len, deadline); !s) return s.take_error();
    std::string payload = buf_.substr(header, len);
    buf_.erase(0, header + len);
    if (opcode == 0x9) {  // ping
      if (auto s = send_frame(0xA, payload); !s) return s.take_error();
      continue;
    }
    if (opcode == 0xA) continue;  // pong
    if (opcode == 0x8) return failed("ws_closed", "the browser closed the DevTools connection");
    if (opcode != 0x0 && opcode != 0x1 && opcode != 0x2) return failed("ws_protocol", "unknown opcode");
    message += payload;
    if (fin) return std::exchange(partial_, std::string());
  }
}

}  // namespace genvm::web
