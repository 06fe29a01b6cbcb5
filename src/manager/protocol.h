// The manager socket protocol (spec impl-spec/appendix/manager-socket): framing, method and
// error ids, payload shapes, duration strings. Pure functions over bytes and calldata values;
// no I/O, so every rule here is tested without a socket.
//
//   message := method_id:u16_be request_id:u64_be calldata(payload)
//
//   auto m = parse_client_message(bytes, /*binary=*/true);
//   if (auto* e = std::get_if<ProtocolError>(&m)) send(encode_error(*e));
//
// Frames are untrusted: parse_client_message() bounds nothing itself beyond the calldata
// decoder's own bounds, because the WebSocket layer has already capped the message at
// max_message_bytes; every integer field is range-checked before use.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"

namespace genvm::manager {

using calldata::Value;
using Millis = std::chrono::milliseconds;

enum class Method : std::uint16_t {
  kError = 0,
  kHello = 1,
  kEvent = 2,
  kRun = 3,
  kAttach = 4,
  kCancel = 5,
  kAck = 6,
  kGetArtifact = 7,
};
inline constexpr std::uint16_t kMethodCount = 8;

enum class ErrorCode : std::uint8_t {
  kInternal = 0,
  kMalformedFrame = 1,
  kUnknownMethod = 2,
  kUnknownId = 3,
  kBootIdMismatch = 4,
  kBadRequestId = 5,
  kNotFinished = 6,
};

inline constexpr std::uint32_t kProtocolMajor = 0;       // spec: current_major
inline constexpr std::size_t kHeaderBytes = 10;          // u16 method + u64 request id
inline constexpr std::uint32_t kArtifactChunkCap = 256 * 1024;  // spec: chunk_cap
// Whatever a caller asks, a deadline is at most this (spec: silently shortened).
inline constexpr Millis kMaxDeadline = std::chrono::hours(24);

std::string_view to_string(Method m);       // "get_artifact"; "" when out of range
std::string_view to_string(ErrorCode c);    // "not_finished"

// What a request failed on, carried as Error::errc by the manager's request errors (the
// decoders here and in run_request.h, the registry) so callers branch on the enum, never on the
// code text; errc 0 (none of these) is answered `internal`.
enum class RequestFailure : int {
  kMalformed = 1,      // malformed_frame
  kUnknownId,          // unknown_id
  kBootIdMismatch,     // boot_id_mismatch
  kNotFinished,        // not_finished
  kModulesNotRunning,  // a run needing modules when none run: internal on the socket
};
Error request_failure(RequestFailure f, std::string message);  // the code is the error's name
ErrorCode socket_error_code(const Error& e);
bool is_failure(const Error& e, RequestFailure f);

// ---- Frames ------------------------------------------------------------------------------
std::vector<std::uint8_t> encode_frame(Method method, std::uint64_t request_id,
                                       const Value& payload);

// A client request that passed every framing rule: its method is one a client may send (run,
// attach, cancel, ack, get_artifact), its id is non-zero, and its payload is the externally
// tagged single-key map whose key names the method; `body` is the value under that key.
struct ClientRequest {
  Method method;
  std::uint64_t request_id;
  Value body;
};
// What to answer instead: an `error` message with this request id (0 when none could be read).
struct ProtocolError {
  ErrorCode code;
  std::uint64_t request_id;
  std::string message;
};
std::variant<ClientRequest, ProtocolError> parse_client_message(std::span<const std::uint8_t> bytes,
                                                                bool binary);

// Decodes any frame (the client side of tests and tools): header and calldata payload.
struct Frame {
  std::uint16_t method;
  std::uint64_t request_id;
  Value payload;
};
Result<Frame> decode_frame(std::span<const std::uint8_t> bytes);

// ---- Payloads ----------------------------------------------------------------------------
Value make_hello(std::uint64_t boot_id);
Value error_payload(ErrorCode code, std::string_view message);
std::vector<std::uint8_t> encode_error(const ProtocolError& e);

struct AttachArgs {
  std::uint64_t boot_id;
  std::uint64_t genvm_id;
};
struct ArtifactArgs {
  std::uint64_t genvm_id;
  std::string field;  // checked against the run's artifacts after the id (run.rs get_artifact)
  std::uint64_t offset;
  std::uint32_t max_len;
};
// The request bodies as socket.rs decodes them: records with exactly these fields (offset is
// required on the socket; the HTTP adapter defaults it). Error code "malformed_frame".
Result<AttachArgs> parse_attach(const Value& body);
Result<std::uint64_t> parse_genvm_id(const Value& body);  // cancel, ack: {"genvm_id": u64}
Result<ArtifactArgs> parse_get_artifact(const Value& body);

// ---- Durations ---------------------------------------------------------------------------
// The public ManagerDuration (run.rs): "<digits>[.<digits>]<unit>" (the whole part may be empty
// when a fraction is given: ".5s"), unit one of ms, s, m, h; no sign, no space, the unit is
// mandatory. The fraction is scaled exactly and truncated to whole milliseconds; more than u64
// milliseconds is rejected, and a value past i64 milliseconds saturates. Error code
// "malformed_frame".
Result<Millis> parse_duration(std::string_view text);
std::string format_duration(Millis d);  // "1500ms", "30s", "5m": the shortest exact form

}  // namespace genvm::manager
