#include "executor/host_client.h"
#include "common/host/wire.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace genvm::executor {

using host::get_u32_le;
using host::put_u32_le;
using host::put_u64_le;

namespace {

// Socket errors never carry OS text into anything consensus-visible; these messages only reach
// the executor's own log and the InternalError report.
Error io_error(std::string_view what) {
  return make_error(HostError::kIo, "host_io", std::string(what) + ": " + std::strerror(errno));
}

void put(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> b) {
  out.insert(out.end(), b.begin(), b.end());
}

Result<int> connect_unix(std::string_view path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return make_error(HostError::kUri, "host_uri", "unix socket path is empty or too long");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return io_error("socket");
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Error e = io_error("connect " + std::string(path));
    ::close(fd);
    return e;
  }
  return fd;
}

Result<int> connect_tcp(std::string_view hostport) {
  auto colon = hostport.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == hostport.size()) {
    return make_error(HostError::kUri, "host_uri", "expected HOST:PORT");
  }
  std::string host(hostport.substr(0, colon));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port(hostport.substr(colon + 1));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return make_error(HostError::kIo, "host_io", "cannot resolve " + std::string(hostport) + ": " + gai_strerror(rc));
  }
  int fd = -1;
  Error last = make_error(HostError::kIo, "host_io", "no address for " + std::string(hostport));
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) { last = io_error("socket"); continue; }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
    last = io_error("connect " + std::string(hostport));
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) return last;
  int one = 1;
  // Requests are small and answered one by one: Nagle would add a delay to every round trip.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

Result<int> parse_fd(std::string_view text) {
  int fd = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), fd);
  if (ec != std::errc() || p != text.data() + text.size() || fd < 0) {
    return make_error(HostError::kUri, "host_uri", "fd:// needs a non-negative descriptor number");
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0) return make_error(HostError::kUri, "host_uri", "fd://" + std::string(text) + " is not open");
  return fd;
}

}  // namespace

// ---- HostConnection -------------------------------------------------------------------------

Result<std::unique_ptr<HostConnection>> HostConnection::connect(std::string_view uri,
                                                                std::span<const std::uint8_t> hello) {
  Result<int> fd = make_error(HostError::kUri, "host_uri", "unreachable");
  if (uri.starts_with("unix://")) {
    fd = connect_unix(uri.substr(7));
  } else if (uri.starts_with("fd://")) {
    fd = parse_fd(uri.substr(5));
  } else if (uri.starts_with("tcp://")) {
    fd = connect_tcp(uri.substr(6));
  } else if (uri.find("://") == std::string_view::npos) {
    fd = connect_tcp(uri);
  } else {
    return make_error(HostError::kUri, "host_uri", "unsupported host address scheme (use unix://, fd:// or tcp://)");
  }
  if (!fd) return fd.take_error();
  auto c = std::make_unique<HostConnection>(*fd);
  if (!hello.empty()) {
    if (auto s = c->write_all(hello); !s) return s.take_error();
  }
  return c;
}

HostConnection::~HostConnection() {
  if (fd_ >= 0) ::close(fd_);
}

Status HostConnection::write_all(std::span<const std::uint8_t> data) {
  if (poisoned_) return *poisoned_;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n;
    if (is_socket_) {
      // MSG_NOSIGNAL: a host that hung up must give an error value, not a SIGPIPE death (the
      // executor installs no signal handlers).
      n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == ENOTSOCK) {
        is_socket_ = false;
        continue;
      }
    } else {
      n = ::write(fd_, data.data() + done, data.size() - done);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = (errno == EPIPE || errno == ECONNRESET)
                    ? make_error(HostError::kClosed, "host_closed", "the host closed the connection")
                    : io_error("write to host");
      poison(e);
      return e;
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Status HostConnection::read_exact(std::uint8_t* out, std::size_t n) {
  if (poisoned_) return *poisoned_;
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd_, out + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      Error e = errno == ECONNRESET ? make_error(HostError::kClosed, "host_closed", "the host reset the connection")
                                    : io_error("read from host");
      poison(e);
      return e;
    }
    if (r == 0) {
      Error e = make_error(HostError::kClosed, "host_closed", "the host closed the connection after " + std::to_string(done) +
                                              " of " + std::to_string(n) + " expected bytes");
      poison(e);
      return e;
    }
    done += static_cast<std::size_t>(r);
  }
  return {};
}

Result<std::uint8_t> HostConnection::read_byte() {
  std::uint8_t b = 0;
  if (auto s = read_exact(&b, 1); !s) return s.take_error();
  return b;
}

Result<calldata::Bytes> HostConnection::read_slice(std::size_t max) {
  std::uint8_t len_le[4];
  if (auto s = read_exact(len_le, 4); !s) return s.take_error();
  std::size_t len = std::size_t(len_le[0]) | std::size_t(len_le[1]) << 8 | std::size_t(len_le[2]) << 16 |
                    std::size_t(len_le[3]) << 24;
  if (len > max) {
    Error e = make_error(HostError::kOversized, "host_oversized", "the host announced " + std::to_string(len) +
                                               " bytes, more than the limit of " + std::to_string(max));
    poison(e);
    return e;
  }
  // Grow as bytes arrive, so a length the host never delivers costs at most one chunk.
  constexpr std::size_t kChunk = 1u << 16;
  calldata::Bytes out;
  while (out.size() < len) {
    std::size_t step = std::min(kChunk, len - out.size());
    std::size_t at = out.size();
    out.resize(at + step);
    if (auto s = read_exact(out.data() + at, step); !s) return s.take_error();
  }
  return out;
}

// ---- HostClient -----------------------------------------------------------------------------

Result<std::unique_ptr<HostClient>> HostClient::connect(const std::vector<std::string>& uris,
                                                        std::vector<std::uint8_t> method_hosts,
                                                        const std::vector<calldata::Bytes>& hello,
                                                        HostLimits limits) {
  if (uris.empty()) return make_error(HostError::kUri, "host_uri", "at least one host is required");
  std::vector<std::unique_ptr<HostConnection>> conns;
  for (std::size_t i = 0; i < uris.size(); ++i) {
    std::span<const std::uint8_t> h;
    if (i < hello.size()) h = hello[i];
    auto c = HostConnection::connect(uris[i], h);
    if (!c) {
      Error e = c.take_error();
      e.message = "host " + std::to_string(i) + ": " + e.message;
      return e;
    }
    conns.push_back(std::move(*c));
  }
  return from_connections(std::move(conns), std::move(method_hosts), limits);
}

Result<std::unique_ptr<HostClient>> HostClient::from_connections(
    std::vector<std::unique_ptr<HostConnection>> conns, std::vector<std::uint8_t> method_hosts,
    HostLimits limits) {
  if (conns.empty()) return make_error(HostError::kUri, "host_uri", "at least one host is required");
  for (std::size_t m = 0; m < method_hosts.size() && m < kHostMethodCount; ++m) {
    if (method_hosts[m] >= conns.size()) {
      return make_error(HostError::kRoute, "host_route", "method " + std::string(to_string(static_cast<HostMethod>(m))) +
                                          " is routed to host " + std::to_string(method_hosts[m]) +
                                          " but only " + std::to_string(conns.size()) +
                                          " host(s) were given");
    }
  }
  return std::unique_ptr<HostClient>(new HostClient(std::move(conns), std::move(method_hosts), limits));
}

Result<HostConnection*> HostClient::begin(HostMethod m) {
  auto i = static_cast<std::size_t>(m);
  std::size_t host = i < method_hosts_.size() ? method_hosts_[i] : 0;
  HostConnection* c = conns_[host].get();
  if (c->poisoned()) return *c->poisoned();
  return c;
}

template <class T>
Result<T> HostClient::fail(HostConnection& c, Error e) {
  c.poison(e);
  return e;
}

Status HostClient::read_status(HostConnection& c, HostMethod m) {
  auto b = c.read_byte();
  if (!b) return b.take_error();
  switch (*b) {
    case static_cast<std::uint8_t>(HostErrorCode::kOk): return {};
    case static_cast<std::uint8_t>(HostErrorCode::kEvmReverted):
      return make_error(HostError::kEvmReverted, "host_evm_reverted", std::string(to_string(m)) + ": the host answered evm_reverted");
    case static_cast<std::uint8_t>(HostErrorCode::kForbidden):
      return make_error(HostError::kForbidden, "host_forbidden", std::string(to_string(m)) + ": the host answered forbidden");
    default: {
      Error e = make_error(HostError::kProtocol, "host_protocol", std::string(to_string(m)) + ": unknown status byte " +
                                                std::to_string(*b));
      c.poison(e);
      return e;
    }
  }
}

Result<calldata::Bytes> HostClient::storage_read(StorageType type, const calldata::Address& address,
                                                 const SlotId& slot, std::uint32_t index,
                                                 std::uint32_t len) {
  auto c = begin(HostMethod::kStorageRead);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> req;
  req.reserve(1 + 1 + kAddressSize + kSlotIdSize + 8);
  req.push_back(static_cast<std::uint8_t>(HostMethod::kStorageRead));
  req.push_back(static_cast<std::uint8_t>(type));
  put(req, address.bytes);
  put(req, slot);
  put_u32_le(req, index);
  put_u32_le(req, len);
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  if (auto s = read_status(**c, HostMethod::kStorageRead); !s) return s.take_error();
  // The length is ours, not the host's; still read in chunks like a slice.
  calldata::Bytes out;
  constexpr std::size_t kChunk = 1u << 16;
  while (out.size() < len) {
    std::size_t step = std::min<std::size_t>(kChunk, len - out.size());
    std::size_t at = out.size();
    out.resize(at + step);
    if (auto s = (*c)->read_exact(out.data() + at, step); !s) return s.take_error();
  }
  return out;
}

Status HostClient::consume_fuel(std::uint64_t gas) {
  auto c = begin(HostMethod::kConsumeFuel);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kConsumeFuel)};
  put_u64_le(req, gas);
  return (*c)->write_all(req);
}

Result<calldata::Bytes> HostClient::eth_call(const calldata::Address& address,
                                             std::span<const std::uint8_t> data) {
  auto c = begin(HostMethod::kEthCall);
  if (!c) return c.take_error();
  if (data.size() > 0xffffffffu) return make_error(HostError::kRequest, "host_request", "eth_call calldata above 4 GiB");
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kEthCall)};
  put(req, address.bytes);
  put_u32_le(req, static_cast<std::uint32_t>(data.size()));
  put(req, data);
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  if (auto s = read_status(**c, HostMethod::kEthCall); !s) return s.take_error();
  return (*c)->read_slice(limits_.max_slice);
}

Result<U256Le> HostClient::get_balance(const calldata::Address& address) {
  auto c = begin(HostMethod::kGetBalance);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kGetBalance)};
  put(req, address.bytes);
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  if (auto s = read_status(**c, HostMethod::kGetBalance); !s) return s.take_error();
  U256Le out{};
  if (auto s = (*c)->read_exact(out.data(), out.size()); !s) return s.take_error();
  return out;
}

Result<U256Le> HostClient::remaining_fuel_as_gen() {
  auto c = begin(HostMethod::kRemainingFuelAsGen);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kRemainingFuelAsGen)};
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  if (auto s = read_status(**c, HostMethod::kRemainingFuelAsGen); !s) return s.take_error();
  U256Le out{};
  if (auto s = (*c)->read_exact(out.data(), out.size()); !s) return s.take_error();
  return out;
}

Status HostClient::notify_nondet_disagreement(std::uint32_t call_no) {
  auto c = begin(HostMethod::kNotifyNondetDisagreement);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kNotifyNondetDisagreement)};
  put_u32_le(req, call_no);
  return (*c)->write_all(req);
}

Status HostClient::consume_result(std::span<const std::uint8_t> result) {
  auto c = begin(HostMethod::kConsumeResult);
  if (!c) return c.take_error();
  if (result.size() > 0xffffffffu) return make_error(HostError::kRequest, "host_request", "result above 4 GiB");
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kConsumeResult)};
  put_u32_le(req, static_cast<std::uint32_t>(result.size()));
  put(req, result);
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  auto ack = (*c)->read_byte();
  if (!ack) return ack.take_error();
  if (*ack != 0) {
    return fail<std::uint8_t>(**c, make_error(HostError::kProtocol, "host_protocol", "consume_result: acknowledgement byte " +
                                                                  std::to_string(*ack) + " instead of 0"))
        .take_error();
  }
  return {};
}

Result<std::optional<calldata::Bytes>> HostClient::resolve_callcontract_executor(const calldata::Address& address,
                                                                                 StorageType state,
                                                                                 std::uint8_t advisory_major) {
  using Routing = std::optional<calldata::Bytes>;
  auto c = begin(HostMethod::kResolveCallcontractExecutor);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kResolveCallcontractExecutor)};
  put(req, address.bytes);
  req.push_back(static_cast<std::uint8_t>(state));
  req.push_back(advisory_major);
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  if (auto s = read_status(**c, HostMethod::kResolveCallcontractExecutor); !s) return s.take_error();
  auto payload = (*c)->read_slice(limits_.max_slice);
  if (!payload) return payload.take_error();
  // Calldata `Option<Bytes>` (the public host's Option<bytes::Bytes>): null and an empty
  // payload stay distinct. The bytes are the host's, carried to run_nested unread.
  // Null or bytes: anything that decodes to more than that could take is refused unbuilt.
  auto v = calldata::decode(*payload, calldata::DecodeLimits{.max_footprint = payload->size() + 256});
  if (v && v->is_null()) return Routing{};
  if (v && v->is_bytes()) return Routing{v->as_bytes()};
  // The slice was read whole, so the stream is still in step: refused, not poisoned.
  return make_error(HostError::kProtocol, "host_protocol", v ? "resolve_callcontract_executor: reply must be null or bytes"
                                       : "resolve_callcontract_executor: reply is not calldata: " + v.error().to_string());
}

Result<NestedReply> HostClient::run_nested(const calldata::Value& envelope, std::uint64_t max_footprint,
                                           std::uint64_t* footprint) {
  auto c = begin(HostMethod::kRunNested);
  if (!c) return c.take_error();
  std::vector<std::uint8_t> body = calldata::encode(envelope);
  if (body.size() > 0xffffffffu) return make_error(HostError::kRequest, "host_request", "run_nested envelope above 4 GiB");
  std::vector<std::uint8_t> req{static_cast<std::uint8_t>(HostMethod::kRunNested)};
  put_u32_le(req, static_cast<std::uint32_t>(body.size()));
  put(req, body);
  if (auto s = (*c)->write_all(req); !s) return s.take_error();
  // run_nested has no status byte: the reply slice is the whole answer.
  auto payload = (*c)->read_slice(limits_.max_slice);
  if (!payload) return payload.take_error();
  // The slice was read whole, so a reply of the wrong shape leaves the stream in step: it is
  // refused without poisoning the connection (the run still delivers its result there).
  auto v = calldata::decode(*payload, calldata::DecodeLimits{.max_footprint = max_footprint}, footprint);
  if (!v && v.error().errc == static_cast<int>(calldata::DecodeErrc::kFootprintExceeded)) {
    return make_error(HostError::kReplyFootprint, "host_reply_footprint", "run_nested: " + v.error().message);
  }
  if (!v) return make_error(HostError::kProtocol, "host_protocol", "run_nested: reply is not calldata: " + v.error().to_string());
  payload->clear();
  payload->shrink_to_fit();
  auto reply = host::nested_reply_from_value(std::move(*v));
  if (!reply) return make_error(HostError::kProtocol, "host_protocol", "run_nested: " + reply.error().message);
  return std::move(*reply);
}

}  // namespace genvm::executor
