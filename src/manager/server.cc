#include "manager/server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "common/sha3.h"
#include "manager/http_api.h"
#include "manager/llm_check.h"
#include "common/json.h"

namespace genvm::manager {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

namespace {

// The longest a GET /genvm/{id}?wait= may hold (spec: values above are clamped).
constexpr Millis kMaxHttpWait{120'000};
// DELETE /genvm/{id} waits this long for the terminal event before answering with an error.
constexpr Millis kCancelWait{30'000};
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
// connection_cap: the descriptors a run holds in the manager (stdin, stdout, stderr, the log
// pipe, host connection 1, the pidfd, and the pipes of a spawn in flight), and a fixed reserve
// (listeners, the guard, the log, manifest reads, detect-version children).
constexpr std::uint64_t kFdsPerRun = 10;
constexpr std::uint64_t kFdReserve = 64;
// Accept failures (EMFILE, ENFILE, ...) are retried after a backoff that doubles up to this;
// failure log lines are at most one per kAcceptLogEvery.
constexpr Millis kAcceptBackoffMin{10};
constexpr Millis kAcceptBackoffMax{1000};
constexpr auto kAcceptLogEvery = std::chrono::seconds(5);

struct FnSink : EventSink {
  std::function<void(std::uint64_t, const Value&)> fn;
  void on_event(std::uint64_t id, const Value& e) override {
    if (fn) fn(id, e);
  }
};

std::string kind_of(const Value& event) {
  const auto* m = event.if_map();
  return m && !m->empty() ? m->begin()->first : std::string();
}
bool is_terminal_kind(const std::string& k) { return k == "finished" || k == "failed_to_start"; }

// Constant time in the token's length, so a guess learns nothing from timing.
bool token_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

struct Target {
  std::vector<std::string> segments;  // "/genvm/5/artifact" -> genvm, 5, artifact
  std::map<std::string, std::string> query;
};
Target parse_target(std::string_view t) {
  Target out;
  auto q = t.find('?');
  std::string_view path = t.substr(0, q);
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.segments.emplace_back(percent_decode(path.substr(i, j - i)));
    i = j;
  }
  if (q != std::string_view::npos) {
    std::string_view rest = t.substr(q + 1);
    while (!rest.empty()) {
      auto amp = rest.find('&');
      std::string_view pair = rest.substr(0, amp);
      auto eq = pair.find('=');
      out.query[percent_decode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
      if (amp == std::string_view::npos) break;
      rest = rest.substr(amp + 1);
    }
  }
  return out;
}

// The extra_args of a run request body, or nullopt when they are absent or malformed (the
// request decoder then answers for them).
std::optional<std::vector<std::string>> extra_args_of(const Value& body) {
  const Value* a = body.is_map() ? body.find("extra_args") : nullptr;
  if (!a || !a->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const Value& v : a->as_array()) {
    if (!v.is_string()) return std::nullopt;
    out.push_back(v.as_string());
  }
  return out;
}

std::string not_found_message(std::uint64_t id) { return "GenVM with id " + std::to_string(id) + " not found"; }

std::string error_with_id(std::string_view message, std::uint64_t id) {
  JsonWriter w;
  w.begin_object().key("error").string(message).key("genvm_id").unsigned_number(id).end_object();
  return w.take();
}

}  // namespace

std::size_t connection_cap(std::uint64_t fd_limit, std::uint64_t concurrent_runs, std::size_t configured) {
  std::uint64_t reserve = kFdReserve + kFdsPerRun * concurrent_runs;
  // Permits that allow more runs than the fd limit can hold still leave connections a quarter.
  std::uint64_t room = std::max<std::uint64_t>(fd_limit > reserve ? fd_limit - reserve : 0, fd_limit / 4);
  room = std::max<std::uint64_t>(room, 1);
  if (configured != 0 && configured < room) room = configured;
  return static_cast<std::size_t>(room);
}

struct SessionBase {
  virtual ~SessionBase() = default;
  virtual void shutdown() = 0;
};

// One open connection of a peer (Caller::peer), counted against connections.max_per_peer for
// as long as the connection lives (an HTTP session hands it on to its WebSocket).
struct PeerSlot {
  PeerSlot(std::map<std::string, std::size_t>& counts, std::string peer) : counts(counts), peer(std::move(peer)) {
    ++counts[this->peer];
  }
  ~PeerSlot() {
    auto it = counts.find(peer);
    if (it != counts.end() && --it->second == 0) counts.erase(it);
  }
  PeerSlot(const PeerSlot&) = delete;
  PeerSlot& operator=(const PeerSlot&) = delete;
  std::map<std::string, std::size_t>& counts;
  std::string peer;
};

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& io, Registry& reg, const Config& cfg, Log& log)
      : io(io), reg(reg), cfg(cfg), log(log), tcp_backoff_timer(io), unix_backoff_timer(io) {}
  asio::io_context& io;
  Registry& reg;
  Config cfg;
  Log& log;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<unix_socket::acceptor> unix_acceptor;
  std::string unix_path;
  std::vector<std::weak_ptr<SessionBase>> sessions;
  bool stopped = false;
  std::uint64_t next_connection = 1;
  asio::steady_timer tcp_backoff_timer, unix_backoff_timer;
  Millis accept_backoff{0};
  std::optional<std::chrono::steady_clock::time_point> last_accept_log, last_refusal_log, last_peer_refusal_log;
  std::uint64_t refused_since_log = 0, peer_refused_since_log = 0;
  // Open connections by peer (PeerSlot); refusals whose 429 is still being written.
  std::map<std::string, std::size_t> per_peer;
  std::size_t refusals_in_flight = 0;

  void track(const std::shared_ptr<SessionBase>& s) {
    std::erase_if(sessions, [](const auto& w) { return w.expired(); });
    sessions.push_back(s);
  }
  std::size_t open_sessions() {
    std::erase_if(sessions, [](const auto& w) { return w.expired(); });
    return sessions.size();
  }
  void accept_tcp();
  void accept_unix();
  void accept_failed(const beast::error_code& ec, asio::steady_timer& timer, std::function<void()> again);
  enum class Admission { kAdmit, kOverCap, kOverPeerCap };
  Admission admit(const std::string& peer);
  template <class Socket>
  void refuse_over_peer_cap(Socket socket, const std::string& peer);
  std::size_t peer_cap() const {
    std::size_t total = cap();
    std::size_t configured = cfg.connections.max_per_peer;
    return configured != 0 ? std::min(configured, total) : std::max<std::size_t>(total / 2, 1);
  }
  // A request a browser page made: an Origin header not in allowed_origins, or (a browser that
  // sends no Origin, e.g. a link or an image) Sec-Fetch-Site naming a page. The reason, or
  // nullopt for any other client.
  template <class Request>
  std::optional<std::string> from_browser_page(const Request& req) const {
    auto origin = req.find(http::field::origin);
    if (origin != req.end()) {
      std::string o(origin->value());
      for (const auto& allowed : cfg.allowed_origins) {
        if (o == allowed) return std::nullopt;
      }
      return "a request from a browser page (Origin: " + o.substr(0, 128) + ")";
    }
    auto site = req.find("Sec-Fetch-Site");
    if (site != req.end() && site->value() != "none") {
      return "a request from a browser page (Sec-Fetch-Site: " + std::string(site->value().substr(0, 32)) + ")";
    }
    return std::nullopt;
  }

  std::size_t cap() const {
    rlimit rl{};
    std::uint64_t fds = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : (1u << 20);
    std::uint64_t cheapest = std::max<std::uint64_t>(std::min(cfg.permits.sync, cfg.permits.nondet), 1);
    return connection_cap(fds, reg.max_permits() / cheapest, cfg.connections.max);
  }

  // Trust and ownership from the Authorization header: a bearer token in trusted.tokens makes
  // the caller trusted; any bearer token makes the caller's runs the token's (so a client may
  // read its runs from a later connection by presenting the same secret).
  Caller with_token(Caller c, std::string_view authorization) const {
    constexpr std::string_view kBearer = "Bearer ";
    if (authorization.substr(0, kBearer.size()) != kBearer) return c;
    std::string_view tok = authorization.substr(kBearer.size());
    if (tok.empty()) return c;
    auto digest = sha3_256(tok);
    static constexpr char kHex[] = "0123456789abcdef";
    c.owner = "token:";
    for (std::size_t i = 0; i < 16; ++i) {
      c.owner += kHex[digest[i] >> 4];
      c.owner += kHex[digest[i] & 15];
    }
    for (const auto& t : cfg.trusted_tokens) {
      if (token_equal(tok, t)) {
        c.trusted = true;
        c.identity += "+token";
        return c;
      }
    }
    return c;
  }
  // A run that exists but is not the caller's: answered as an unknown id, so its existence,
  // status and results stay hidden.
  bool foreign(std::uint64_t id, const Caller& c) const {
    const std::string* o = reg.owner(id);
    return o != nullptr && !may_use_run(c, *o, cfg.ownership);
  }
  std::optional<std::string> refuse_extra_args(const Value& body, const Caller& c) const {
    auto args = extra_args_of(body);
    if (!args) return std::nullopt;
    auto why = manager::refuse_extra_args(c, *args, cfg.extra_args);
    if (why) {
      JsonWriter w;
      w.begin_object().key("event").string("extra_args_refused").key("caller").string(c.identity);
      w.key("trusted").boolean(c.trusted).key("reason").string(*why).end_object();
      log.line(w.take(), LogLevel::kWarn);
    }
    return why;
  }
  void log_drop(const Caller& c, std::string_view reason, std::size_t queued) {
    JsonWriter w;
    w.begin_object().key("event").string("connection_dropped").key("caller").string(c.identity);
    w.key("reason").string(reason).key("queued_bytes").unsigned_number(queued).end_object();
    log.line(w.take(), LogLevel::kWarn);
  }
};

// ---- WebSocket ---------------------------------------------------------------------------

template <class Socket>
class WsSession : public SessionBase, public EventSink, public std::enable_shared_from_this<WsSession<Socket>> {
 public:
  WsSession(Socket socket, Caller caller, std::shared_ptr<Server::Impl> impl, std::shared_ptr<PeerSlot> slot)
      : ws_(std::move(socket)),
        caller_(std::move(caller)),
        impl_(std::move(impl)),
        slot_(std::move(slot)),
        idle_timer_(impl_->io),
        stall_timer_(impl_->io) {}

  void accept(http::request<http::string_body> req) {
    // Our own cap (checked as bytes arrive) replaces Beast's, which would answer with a close
    // frame; the spec drops the connection instead.
    ws_.read_message_max(0);
    ws_.binary(true);
    ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
      res.set(http::field::server, "genvm-manager");
    }));
    auto self = this->shared_from_this();
    ws_.async_accept(req, [self](beast::error_code ec) {
      if (ec) return;
      self->send(encode_frame(Method::kHello, 0, make_hello(self->impl_->reg.boot_id())));
      self->arm_idle();
      self->read();
    });
  }

  void on_event(std::uint64_t, const Value& event) override {
    send(encode_frame(Method::kEvent, 0, event));
  }

  void shutdown() override {
    closing_ = true;
    if (!writing_) close();
  }

 private:
  void read() {
    auto self = this->shared_from_this();
    ws_.async_read_some(buf_, kReadChunk, [self](beast::error_code ec, std::size_t) {
      if (ec) return self->end_timers();  // closed or failed: subscriptions lapse with this object
      if (self->buf_.size() > self->impl_->cfg.max_message_bytes) {
        beast::error_code ignored;
        beast::get_lowest_layer(self->ws_).close(ignored);
        return self->end_timers();
      }
      if (self->ws_.is_message_done()) {
        self->active_ = true;
        auto data = self->buf_.cdata();
        std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(data.data()), data.size());
        self->handle(bytes, self->ws_.got_binary());
        self->buf_.consume(self->buf_.size());
      }
      if (self->closing_ || self->closed_) return;
      // A client that does not read its replies is not read from either: no request is
      // answered while its queue is over the cap (the stall timer decides its fate).
      if (self->queued_ > self->impl_->cfg.connections.max_queued_bytes) {
        self->paused_ = true;
        return;
      }
      self->read();
    });
  }

  // Idle: no message read or written since the last check and no run of this connection still
  // going. Checked every idle_timeout, so an idle connection closes within twice that.
  void arm_idle() {
    auto self = this->shared_from_this();
    idle_timer_.expires_after(impl_->cfg.connections.idle_timeout);
    idle_timer_.async_wait([self](beast::error_code ec) {
      if (ec || self->closed_) return;
      std::erase_if(self->runs_, [&](std::uint64_t id) {
        return self->impl_->reg.owner(id) == nullptr || self->impl_->reg.is_terminal(id);
      });
      if (self->active_ || !self->runs_.empty()) {
        self->active_ = false;
        return self->arm_idle();
      }
      self->drop("idle", LogLevel::kDebug);
    });
  }
  void end_timers() {
    idle_timer_.cancel();
    stall_timer_.cancel();
  }
  // Closes the socket at once (no close handshake: the peer may not be reading).
  void drop(std::string_view reason, LogLevel level) {
    if (closed_) return;
    closed_ = true;
    if (level >= LogLevel::kWarn) impl_->log_drop(caller_, reason, queued_);
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).close(ignored);
    end_timers();
  }

  void reply_error(ErrorCode code, std::uint64_t request_id, const std::string& message) {
    send(encode_error({code, request_id, message}));
  }
  void reply_error(const Error& e, std::uint64_t request_id) {
    reply_error(socket_error_code(e), request_id, e.message);
  }

  void handle(std::span<const std::uint8_t> bytes, bool binary) {
    auto parsed = parse_client_message(bytes, binary);
    if (auto* e = std::get_if<ProtocolError>(&parsed)) return send(encode_error(*e));
    auto& r = std::get<ClientRequest>(parsed);
    Registry& reg = impl_->reg;
    auto sink = std::static_pointer_cast<EventSink>(this->shared_from_this());
    switch (r.method) {
      case Method::kRun: {
        // Refused before a run exists, as socket.rs refuses a run needing absent modules.
        if (auto why = impl_->refuse_extra_args(r.body, caller_)) return reply_error(ErrorCode::kInternal, r.request_id, *why);
        auto s = reg.submit(r.body, caller_, sink);
        if (!s) return reply_error(s.error(), r.request_id);
        runs_.insert(s->genvm_id);
        send(encode_frame(Method::kRun, r.request_id, Value::map({{"genvm_id", s->genvm_id}})));
        // socket.rs: a snapshot that is already an event (a repeated host_genvm_id) follows the
        // reply; `queued` is never sent as an event.
        if (kind_of(s->snapshot) != "queued") send(encode_frame(Method::kEvent, 0, s->snapshot));
        return;
      }
      case Method::kAttach: {
        auto a = parse_attach(r.body);
        if (!a) return reply_error(a.error(), r.request_id);
        if (a->boot_id == reg.boot_id() && impl_->foreign(a->genvm_id, caller_)) {
          return reply_error(ErrorCode::kUnknownId, r.request_id, "unknown_id");
        }
        auto snap = reg.attach(a->boot_id, a->genvm_id, sink);
        if (!snap) return reply_error(snap.error(), r.request_id);
        runs_.insert(a->genvm_id);
        send(encode_frame(Method::kAttach, r.request_id, *snap));
        return;
      }
      case Method::kCancel:
      case Method::kAck: {
        auto id = parse_genvm_id(r.body);
        if (!id) return reply_error(id.error(), r.request_id);
        if (impl_->foreign(*id, caller_)) {
          return reply_error(ErrorCode::kUnknownId, r.request_id,
                             r.method == Method::kCancel ? not_found_message(*id) : "unknown_id");
        }
        Status s = r.method == Method::kCancel ? reg.cancel(*id) : reg.ack(*id);
        if (!s) return reply_error(s.error(), r.request_id);
        send(encode_frame(r.method, r.request_id, Value::map({})));
        return;
      }
      case Method::kGetArtifact: {
        auto a = parse_get_artifact(r.body);
        if (!a) return reply_error(a.error(), r.request_id);
        if (impl_->foreign(a->genvm_id, caller_)) return reply_error(ErrorCode::kUnknownId, r.request_id, "unknown_id");
        auto chunk = reg.get_artifact(a->genvm_id, a->field, a->offset, std::min(a->max_len, kArtifactChunkCap));
        if (!chunk) return reply_error(chunk.error(), r.request_id);
        calldata::Bytes data(chunk->data.begin(), chunk->data.end());
        send(encode_frame(Method::kGetArtifact, r.request_id,
                          Value::map({{"total_len", chunk->total_len}, {"data", std::move(data)}})),
             /*bulk=*/true);
        return;
      }
      default:
        return reply_error(ErrorCode::kInternal, r.request_id, "unhandled method");
    }
  }

  // Lifecycle messages overtake queued artifact chunks (spec: a low-priority writer queue).
  // Queued bytes are counted; over max_queued_bytes for stall_timeout, the client is dropped.
  void send(std::vector<std::uint8_t> frame, bool bulk = false) {
    if (closed_) return;
    queued_ += frame.size();
    auto msg = std::make_shared<std::vector<std::uint8_t>>(std::move(frame));
    (bulk ? low_ : high_).push_back(std::move(msg));
    if (queued_ > impl_->cfg.connections.max_queued_bytes && !stall_armed_) {
      stall_armed_ = true;
      auto self = this->shared_from_this();
      stall_timer_.expires_after(impl_->cfg.connections.stall_timeout);
      stall_timer_.async_wait([self](beast::error_code ec) {
        if (ec) return;
        self->stall_armed_ = false;
        if (self->queued_ <= self->impl_->cfg.connections.max_queued_bytes) return;
        self->drop("output queue over connections.max_queued_bytes for stall_timeout", LogLevel::kWarn);
      });
    }
    if (!writing_) write_next();
  }

  void write_next() {
    auto& q = !high_.empty() ? high_ : low_;
    if (q.empty()) {
      writing_ = false;
      if (closing_) close();
      return;
    }
    writing_ = true;
    auto msg = q.front();
    q.pop_front();
    auto self = this->shared_from_this();
    ws_.async_write(asio::buffer(*msg), [self, msg](beast::error_code ec, std::size_t) {
      self->queued_ -= msg->size();
      if (ec) {
        self->high_.clear();
        self->low_.clear();
        self->queued_ = 0;
        self->writing_ = false;
        return self->end_timers();
      }
      self->active_ = true;
      if (self->queued_ <= self->impl_->cfg.connections.max_queued_bytes) {
        if (self->stall_armed_) {
          self->stall_armed_ = false;
          self->stall_timer_.cancel();
        }
        if (self->paused_ && !self->closed_ && !self->closing_) {
          self->paused_ = false;
          self->read();
        }
      }
      self->write_next();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    end_timers();
    auto self = this->shared_from_this();
    ws_.async_close(websocket::close_code::going_away, [self](beast::error_code) {});
  }

  websocket::stream<Socket> ws_;
  beast::flat_buffer buf_;
  Caller caller_;
  std::shared_ptr<Server::Impl> impl_;
  std::shared_ptr<PeerSlot> slot_;
  std::deque<std::shared_ptr<std::vector<std::uint8_t>>> high_, low_;
  std::size_t queued_ = 0;  // bytes in high_, low_ and the write in flight
  asio::steady_timer idle_timer_, stall_timer_;
  std::set<std::uint64_t> runs_;  // runs this connection started or attached to
  bool writing_ = false, closing_ = false, closed_ = false;
  bool paused_ = false, stall_armed_ = false, active_ = false;
};

// ---- HTTP --------------------------------------------------------------------------------

template <class Socket>
class HttpSession : public SessionBase, public std::enable_shared_from_this<HttpSession<Socket>> {
 public:
  HttpSession(Socket socket, Caller caller, std::shared_ptr<Server::Impl> impl, std::shared_ptr<PeerSlot> slot)
      : socket_(std::move(socket)),
        caller_(std::move(caller)),
        impl_(std::move(impl)),
        slot_(std::move(slot)),
        timer_(impl_->io),
        deadline_(impl_->io) {}

  void start() { read(); }

  void shutdown() override {
    stopping_ = true;
    if (!busy_) {
      deadline_.cancel();
      beast::error_code ignored;
      socket_.close(ignored);
    }
  }

 private:
  void read() {
    if (stopping_) {
      beast::error_code ignored;
      socket_.close(ignored);
      return;
    }
    parser_.emplace();
    parser_->body_limit(impl_->cfg.max_message_bytes);
    parser_->header_limit(kHeaderLimit);
    auto self = this->shared_from_this();
    arm_deadline();  // a whole request within idle_timeout (also ends a slow trickle of bytes)
    http::async_read(socket_, buf_, *parser_, [self](beast::error_code ec, std::size_t) {
      if (ec == http::error::body_limit) {
        self->keep_alive_ = false;
        return self->respond(http::status::payload_too_large, error_json("body exceeds max_message_bytes"));
      }
      if (ec) {
        self->deadline_.cancel();
        return;
      }
      self->on_request(self->parser_->release());
    });
  }

  // Closes the connection unless the phase it guards (reading a request, writing a response)
  // ends first; waits for a run's events (GET ?wait=, DELETE) are bounded on their own.
  void arm_deadline() {
    auto self = this->shared_from_this();
    deadline_.expires_after(impl_->cfg.connections.idle_timeout);
    deadline_.async_wait([self](beast::error_code ec) {
      if (ec) return;
      beast::error_code ignored;
      self->socket_.close(ignored);
    });
  }

  void on_request(http::request<http::string_body> req) {
    deadline_.cancel();
    busy_ = true;
    keep_alive_ = req.keep_alive();
    responded_ = false;
    auto auth = req[http::field::authorization];
    auto target = req.target();
    Caller caller = impl_->with_token(caller_, std::string_view(auth.data(), auth.size()));
    Target t = parse_target(std::string_view(target.data(), target.size()));
    auto& seg = t.segments;
    // Before any route, the upgrade included: a page in a browser must not reach a manager
    // that trusts its network position (config allowed_origins).
    if (auto why = impl_->from_browser_page(req)) {
      JsonWriter w;
      w.begin_object().key("event").string("browser_request_refused").key("caller").string(caller.identity);
      w.key("reason").string(*why).end_object();
      impl_->log.line(w.take(), LogLevel::kWarn);
      keep_alive_ = false;
      return respond(http::status::forbidden,
                     error_json("refused " + *why + ": the manager serves no pages; list the origin in allowed_origins "
                                "to let one use it"));
    }
    if (websocket::is_upgrade(req)) {
      if (seg.size() == 1 && seg[0] == "ws") {
        auto ws = std::make_shared<WsSession<Socket>>(std::move(socket_), caller, impl_, slot_);
        impl_->track(ws);
        ws->accept(std::move(req));
        return;  // this HTTP session ends; the socket now belongs to the WebSocket
      }
      keep_alive_ = false;
      return not_found();
    }
    auto method = req.method();
    bool get = method == http::verb::get, post = method == http::verb::post;
    auto route = [&](std::initializer_list<std::string_view> path) {
      if (seg.size() != path.size()) return false;
      std::size_t i = 0;
      for (auto p : path) {
        if (seg[i++] != p) return false;
      }
      return true;
    };
    if (route({"ws"}) && get) {
      return respond(http::status::upgrade_required, error_json("GET /ws upgrades to the manager socket protocol"));
    }
    if (route({"status"}) && get) return status(caller);
    if (route({"metrics"}) && get) return respond(http::status::ok, impl_->reg.prometheus(), "text/plain; version=0.0.4");
    if (route({"genvm", "run"}) && post) return run(req.body(), caller);
    if (route({"permits"}) && get) return permits_get();
    if (route({"permits"}) && post) return permits_set(req.body());
    if (route({"log", "level"}) && post) return log_level(req.body());
    if (route({"manifest", "reload"}) && post) return manifest_reload();
    if (route({"module", "start"}) && post) return module_start(req.body(), /*restart=*/false);
    if (route({"module", "restart"}) && post) return module_start(req.body(), /*restart=*/true);
    if (route({"module", "stop"}) && post) return module_stop(req.body());
    if (route({"llm", "check"}) && post) return llm_check(req.body());
    if (route({"vm-error", "describe"}) && get) return describe(t);
    if (route({"contract", "detect-version"}) && post) {
      auto ts = req["Deployment-Timestamp"];
      return detect_version(req.body(), req.find("Deployment-Timestamp") != req.end()
                                             ? std::optional<std::string>(std::string(ts.data(), ts.size()))
                                             : std::nullopt);
    }
    if (seg.size() >= 2 && seg[0] == "genvm") {
      auto id = parse_path_genvm_id(seg[1]);
      if (!id) return not_found();  // mod.rs: an id that is not digits is no route
      // Another caller's run is answered as an unknown id (not acked, not cancelled).
      bool hidden = impl_->foreign(*id, caller);
      if (seg.size() == 2 && get) return hidden ? respond(http::status::ok, genvm_status_json(*id, nullptr)) : get_status(*id, t);
      if (seg.size() == 2 && method == http::verb::delete_) {
        return hidden ? respond(http::status::ok, error_with_id(not_found_message(*id), *id)) : cancel(*id);
      }
      if (seg.size() == 3 && seg[2] == "artifact" && get) return hidden ? internal_error("unknown_id") : artifact(*id, t);
    }
    not_found();  // mod.rs: no route and a method the route lacks both answer 404
  }

  void not_found() { respond(http::status::not_found, error_json("Not Found")); }
  void bad_request(std::string_view message) { respond(http::status::bad_request, error_json(message)); }
  void internal_error(std::string_view message) { respond(http::status::internal_server_error, error_json(message)); }

  void status(const Caller& caller) {
    ManagerStatus s;
    if (ModuleSet* m = impl_->reg.modules()) {
      s.llm_module = std::string(to_string(m->state(ModuleType::kLlm)));
      s.web_module = std::string(to_string(m->state(ModuleType::kWeb)));
    }
    s.stats = impl_->reg.stats();
    s.executions = impl_->reg.executions();
    // Per caller, another's runs are not listed (their ids, times and lines stay theirs).
    std::erase_if(s.executions, [&](const ExecutionStatus& e) { return impl_->foreign(e.genvm_id, caller); });
    s.boot_id = impl_->reg.boot_id();
    s.shutting_down = impl_->reg.shutting_down();
    s.containment = supervisor::to_string(impl_->reg.containment());
    respond(http::status::ok, manager_status_json(s));
  }

  // Deprecated adapter: answers once the run has started (or failed to).
  void run(const std::string& body_bytes, const Caller& caller) {
    // handlers.rs: every failure here, the undecodable body included, is a 500.
    auto body = calldata::decode(std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(body_bytes.data()), body_bytes.size()));
    if (!body) return internal_error(body.error().to_string());
    if (auto why = impl_->refuse_extra_args(*body, caller)) return internal_error(*why);
    auto self = this->shared_from_this();
    auto sink = std::make_shared<FnSink>();
    sink->fn = [self](std::uint64_t id, const Value& e) { self->on_run_event(id, e); };
    sink_ = sink;
    auto s = impl_->reg.submit(*body, caller, sink);
    if (!s) {
      if (is_failure(s.error(), RequestFailure::kModulesNotRunning)) {
        return internal_error("modules are required but not running (is_sync=false with 'n' permission)");
      }
      return internal_error(s.error().message);
    }
    on_run_event(s->genvm_id, s->snapshot);  // a repeated host_genvm_id may already be past `started`
  }
  void on_run_event(std::uint64_t id, const Value& e) {
    std::string k = kind_of(e);
    if (k == "started" || k == "finished") {
      JsonWriter w;
      w.begin_object().key("result").string("started").key("id").unsigned_number(id).end_object();
      respond(http::status::ok, w.take());
    } else if (k == "failed_to_start") {
      const Value* err = e.as_map().begin()->second.find("error");
      internal_error(err && err->is_string() ? err->as_string() : "failed to start");
    }
  }

  // Deprecated adapter with the historical destructive read: a retained result is returned
  // once and acked (handlers.rs handle_genvm_status). A run that failed to start has none.
  void get_status(std::uint64_t id, const Target& t) {
    Millis wait{0};
    if (auto w = t.query.find("wait"); w != t.query.end()) {
      auto d = parse_duration(w->second);
      if (!d) return bad_request(d.error().message);
      wait = std::min(*d, kMaxHttpWait);
    }
    if (impl_->reg.result(id) != nullptr || wait.count() == 0 || impl_->reg.is_terminal(id) ||
        !impl_->reg.subscribe(id, nullptr).ok()) {
      return answer_status(id);
    }
    auto self = this->shared_from_this();
    auto sink = std::make_shared<FnSink>();
    sink->fn = [self, id](std::uint64_t, const Value& e) {
      // The status is read after the terminal event's delivery has finished, not inside it.
      if (is_terminal_kind(kind_of(e))) asio::post(self->impl_->io, [self, id] { self->answer_status(id); });
    };
    sink_ = sink;
    (void)impl_->reg.subscribe(id, sink);
    timer_.expires_after(wait);
    timer_.async_wait([self, id](beast::error_code ec) {
      if (!ec) self->answer_status(id);
    });
  }
  void answer_status(std::uint64_t id) {
    if (responded_) return;
    std::string body = genvm_status_json(id, impl_->reg.result(id));
    if (impl_->reg.result(id) != nullptr) (void)impl_->reg.ack(id);
    respond(http::status::ok, std::move(body));
  }

  void cancel(std::uint64_t id) {
    Status s = impl_->reg.cancel(id);
    if (!s) return respond(http::status::ok, error_with_id(s.error().message, id));
    auto done = [](std::uint64_t gid) {
      JsonWriter w;
      w.begin_object().key("result").string("shutdown_completed").key("genvm_id").unsigned_number(gid).end_object();
      return w.take();
    };
    if (impl_->reg.is_terminal(id)) return respond(http::status::ok, done(id));
    auto self = this->shared_from_this();
    auto sink = std::make_shared<FnSink>();
    sink->fn = [self, done](std::uint64_t gid, const Value& e) {
      if (is_terminal_kind(kind_of(e))) self->respond(http::status::ok, done(gid));
    };
    sink_ = sink;
    (void)impl_->reg.subscribe(id, sink);
    timer_.expires_after(kCancelWait);
    timer_.async_wait([self, id](beast::error_code ec) {
      if (!ec) self->respond(http::status::ok, error_with_id("timeout during shutdown", id));
    });
  }

  void artifact(std::uint64_t id, const Target& t) {
    auto f = t.query.find("field");
    auto m = t.query.find("max_len");
    if (f == t.query.end()) return bad_request("Failed to deserialize query string: missing field `field`");
    if (m == t.query.end()) return bad_request("Failed to deserialize query string: missing field `max_len`");
    auto max_len = parse_path_genvm_id(m->second);
    std::optional<std::uint64_t> offset = 0;
    if (auto o = t.query.find("offset"); o != t.query.end()) offset = parse_path_genvm_id(o->second);
    if (!max_len || *max_len > 0xFFFFFFFFull || !offset) {
      return bad_request("Failed to deserialize query string: offset must be a u64 and max_len a u32");
    }
    auto chunk = impl_->reg.get_artifact(id, f->second, *offset, static_cast<std::uint32_t>(*max_len));
    if (!chunk) return internal_error(chunk.error().message);
    JsonWriter w;
    w.begin_object().key("genvm_id").unsigned_number(id).key("field").string(f->second);
    w.key("total_len").unsigned_number(chunk->total_len).key("data_base64").string(base64_encode(chunk->data));
    w.end_object();
    respond(http::status::ok, w.take());
  }

  // mod.rs parse_json_body: any JSON, no Content-Type needed; not JSON is a 400.
  std::optional<JsonValue> json_body(const std::string& body) {
    auto v = parse_json(body);
    if (!v) {
      bad_request(v.error().message);
      return std::nullopt;
    }
    return std::move(*v);
  }

  void permits_get() {
    JsonWriter w;
    w.begin_object().key("permits").unsigned_number(impl_->reg.max_permits()).end_object();
    respond(http::status::ok, w.take());
  }

  void permits_set(const std::string& body) {
    auto v = json_body(body);
    if (!v) return;
    const JsonValue* p = v->is_object() ? v->find("permits") : nullptr;
    auto n = p ? p->as_u64() : std::nullopt;
    if (!n) return internal_error("invalid permits");
    std::uint64_t now = impl_->reg.set_permits(*n);
    JsonWriter w;
    w.begin_object().key("result").string("permits_set").key("permits").unsigned_number(now).end_object();
    respond(http::status::ok, w.take());
  }

  void log_level(const std::string& body) {
    auto v = json_body(body);
    if (!v) return;
    const JsonValue* l = v->is_object() ? v->find("level") : nullptr;
    auto level = l && l->is_string() ? parse_log_level(l->text()) : std::nullopt;
    if (!level) return internal_error("invalid log level");
    impl_->log.set_level(*level);
    // handlers.rs answers with serde's name of the level: the variant, capitalized.
    static constexpr const char* kVariant[] = {"Trace", "Debug", "Info", "Warn", "Error"};
    JsonWriter w;
    w.begin_object().key("result").string("log_level_set").key("level").string(kVariant[static_cast<int>(*level)]);
    w.end_object();
    respond(http::status::ok, w.take());
  }

  void manifest_reload() {
    Status s = impl_->reg.reload_manifest();
    if (!s) return internal_error(s.error().message);
    respond(http::status::ok, "{\"result\":\"manifest_reloaded\"}");
  }

  // handlers.rs handle_module_start / handle_module_restart: a body that is not JSON is a 400,
  // any other failure (a bad field, a module that does not start) a 500.
  void module_start(const std::string& body, bool restart) {
    auto v = json_body(body);
    if (!v) return;
    ModuleSet* modules = impl_->reg.modules();
    if (!modules) return internal_error("this manager runs no modules");
    auto req = parse_module_start_request(*v);
    if (!req) return internal_error(req.error().message);
    auto self = this->shared_from_this();
    auto done = [self, restart](Status s) {
      if (!s) return self->internal_error(s.error().message);
      self->respond(http::status::ok, restart ? "{\"result\":\"module_restarted\"}" : "{\"result\":\"module_started\"}");
    };
    if (restart) {
      modules->restart(*req, done);
    } else {
      modules->start(*req, done);
    }
  }

  void module_stop(const std::string& body) {
    auto v = json_body(body);
    if (!v) return;
    auto type = parse_module_stop_request(*v);
    if (!type) return internal_error(type.error().message);
    ModuleSet* modules = impl_->reg.modules();
    if (!modules) return respond(http::status::ok, "{\"result\":\"module_not_running\"}");
    auto self = this->shared_from_this();
    modules->stop(*type, [self](bool was_running) {
      self->respond(http::status::ok, was_running ? "{\"result\":\"module_stopped\"}" : "{\"result\":\"module_not_running\"}");
    });
  }

  // handlers.rs handle_llm_check: the provider calls block, so they run on a thread of their
  // own and the answer is posted back to io.
  void llm_check(const std::string& body) {
    auto v = json_body(body);
    if (!v) return;
    auto req = parse_llm_check_request(*v);
    if (!req) return internal_error(req.error().message);
    auto self = this->shared_from_this();
    std::thread([self, req = std::move(*req)] {
      std::string answer = run_llm_check(req);
      asio::post(self->impl_->io, [self, answer = std::move(answer)]() mutable {
        self->respond(http::status::ok, std::move(answer));
      });
    }).detach();
  }

  void describe(const Target& t) {
    auto e = t.query.find("error");
    if (e == t.query.end()) return bad_request("Failed to deserialize query string: missing field `error`");
    JsonWriter w;
    w.begin_object().key("description");
    if (auto d = describe_vm_error(e->second)) {
      w.string(*d);
    } else {
      w.null();
    }
    w.end_object();
    respond(http::status::ok, w.take());
  }

  void detect_version(const std::string& code, std::optional<std::string> deployment) {
    if (!deployment) return bad_request("missing Deployment-Timestamp header");
    auto at = parse_rfc3339(*deployment);
    if (!at) return internal_error(at.error().message);
    auto self = this->shared_from_this();
    impl_->reg.detect_version(code, *at, [self](Result<std::uint32_t> major) {
      if (!major) return self->internal_error(major.error().message);
      JsonWriter w;
      w.begin_object().key("specified_major").unsigned_number(*major).end_object();
      self->respond(http::status::ok, w.take());
    });
  }

  void respond(http::status status, std::string body, const char* content_type = "application/json") {
    if (responded_) return;
    responded_ = true;
    busy_ = true;
    timer_.cancel();
    sink_.reset();  // no further events for this request
    auto res = std::make_shared<http::response<http::string_body>>(status, 11);
    res->set(http::field::server, "genvm-manager");
    res->set(http::field::content_type, content_type);
    res->keep_alive(keep_alive_ && !stopping_);
    res->body() = std::move(body);
    res->prepare_payload();
    auto self = this->shared_from_this();
    arm_deadline();  // a client that never reads its response does not hold the connection
    http::async_write(socket_, *res, [self, res](beast::error_code ec, std::size_t) {
      self->deadline_.cancel();
      self->busy_ = false;
      if (ec || !res->keep_alive()) {
        beast::error_code ignored;
        self->socket_.shutdown(Socket::shutdown_send, ignored);
        self->socket_.close(ignored);
        return;
      }
      self->responded_ = false;
      self->read();
    });
  }

  Socket socket_;
  Caller caller_;
  std::shared_ptr<Server::Impl> impl_;
  std::shared_ptr<PeerSlot> slot_;
  asio::steady_timer timer_;
  asio::steady_timer deadline_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<FnSink> sink_;
  bool keep_alive_ = true, responded_ = false, busy_ = false, stopping_ = false;
};

// EMFILE or ENFILE leaves the connection in the backlog, so an accept retried at once fails at
// once: a busy loop. Retry after a backoff (doubling to kAcceptBackoffMax) and say so.
void Server::Impl::accept_failed(const beast::error_code& ec, asio::steady_timer& timer, std::function<void()> again) {
  accept_backoff = std::min(std::max(accept_backoff * 2, kAcceptBackoffMin), kAcceptBackoffMax);
  auto now = std::chrono::steady_clock::now();
  if (!last_accept_log || now - *last_accept_log >= kAcceptLogEvery) {
    last_accept_log = now;
    JsonWriter w;
    w.begin_object().key("event").string("accept_failed").key("error").string(ec.message());
    w.key("open_connections").unsigned_number(open_sessions());
    w.key("retry_in_ms").unsigned_number(static_cast<std::uint64_t>(accept_backoff.count())).end_object();
    log.line(w.take(), LogLevel::kError);
  }
  auto self = shared_from_this();
  timer.expires_after(accept_backoff);
  timer.async_wait([self, again = std::move(again)](beast::error_code tec) {
    if (!tec && !self->stopped) again();
  });
}

// The connection cap: a connection past it is closed at once (one log line per kAcceptLogEvery
// says how many were). Then the peer's own cap: one past it is answered 429.
Server::Impl::Admission Server::Impl::admit(const std::string& peer) {
  accept_backoff = Millis(0);
  std::size_t open = open_sessions(), limit = cap();
  auto now = std::chrono::steady_clock::now();
  if (open >= limit) {
    ++refused_since_log;
    if (!last_refusal_log || now - *last_refusal_log >= kAcceptLogEvery) {
      last_refusal_log = now;
      JsonWriter w;
      w.begin_object().key("event").string("connection_refused").key("reason").string("connection cap");
      w.key("open_connections").unsigned_number(open).key("cap").unsigned_number(limit);
      w.key("refused").unsigned_number(refused_since_log).end_object();
      log.line(w.take(), LogLevel::kWarn);
      refused_since_log = 0;
    }
    return Admission::kOverCap;
  }
  auto it = per_peer.find(peer);
  std::size_t mine = it == per_peer.end() ? 0 : it->second, peer_limit = peer_cap();
  if (mine < peer_limit) return Admission::kAdmit;
  ++peer_refused_since_log;
  if (!last_peer_refusal_log || now - *last_peer_refusal_log >= kAcceptLogEvery) {
    last_peer_refusal_log = now;
    JsonWriter w;
    w.begin_object().key("event").string("connection_refused").key("reason").string("connections.max_per_peer");
    w.key("peer").string(peer).key("open_connections").unsigned_number(mine).key("cap").unsigned_number(peer_limit);
    w.key("refused").unsigned_number(peer_refused_since_log).end_object();
    log.line(w.take(), LogLevel::kWarn);
    peer_refused_since_log = 0;
  }
  return Admission::kOverPeerCap;
}

// The refusal is an HTTP answer, so a client learns why (a WebSocket handshake sees the status):
// written at once, then the request is read and dropped for at most kRefusalLinger so closing
// does not reset the connection before the client has read the answer. Refusals are not
// sessions; at most kMaxRefusalsInFlight linger, others are closed at once.
constexpr std::size_t kMaxRefusalsInFlight = 32;
constexpr Millis kRefusalLinger{1000};

template <class Socket>
class PeerRefusal : public std::enable_shared_from_this<PeerRefusal<Socket>> {
 public:
  PeerRefusal(Socket socket, std::shared_ptr<Server::Impl> impl, std::string response)
      : socket_(std::move(socket)), impl_(std::move(impl)), timer_(impl_->io), response_(std::move(response)) {
    ++impl_->refusals_in_flight;
  }
  ~PeerRefusal() { --impl_->refusals_in_flight; }

  void start() {
    auto self = this->shared_from_this();
    timer_.expires_after(kRefusalLinger);
    timer_.async_wait([self](beast::error_code ec) {
      if (!ec) self->close();
    });
    asio::async_write(socket_, asio::buffer(response_), [self](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      beast::error_code ignored;
      self->socket_.shutdown(Socket::shutdown_send, ignored);
      self->drain();
    });
  }

 private:
  // Until the client closes (or the linger ends, which closes the socket and aborts the read).
  void drain() {
    auto self = this->shared_from_this();
    socket_.async_read_some(asio::buffer(sink_), [self](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->drain();
    });
  }
  void close() {
    beast::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

  Socket socket_;
  std::shared_ptr<Server::Impl> impl_;
  asio::steady_timer timer_;
  std::string response_;
  std::array<char, 4096> sink_{};
};

template <class Socket>
void Server::Impl::refuse_over_peer_cap(Socket socket, const std::string& peer) {
  if (refusals_in_flight >= kMaxRefusalsInFlight) return;  // `socket` closes here
  std::string body = error_json("too many connections from " + peer + " (connections.max_per_peer " +
                                std::to_string(peer_cap()) + ")");
  std::string response =
      "HTTP/1.1 429 Too Many Requests\r\nServer: genvm-manager\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  std::make_shared<PeerRefusal<Socket>>(std::move(socket), shared_from_this(), std::move(response))->start();
}

void Server::Impl::accept_tcp() {
  auto self = shared_from_this();
  tcp_acceptor->async_accept([self](beast::error_code ec, tcp::socket socket) {
    if (self->stopped || !self->tcp_acceptor) return;
    if (ec) return self->accept_failed(ec, self->tcp_backoff_timer, [self] { self->accept_tcp(); });
    beast::error_code ep_ec;
    auto ep = socket.remote_endpoint(ep_ec);
    std::string peer = "tcp:" + (ep_ec ? std::string("?") : ep.address().to_string());
    switch (self->admit(peer)) {
      case Admission::kOverCap: break;
      case Admission::kOverPeerCap: self->refuse_over_peer_cap(std::move(socket), peer); break;
      case Admission::kAdmit: {
        // Events are small messages written back to back (a run's reply, then `started`): with
        // Nagle on, the second waits for the client's delayed ACK, ~40 ms per run.
        beast::error_code nd_ec;
        socket.set_option(tcp::no_delay(true), nd_ec);
        Caller c{false, peer, "conn:" + std::to_string(self->next_connection++), peer};
        auto slot = std::make_shared<PeerSlot>(self->per_peer, peer);
        auto s = std::make_shared<HttpSession<tcp::socket>>(std::move(socket), c, self, std::move(slot));
        self->track(s);
        s->start();
      }
    }
    self->accept_tcp();
  });
}

void Server::Impl::accept_unix() {
  auto self = shared_from_this();
  unix_acceptor->async_accept([self](beast::error_code ec, unix_socket::socket socket) {
    if (self->stopped || !self->unix_acceptor) return;
    if (ec) return self->accept_failed(ec, self->unix_backoff_timer, [self] { self->accept_unix(); });
    Caller c{false, "uid:?", "conn:" + std::to_string(self->next_connection++), "uid:?"};
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      c.identity = "uid:" + std::to_string(cred.uid);
      c.owner = c.identity;  // one user's connections share its runs
      c.peer = c.identity;
      for (uid_t u : self->cfg.trusted_uids) {
        if (u == cred.uid) c.trusted = true;
      }
    }
    switch (self->admit(c.peer)) {
      case Admission::kOverCap: break;
      case Admission::kOverPeerCap: self->refuse_over_peer_cap(std::move(socket), c.peer); break;
      case Admission::kAdmit: {
        auto slot = std::make_shared<PeerSlot>(self->per_peer, c.peer);
        auto s = std::make_shared<HttpSession<unix_socket::socket>>(std::move(socket), c, self, std::move(slot));
        self->track(s);
        s->start();
      }
    }
    self->accept_unix();
  });
}

Server::Server(asio::io_context& io, Registry& registry, const Config& config, Log& log)
    : impl_(std::make_shared<Impl>(io, registry, config, log)) {
  JsonWriter w;
  w.begin_object().key("event").string("connection_cap").key("cap").unsigned_number(impl_->cap()).end_object();
  log.line(w.take());
}

Server::~Server() {
  stop();
  if (!impl_->unix_path.empty()) ::unlink(impl_->unix_path.c_str());
}

Status Server::listen_tcp(const std::string& host, std::uint16_t port) {
  beast::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return make_error("listen_failed", "bad host address \"" + host + "\": " + ec.message());
  tcp::acceptor a(impl_->io);
  tcp::endpoint ep(addr, port);
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return make_error("listen_failed", host + ":" + std::to_string(port) + ": " + ec.message());
  impl_->tcp_acceptor.emplace(std::move(a));
  impl_->accept_tcp();
  return {};
}

Status Server::listen_unix(const std::string& path) {
  beast::error_code ec;
  ::unlink(path.c_str());
  unix_socket::acceptor a(impl_->io);
  unix_socket::endpoint ep(path);
  a.open(ep.protocol(), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return make_error("listen_failed", path + ": " + ec.message());
  impl_->unix_path = path;
  impl_->unix_acceptor.emplace(std::move(a));
  impl_->accept_unix();
  return {};
}

std::uint16_t Server::tcp_port() const {
  if (!impl_->tcp_acceptor) return 0;
  beast::error_code ec;
  return impl_->tcp_acceptor->local_endpoint(ec).port();
}

std::size_t Server::live_sessions() const {
  std::size_t n = 0;
  for (auto& w : impl_->sessions) n += w.expired() ? 0 : 1;
  return n;
}

void Server::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  beast::error_code ignored;
  impl_->tcp_backoff_timer.cancel();
  impl_->unix_backoff_timer.cancel();
  if (impl_->tcp_acceptor) impl_->tcp_acceptor->close(ignored);
  if (impl_->unix_acceptor) impl_->unix_acceptor->close(ignored);
  for (auto& w : impl_->sessions) {
    if (auto s = w.lock()) s->shutdown();
  }
}

}  // namespace genvm::manager
