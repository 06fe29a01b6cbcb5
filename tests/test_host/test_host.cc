#include "test_host.h"

#include "common/host/wire.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace genvm::test_host {

using host::HostErrorCode;
using host::HostMethod;

U256Le u256_le(std::uint64_t v) {
  U256Le out{};
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return out;
}

Status apply_storage_changes(State& state, const Address& address, const calldata::Value& changes) {
  if (!changes.is_array()) return make_error("bad_changes", "storage_changes must be an array");
  for (const auto& d : changes.as_array()) {
    if (!d.is_array() || d.as_array().size() != 2 || !d.as_array()[0].is_bytes() || !d.as_array()[1].is_bytes() ||
        d.as_array()[0].as_bytes().size() != 36) {
      return make_error("bad_changes", "a storage change must be [bytes36, bytes]");
    }
    const Bytes& key = d.as_array()[0].as_bytes();
    const Bytes& value = d.as_array()[1].as_bytes();
    Slot slot;
    std::copy(key.begin(), key.begin() + 32, slot.begin());
    if (auto st = host::apply_storage_change(key, value, state.storage[{address.bytes, slot}]); !st) {
      return make_error("bad_changes", st.error().message);
    }
  }
  return {};
}

namespace {

using host::get_u32_le;
using host::put_u32_le;
using host::read_exact;
using host::write_all;

bool write_bytes(int fd, const std::vector<std::uint8_t>& b) { return write_all(fd, b); }

// The host reads client slices of any length the client claims; the shared bound keeps a
// broken client from making the test host allocate gigabytes.
bool read_slice(int fd, Bytes& out) { return host::read_slice(fd, host::kMaxHostSlice, out); }

Error closed() { return make_error("client_closed", "the client closed mid-request"); }

}  // namespace

TestHost::~TestHost() { stop(); }

void TestHost::set_fault(HostMethod m, Fault f) {
  std::lock_guard<std::mutex> g(mu_);
  faults_[static_cast<int>(m)] = f;
}

Fault TestHost::fault(HostMethod m) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = faults_.find(static_cast<int>(m));
  return it == faults_.end() ? Fault::kNone : it->second;
}

Result<std::string> TestHost::listen_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return make_error("test_host", "socket path too long");
  std::memcpy(addr.sun_path, path.data(), path.size());
  ::unlink(path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error("test_host", std::string("socket: ") + std::strerror(errno));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 16) != 0) {
    Error e = make_error("test_host", "bind/listen " + path + ": " + std::strerror(errno));
    ::close(fd);
    return e;
  }
  listen_fd_ = fd;
  listen_path_ = path;
  if (::pipe2(wake_, O_CLOEXEC) != 0) return make_error("test_host", "pipe");
  acceptor_ = std::thread([this] {
    for (;;) {
      pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[0].revents & POLLIN) {
        int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) serve_fd(c);
        continue;  // take every pending connection before looking at the wake pipe
      }
      if (p[1].revents) return;
    }
  });
  return "unix://" + path;
}

void TestHost::serve_fd(int fd) {
  std::lock_guard<std::mutex> g(mu_);
  conn_fds_.push_back(fd);
  threads_.emplace_back([this, fd] {
    Status s = serve_connection(fd);
    if (!s) {
      std::lock_guard<std::mutex> g2(mu_);
      state_.errors.push_back(s.error().to_string());
    }
    // The descriptor stays open until stop(): closing it here could let the number be reused
    // while stop() still holds it in conn_fds_.
    ::shutdown(fd, SHUT_RDWR);
  });
}

void TestHost::stop_accepting() {
  if (acceptor_.joinable()) {
    std::uint8_t b = 1;
    if (::write(wake_[1], &b, 1) != 1) std::abort();
    acceptor_.join();
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(listen_path_.c_str());
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
}

void TestHost::finish(bool hard) {
  stop_accepting();
  std::vector<std::thread> threads;
  std::vector<int> fds;
  {
    std::lock_guard<std::mutex> g(mu_);
    threads.swap(threads_);
    fds.swap(conn_fds_);
  }
  if (hard) {
    for (int fd : fds) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : threads) t.join();
  for (int fd : fds) ::close(fd);
}

void TestHost::drain() { finish(false); }
void TestHost::stop() { finish(true); }

Status TestHost::serve_connection(int fd) {
  if (hello_size_ > 0) {
    Bytes hello(hello_size_);
    if (!read_exact(fd, hello.data(), hello.size())) return make_error("client_closed", "no hello");
    std::lock_guard<std::mutex> g(mu_);
    state_.hellos.push_back(std::move(hello));
  }
  for (;;) {
    std::uint8_t method = 0;
    ssize_t r;
    do {
      r = ::read(fd, &method, 1);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return {};  // EOF on the method byte: the normal end
    if (r < 0) return make_error("client_io", std::strerror(errno));
    if (auto s = handle(fd, method); !s) return s;
  }
}

Status TestHost::handle(int fd, std::uint8_t method) {
  if (method >= host::kHostMethodCount) {
    return make_error("client_protocol", "unknown method id " + std::to_string(method));
  }
  auto m = static_cast<HostMethod>(method);
  Fault f = fault(m);
  std::vector<std::uint8_t> out;

  // Writes a status-prefixed answer honouring the injected fault. `payload` is the bytes after
  // the status byte; `slice` says whether they are a u32-length slice.
  auto answer = [&](HostErrorCode status, const Bytes& payload, bool slice) -> Status {
    switch (f) {
      case Fault::kHangUp:
        ::shutdown(fd, SHUT_RDWR);
        return make_error("fault_injected", "hang-up");
      case Fault::kGarbageStatus:
        out.push_back(0x7f);
        write_bytes(fd, out);
        return {};
      case Fault::kOversizedSlice:
        out.push_back(0);
        put_u32_le(out, 0xffffffffu);
        write_bytes(fd, out);
        return {};
      case Fault::kTruncated: {
        out.push_back(0);
        Bytes body;
        if (slice) put_u32_le(body, static_cast<std::uint32_t>(payload.size()));
        body.insert(body.end(), payload.begin(), payload.end());
        out.insert(out.end(), body.begin(), body.begin() + static_cast<std::ptrdiff_t>(body.size() / 2));
        write_bytes(fd, out);
        ::shutdown(fd, SHUT_RDWR);
        return make_error("fault_injected", "truncated");
      }
      case Fault::kGarbageCalldata:
        out.push_back(0);
        put_u32_le(out, 2);
        out.push_back(0xff);
        out.push_back(0xff);
        write_bytes(fd, out);
        return {};
      case Fault::kNone:
        break;
    }
    out.push_back(static_cast<std::uint8_t>(status));
    if (status == HostErrorCode::kOk) {
      if (slice) put_u32_le(out, static_cast<std::uint32_t>(payload.size()));
      out.insert(out.end(), payload.begin(), payload.end());
    }
    if (!write_bytes(fd, out)) return make_error("client_closed", "cannot write the answer");
    return {};
  };

  switch (m) {
    case HostMethod::kStorageRead: {
      std::uint8_t req[1 + 20 + 32 + 8];
      if (!read_exact(fd, req, sizeof(req))) return closed();
      StorageReadRecord rec{};
      if (req[0] > 2) return make_error("client_protocol", "bad storage type");
      rec.type = static_cast<host::StorageType>(req[0]);
      std::copy(req + 1, req + 21, rec.address.bytes.begin());
      std::copy(req + 21, req + 53, rec.slot.begin());
      rec.index = get_u32_le(req + 53);
      rec.len = get_u32_le(req + 57);
      if (std::uint64_t(rec.index) + rec.len > (std::uint64_t(1) << 32)) {
        return make_error("client_protocol", "storage_read past the end of the slot");
      }
      Bytes data(rec.len, 0);
      HostErrorCode status = HostErrorCode::kOk;
      {
        std::lock_guard<std::mutex> g(mu_);
        state_.storage_reads.push_back(rec);
        if (state_.forbidden_reads.count(rec.address.bytes)) {
          status = HostErrorCode::kForbidden;
        } else {
          auto it = state_.storage.find({rec.address.bytes, rec.slot});
          if (it != state_.storage.end()) {
            const Bytes& s = it->second;
            for (std::uint32_t i = 0; i < rec.len; ++i) {
              std::uint64_t at = std::uint64_t(rec.index) + i;
              if (at < s.size()) data[i] = s[at];
            }
          }
        }
      }
      return answer(status, data, false);
    }
    case HostMethod::kConsumeFuel: {
      std::uint8_t req[8];
      if (!read_exact(fd, req, 8)) return closed();
      std::uint64_t gas = 0;
      for (int i = 7; i >= 0; --i) gas = (gas << 8) | req[i];
      std::lock_guard<std::mutex> g(mu_);
      state_.fuel_consumed += gas;
      return {};
    }
    case HostMethod::kEthCall: {
      std::uint8_t addr[20];
      if (!read_exact(fd, addr, 20)) return closed();
      Bytes calldata;
      if (!read_slice(fd, calldata)) return closed();
      EthAnswer a;
      {
        std::lock_guard<std::mutex> g(mu_);
        state_.eth_calls.push_back(calldata);
        std::array<std::uint8_t, 20> key;
        std::copy(addr, addr + 20, key.begin());
        if (auto it = state_.eth_answers.find(key); it != state_.eth_answers.end()) a = it->second;
      }
      return answer(a.status, a.data, true);
    }
    case HostMethod::kGetBalance: {
      std::array<std::uint8_t, 20> key;
      if (!read_exact(fd, key.data(), 20)) return closed();
      U256Le bal{};
      {
        std::lock_guard<std::mutex> g(mu_);
        if (auto it = state_.balances.find(key); it != state_.balances.end()) bal = it->second;
      }
      return answer(HostErrorCode::kOk, Bytes(bal.begin(), bal.end()), false);
    }
    case HostMethod::kRemainingFuelAsGen: {
      U256Le v;
      {
        std::lock_guard<std::mutex> g(mu_);
        v = state_.remaining_fuel_as_gen;
      }
      return answer(HostErrorCode::kOk, Bytes(v.begin(), v.end()), false);
    }
    case HostMethod::kNotifyNondetDisagreement: {
      std::uint8_t req[4];
      if (!read_exact(fd, req, 4)) return closed();
      std::lock_guard<std::mutex> g(mu_);
      state_.disagreements.push_back(get_u32_le(req));
      return {};
    }
    case HostMethod::kConsumeResult: {
      Bytes result;
      if (!read_slice(fd, result)) return closed();
      {
        std::lock_guard<std::mutex> g(mu_);
        state_.results.push_back(std::move(result));
      }
      if (f == Fault::kHangUp) {
        ::shutdown(fd, SHUT_RDWR);
        return make_error("fault_injected", "hang-up");
      }
      std::uint8_t ack = f == Fault::kGarbageStatus ? 0x7f : 0x00;
      if (!write_all(fd, &ack, 1)) return make_error("client_closed", "cannot write the ack");
      return {};
    }
    case HostMethod::kResolveCallcontractExecutor: {
      std::uint8_t req[22];
      if (!read_exact(fd, req, sizeof(req))) return closed();
      std::array<std::uint8_t, 20> key;
      std::copy(req, req + 20, key.begin());
      calldata::Value v;
      {
        std::lock_guard<std::mutex> g(mu_);
        Address a;
        a.bytes = key;
        state_.resolve_requests.push_back(a);
        if (auto it = state_.resolve_answers.find(key); it != state_.resolve_answers.end()) v = it->second;
      }
      return answer(HostErrorCode::kOk, calldata::encode(v), true);
    }
    case HostMethod::kRunNested: {
      Bytes env;
      if (!read_slice(fd, env)) return closed();
      auto v = calldata::decode(env);
      if (!v) return make_error("client_protocol", "run_nested envelope is not calldata");
      std::function<calldata::Value(const calldata::Value&)> handler;
      {
        std::lock_guard<std::mutex> g(mu_);
        state_.nested_envelopes.push_back(*v);
        handler = state_.nested_handler;
      }
      calldata::Value reply = handler ? handler(*v)
                                      : calldata::Value::map({{"result", calldata::Value::map({{"kind", "Return"},
                                                                                                {"data", calldata::Value()}})},
                                                              {"small_hash", Bytes(32, 0)},
                                                              {"effect_free", true}});
      // run_nested answers with a bare slice (no status byte).
      Bytes body = calldata::encode(reply);
      switch (f) {
        case Fault::kNone: {
          put_u32_le(out, static_cast<std::uint32_t>(body.size()));
          out.insert(out.end(), body.begin(), body.end());
          write_bytes(fd, out);
          return {};
        }
        case Fault::kOversizedSlice:
          put_u32_le(out, 0xffffffffu);
          write_bytes(fd, out);
          return {};
        case Fault::kGarbageCalldata:
          put_u32_le(out, 1);
          out.push_back(0xff);
          write_bytes(fd, out);
          return {};
        default:
          ::shutdown(fd, SHUT_RDWR);
          return make_error("fault_injected", "hang-up");
      }
    }
  }
  return make_error("client_protocol", "unreachable");
}

}  // namespace genvm::test_host
