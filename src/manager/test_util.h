// Helpers shared by the manager's tests (not part of the library).
#pragma once

#include <chrono>
#include <functional>
#include <limits>
#include <string>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <boost/asio/io_context.hpp>

#include "common/calldata.h"
#include "common/host/fee_params.h"

namespace genvm::manager::testing {

using calldata::Value;

// A MessageData with every required field (addresses 0x01.., 0xaa..).
inline Value message_data(bool is_init = false) {
  calldata::Address contract, sender;
  contract.bytes.fill(1);
  sender.bytes.fill(0xaa);
  return Value::map({{"contract_address", contract}, {"sender_address", sender}, {"origin_address", sender},
                     {"signer_address", sender}, {"chain_id", 61999}, {"value", 0}, {"is_init", is_init}});
}

// A run request with every field the spec requires (selector: major 0); `extra` overrides or
// adds fields.
inline Value run_body(bool is_sync, Value::Map extra = {}) {
  Value::Map m{{"selector", Value::map({{"kind", "major"}, {"major", 0}})},
               {"message", message_data()},
               {"is_sync", is_sync},
               {"bucket_totals", Value::Array{}},
               {"host_data", "{}"},
               {"timestamp", "2026-01-01T00:00:00Z"},
               {"host", "unix:///nowhere"},
               {"calldata", calldata::Bytes{}},
               {"code", Value()},
               {"leader_nondet_results", Value()},
               {"initial_time_units_allocation", 1000}};
  for (auto& [k, v] : extra) m[k] = v;
  return Value(std::move(m));
}

// The fee fields of a run request our own hosts send (host::local_host_fees: the constants the
// executor's default fee rules read, four buckets, one wildcard allocation node per kind of
// message), for the tests that run the real executor. Users link genvm_host.
inline Value::Map local_fee_fields() {
  host::HostFees f = host::local_host_fees(BigInt(std::numeric_limits<std::uint64_t>::max()));
  Value::Array buckets(f.bucket_totals.begin(), f.bucket_totals.end());
  Value::Map gas;
  for (const auto& [k, v] : f.gas_data) gas[k] = v;
  return {{"bucket_totals", Value(std::move(buckets))},
          {"gas_data", Value(std::move(gas))},
          {"message_fee_allocation", host::allocation_to_value(f.message_fee_allocation)}};
}

// Runs `io` until `done()` holds. The limit only keeps a broken build from hanging CI; no test
// asserts on how long anything took.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::seconds limit = std::chrono::seconds(60)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return true;
}

// A unix socket that listens and never accepts: a host that never answers. Connections queue
// in the backlog (then block in connect), so an executor given it waits forever and only a
// kill ends it. Returns the listening fd (close it at the end) or -1.
inline int listen_never_accept(const std::string& path, int backlog = 1024) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) return -1;
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, backlog) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace genvm::manager::testing
