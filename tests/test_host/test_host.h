// TestHost: a real GenVM host-protocol server with in-memory state, for integration tests.
//
//   TestHost host;
//   host.state().balances[addr] = u256_le(1000);
//   auto uri = host.listen_unix(dir + "/host.sock");   // "unix://…"; or host.serve_fd(fd)
//   ... run a client / the executor against uri ...
//   host.stop();                                       // joins every thread
//   host.state().results                               // what consume_result delivered
//
// It speaks impl-spec/appendix/host-loop.rst byte for byte: each connection first reads the
// number of hello bytes it was told to expect (set_hello_size), then serves methods until EOF.
// Storage is sparse per (address, slot), zero where never written; the storage type of a read is
// recorded but every type sees the same state. Faults can be injected per method to exercise
// the client's error paths (a garbage status byte, a hang-up before the answer, an oversized or
// truncated slice).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"
#include "common/host/protocol.h"

namespace genvm::test_host {

using calldata::Address;
using calldata::Bytes;
using Slot = std::array<std::uint8_t, host::kSlotIdSize>;
using U256Le = std::array<std::uint8_t, 32>;

U256Le u256_le(std::uint64_t v);

struct EthAnswer {
  host::HostErrorCode status = host::HostErrorCode::kOk;
  Bytes data;
};

struct StorageReadRecord {
  host::StorageType type;
  Address address;
  Slot slot;
  std::uint32_t index;
  std::uint32_t len;
};

struct State {
  std::map<std::pair<std::array<std::uint8_t, 20>, Slot>, Bytes> storage;
  std::map<std::array<std::uint8_t, 20>, U256Le> balances;         // absent: zero
  std::map<std::array<std::uint8_t, 20>, EthAnswer> eth_answers;   // absent: ok, empty
  std::set<std::array<std::uint8_t, 20>> forbidden_reads;          // storage_read -> forbidden
  // resolve_callcontract_executor: the calldata value answered for an address (null or the
  // routing payload as bytes; anything else to test refusals); absent: null.
  std::map<std::array<std::uint8_t, 20>, calldata::Value> resolve_answers;
  U256Le remaining_fuel_as_gen{};
  // run_nested: the reply map for an envelope; absent handler answers a fixed reply
  // {result: {kind: "Return", data: null}, small_hash: 32 zero bytes, effect_free: true}.
  std::function<calldata::Value(const calldata::Value&)> nested_handler;

  // Recorded traffic.
  std::uint64_t fuel_consumed = 0;
  std::vector<std::uint32_t> disagreements;
  std::vector<Bytes> results;
  std::vector<StorageReadRecord> storage_reads;
  std::vector<Bytes> eth_calls;
  std::vector<calldata::Value> nested_envelopes;
  std::vector<Address> resolve_requests;
  std::vector<Bytes> hellos;
  std::vector<std::string> errors;  // protocol errors seen from clients
};

// Applies a reported result's storage_changes (array of [slot ‖ u32 LE offset, bytes]) to the
// storage of `address`, as a node would on accepting the result. Error on a malformed list.
Status apply_storage_changes(State& state, const Address& address, const calldata::Value& changes);

enum class Fault {
  kNone,
  kGarbageStatus,   // status byte 0x7f
  kHangUp,          // close without answering
  kOversizedSlice,  // announce a 4 GiB - 1 slice
  kTruncated,       // answer half of the payload, then close
  kGarbageCalldata, // a slice that is not calldata (resolve, run_nested)
};

class TestHost {
 public:
  TestHost() = default;
  ~TestHost();
  TestHost(const TestHost&) = delete;
  TestHost& operator=(const TestHost&) = delete;

  // Bytes of hello each new connection reads before the first method byte.
  void set_hello_size(std::size_t n) { hello_size_ = n; }
  void set_fault(host::HostMethod m, Fault f);

  // Listens on a unix socket (the path is removed first); returns "unix://PATH".
  Result<std::string> listen_unix(const std::string& path);
  // Serves one connected descriptor on a thread; the host owns it.
  void serve_fd(int fd);
  // Serves one connection on the calling thread until EOF or a protocol error.
  Status serve_connection(int fd);

  // Accepts what is pending, then waits for every connection to end at its client's EOF: the
  // state is then complete. Only for clients that do close.
  void drain();
  // Stops accepting, shuts every connection down and joins the threads.
  void stop();

  // Locked access to the state.
  template <class F>
  auto with_state(F&& f) {
    std::lock_guard<std::mutex> g(mu_);
    return f(state_);
  }
  // Unlocked: only while no connection is being served (before listen or after stop).
  State& state() { return state_; }

 private:
  Status handle(int fd, std::uint8_t method);
  Fault fault(host::HostMethod m);
  void stop_accepting();
  void finish(bool hard);

  std::mutex mu_;
  State state_;
  std::map<int, Fault> faults_;
  std::size_t hello_size_ = 0;
  int listen_fd_ = -1;
  std::string listen_path_;
  std::vector<int> conn_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
  int wake_[2] = {-1, -1};
};

}  // namespace genvm::test_host
