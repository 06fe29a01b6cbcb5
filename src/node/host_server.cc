#include "node/host_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/host/protocol.h"
#include "common/host/wire.h"

namespace genvm::node {

namespace {

using host::HostErrorCode;
using host::HostMethod;
using host::get_u32_le;
using host::put_u32_le;
using host::read_exact;
using host::write_all;

// The executor's own result is at most a few MiB; the shared bound keeps a broken client from
// making the node allocate gigabytes.
bool read_slice(int fd, Bytes& out) { return host::read_slice(fd, host::kMaxHostSlice, out); }

Error closed() { return make_error("host_client_closed", "the executor closed mid-request"); }

Status send(int fd, const Bytes& b) {
  if (!write_all(fd, b.data(), b.size())) return make_error("host_client_closed", "cannot write the answer");
  return {};
}

}  // namespace

Status serve_host_connection(int fd, State& state, HostSession& session) {
  for (;;) {
    std::uint8_t method = 0;
    ssize_t r;
    do {
      r = ::read(fd, &method, 1);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return {};  // EOF on the method byte: the executor's normal end
    if (r < 0) return make_error("host_io", std::strerror(errno));
    if (method >= host::kHostMethodCount) {
      return make_error("host_client_protocol", "unknown method id " + std::to_string(method));
    }
    Bytes out;
    switch (static_cast<HostMethod>(method)) {
      case HostMethod::kStorageRead: {
        std::uint8_t req[1 + 20 + 32 + 8];
        if (!read_exact(fd, req, sizeof(req))) return closed();
        if (req[0] > 2) return make_error("host_client_protocol", "bad storage type");
        Address a;
        SlotId slot;
        std::memcpy(a.bytes.data(), req + 1, 20);
        std::memcpy(slot.data(), req + 21, 32);
        std::uint32_t index = get_u32_le(req + 53), len = get_u32_le(req + 57);
        if (std::uint64_t(index) + len > (std::uint64_t(1) << 32)) {
          return make_error("host_client_protocol", "storage_read past the end of the slot");
        }
        auto data = state.read_storage(a, slot, index, len);
        if (!data) return data.take_error();
        ++session.storage_reads;
        out.push_back(static_cast<std::uint8_t>(HostErrorCode::kOk));
        out.insert(out.end(), data->begin(), data->end());
        if (auto s = send(fd, out); !s) return s;
        break;
      }
      case HostMethod::kConsumeFuel: {
        std::uint8_t req[8];
        if (!read_exact(fd, req, 8)) return closed();
        std::uint64_t gas = 0;
        for (int i = 7; i >= 0; --i) gas = (gas << 8) | req[i];
        session.fuel_consumed += gas;
        break;
      }
      case HostMethod::kEthCall: {
        std::uint8_t addr[20];
        Bytes cd;
        if (!read_exact(fd, addr, 20) || !read_slice(fd, cd)) return closed();
        out.push_back(static_cast<std::uint8_t>(HostErrorCode::kEvmReverted));
        if (auto s = send(fd, out); !s) return s;
        break;
      }
      case HostMethod::kGetBalance: {
        Address a;
        if (!read_exact(fd, a.bytes.data(), 20)) return closed();
        auto bal = state.balance(a);
        if (!bal) return bal.take_error();
        out.push_back(static_cast<std::uint8_t>(HostErrorCode::kOk));
        out.insert(out.end(), bal->begin(), bal->end());
        if (auto s = send(fd, out); !s) return s;
        break;
      }
      case HostMethod::kRemainingFuelAsGen: {
        out.assign(33, 0);  // ok, then a u256 zero
        if (auto s = send(fd, out); !s) return s;
        break;
      }
      case HostMethod::kNotifyNondetDisagreement: {
        std::uint8_t req[4];
        if (!read_exact(fd, req, 4)) return closed();
        session.disagreements.push_back(get_u32_le(req));
        break;
      }
      case HostMethod::kConsumeResult: {
        Bytes result;
        if (!read_slice(fd, result)) return closed();
        session.results.push_back(std::move(result));
        out.push_back(0);
        if (auto s = send(fd, out); !s) return s;
        break;
      }
      case HostMethod::kResolveCallcontractExecutor: {
        std::uint8_t req[22];
        if (!read_exact(fd, req, sizeof(req))) return closed();
        Bytes null_v = calldata::encode(calldata::Value());
        out.push_back(static_cast<std::uint8_t>(HostErrorCode::kOk));
        put_u32_le(out, static_cast<std::uint32_t>(null_v.size()));
        out.insert(out.end(), null_v.begin(), null_v.end());
        if (auto s = send(fd, out); !s) return s;
        break;
      }
      case HostMethod::kRunNested:
        return make_error("host_unsupported", "run_nested is not served by genvm-node");
    }
  }
}

}  // namespace genvm::node
