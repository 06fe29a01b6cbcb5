// HostClient: the executor's side of the GenVM host protocol (impl-spec/appendix/host-loop.rst).
//
//   auto c = HostClient::connect({"unix:///run/host.sock", "fd://3"}, d.method_hosts,
//                                d.host_hello_data);
//   auto bal = c->get_balance(addr);        // Result<U256Le>
//   c->consume_result(report_bytes);        // waits for the host's ack byte
//
// Transports: `unix://PATH`, `fd://N` (an already connected stream; the client takes it over),
// `tcp://HOST:PORT` (and bare `HOST:PORT`). Right after connecting host i, its hello bytes are
// written verbatim. Each method goes to the connection `method_hosts[method id]` names (host 0
// when the table is short or empty); a table naming a connection that does not exist is an
// error at connect time.
//
// Failures are values, never crashes: a host that hangs up ("host_closed"), answers a status
// byte the protocol does not define ("host_protocol"), announces a slice larger than
// HostLimits::max_slice ("host_oversized", nothing is allocated for it), or fails at the socket
// level ("host_io") poisons its connection: every later call on it returns the same error, since
// the stream position is lost. A slice read whole whose calldata is not the answer's shape
// (resolve_callcontract_executor, run_nested) is "host_protocol" too, but leaves the connection
// usable: the stream is still in step, and the run must still be able to deliver its result. The host's own error answers are "host_evm_reverted"
// and "host_forbidden"; they leave the connection usable. There is no read timeout: the executor
// has none by design (the manager SIGKILLs it), so a host that stops answering blocks the call.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"
#include "common/vm_error.h"
#include "common/host/nested_run.h"
#include "common/host/protocol.h"
#include "common/host/wire.h"

namespace genvm::executor {

// The protocol's names, as the executor's code uses them.
using host::EntryKind;
using host::HostErrorCode;
using host::HostMethod;
using host::kAddressSize;
using host::kCurrentMajor;
using host::kHostMethodCount;
using host::kSlotIdSize;
using host::kU256Size;
using host::StorageType;

using SlotId = std::array<std::uint8_t, kSlotIdSize>;
using U256Le = std::array<std::uint8_t, kU256Size>;  // 256-bit unsigned, little-endian

// What a host call's failure was, in Error::errc (host_error() reads it; Error::code is its
// name): the host's own answers kEvmReverted "host_evm_reverted" and kForbidden "host_forbidden"
// (the connection stays usable); kClosed, kProtocol, kOversized, kIo (the connection is
// poisoned); kUri, kRoute (bad --host / method_hosts, at connect); kRequest (a request too large
// to send); kReplyFootprint "host_reply_footprint" (a run_nested reply that would take more host
// memory decoded than the caller allowed; the connection stays usable).
enum class HostError : int {
  kOther = 0,
  kEvmReverted,
  kForbidden,
  kClosed,
  kProtocol,
  kOversized,
  kIo,
  kUri,
  kRoute,
  kRequest,
  kReplyFootprint,
};
inline HostError host_error(const Error& e) { return static_cast<HostError>(e.errc); }

struct HostLimits {
  // Largest slice a host may announce (eth_call answers, resolve/run_nested replies): the
  // protocol's one limit, so a nested run's largest result reaches its caller.
  std::size_t max_slice = host::kMaxHostSlice;
};

// One byte stream to one host.
class HostConnection {
 public:
  // Connects to `uri` and writes `hello` (may be empty).
  static Result<std::unique_ptr<HostConnection>> connect(std::string_view uri,
                                                         std::span<const std::uint8_t> hello);
  // Takes ownership of a connected descriptor.
  explicit HostConnection(int fd) : fd_(fd) {}
  ~HostConnection();
  HostConnection(const HostConnection&) = delete;
  HostConnection& operator=(const HostConnection&) = delete;

  Status write_all(std::span<const std::uint8_t> data);
  Status read_exact(std::uint8_t* out, std::size_t n);
  Result<std::uint8_t> read_byte();
  // u32 length + bytes; lengths above `max` fail before any allocation.
  Result<calldata::Bytes> read_slice(std::size_t max);

  // Set once a transport failure happened; later calls return it.
  const std::optional<Error>& poisoned() const { return poisoned_; }
  void poison(Error e) { if (!poisoned_) poisoned_ = std::move(e); }
  int fd() const { return fd_; }

 private:
  int fd_;
  bool is_socket_ = true;
  std::optional<Error> poisoned_;
};

// The run_nested reply (host-loop.rst; NestedRunReply in modules-interfaces nested.rs), as the
// shared codec decodes it (common/host/nested_run.h: closed maps, `kind` a ResultCode name).
// Only the shape is checked here; whether a caller may accept it (effect-free, a 32-byte hash,
// string VM errors) is the caller's check.
using NestedReply = host::NestedRunReply;

class HostClient {
 public:
  static Result<std::unique_ptr<HostClient>> connect(const std::vector<std::string>& uris,
                                                     std::vector<std::uint8_t> method_hosts,
                                                     const std::vector<calldata::Bytes>& hello,
                                                     HostLimits limits = {});
  // Over connections made elsewhere (tests, fd pairs). Checks the routing table.
  static Result<std::unique_ptr<HostClient>> from_connections(
      std::vector<std::unique_ptr<HostConnection>> conns, std::vector<std::uint8_t> method_hosts,
      HostLimits limits = {});

  // Exactly `len` bytes of `slot` from `index` on, as the host sees storage `type`.
  Result<calldata::Bytes> storage_read(StorageType type, const calldata::Address& address,
                                       const SlotId& slot, std::uint32_t index, std::uint32_t len);
  Status consume_fuel(std::uint64_t gas);  // no answer
  Result<calldata::Bytes> eth_call(const calldata::Address& address,
                                   std::span<const std::uint8_t> calldata);
  Result<U256Le> get_balance(const calldata::Address& address);
  Result<U256Le> remaining_fuel_as_gen();
  Status notify_nondet_disagreement(std::uint32_t call_no);  // no answer
  // Sends the encoded result and waits for the host's 0x00 acknowledgement.
  Status consume_result(std::span<const std::uint8_t> result);
  // The host's routing for a CallContract: nullopt when it declines (the reply is calldata
  // null), else the routing payload, calldata bytes the executor carries into run_nested
  // without reading them (an encoded ExecutorSelector, read by the manager only). Any other
  // reply is "host_protocol".
  Result<std::optional<calldata::Bytes>> resolve_callcontract_executor(const calldata::Address& address,
                                                                       StorageType state,
                                                                       std::uint8_t advisory_major);
  // Sends the NestedRunEnvelope and reads the reply slice (no status byte). A reply that is not
  // a NestedRunReply is "host_protocol". The reply is decoded within `max_footprint` octets of
  // host memory (calldata::DecodeLimits), else kReplyFootprint; *footprint (if given) is what
  // the decoded reply took.
  Result<NestedReply> run_nested(const calldata::Value& envelope, std::uint64_t max_footprint = UINT64_MAX,
                                 std::uint64_t* footprint = nullptr);

  std::size_t connection_count() const { return conns_.size(); }

 private:
  HostClient(std::vector<std::unique_ptr<HostConnection>> conns,
             std::vector<std::uint8_t> method_hosts, HostLimits limits)
      : conns_(std::move(conns)), method_hosts_(std::move(method_hosts)), limits_(limits) {}
  Result<HostConnection*> begin(HostMethod m);
  // Reads the status byte: ok, a host error answer, or garbage (poisons).
  Status read_status(HostConnection& c, HostMethod m);
  template <class T>
  Result<T> fail(HostConnection& c, Error e);

  std::vector<std::unique_ptr<HostConnection>> conns_;
  std::vector<std::uint8_t> method_hosts_;
  HostLimits limits_;
};

}  // namespace genvm::executor
