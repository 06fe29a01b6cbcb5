#include "manager/protocol.h"

#include "manager/shape.h"

#include <array>
#include <limits>

namespace genvm::manager {
namespace {

constexpr std::array<std::string_view, kMethodCount> kMethodNames = {
    "error", "hello", "event", "run", "attach", "cancel", "ack", "get_artifact"};
constexpr std::array<std::string_view, 7> kErrorNames = {
    "internal",   "malformed_frame", "unknown_method", "unknown_id",
    "boot_id_mismatch", "bad_request_id", "not_finished"};

Error malformed(std::string message) { return request_failure(RequestFailure::kMalformed, std::move(message)); }

std::uint64_t read_be(std::span<const std::uint8_t> b, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | b[i];
  return v;
}

}  // namespace

std::string_view to_string(Method m) {
  auto i = static_cast<std::size_t>(m);
  return i < kMethodNames.size() ? kMethodNames[i] : std::string_view();
}

std::string_view to_string(ErrorCode c) {
  auto i = static_cast<std::size_t>(c);
  return i < kErrorNames.size() ? kErrorNames[i] : std::string_view("internal");
}

namespace {
ErrorCode socket_code(RequestFailure f) {
  switch (f) {
    case RequestFailure::kMalformed: return ErrorCode::kMalformedFrame;
    case RequestFailure::kUnknownId: return ErrorCode::kUnknownId;
    case RequestFailure::kBootIdMismatch: return ErrorCode::kBootIdMismatch;
    case RequestFailure::kNotFinished: return ErrorCode::kNotFinished;
    case RequestFailure::kModulesNotRunning: break;  // socket.rs answers it `internal`
  }
  return ErrorCode::kInternal;
}
}  // namespace

Error request_failure(RequestFailure f, std::string message) {
  std::string name = f == RequestFailure::kModulesNotRunning ? "modules_not_running" : std::string(to_string(socket_code(f)));
  return make_error(f, std::move(name), std::move(message));
}

// Only the manager's request errors reach the socket; anything else is a handler failure.
ErrorCode socket_error_code(const Error& e) {
  return e.errc == 0 ? ErrorCode::kInternal : socket_code(static_cast<RequestFailure>(e.errc));
}

bool is_failure(const Error& e, RequestFailure f) { return e.errc == static_cast<int>(f); }

std::vector<std::uint8_t> encode_frame(Method method, std::uint64_t request_id,
                                       const Value& payload) {
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderBytes + 16);
  auto m = static_cast<std::uint16_t>(method);
  out.push_back(static_cast<std::uint8_t>(m >> 8));
  out.push_back(static_cast<std::uint8_t>(m));
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::uint8_t>(request_id >> shift));
  }
  calldata::encode_to(payload, out);
  return out;
}

Result<Frame> decode_frame(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes) {
    return malformed("message of " + std::to_string(bytes.size()) + " bytes is shorter than the 10-byte header");
  }
  Frame f{static_cast<std::uint16_t>(read_be(bytes, 2)), read_be(bytes.subspan(2), 8), Value()};
  auto payload = calldata::decode(bytes.subspan(kHeaderBytes));
  if (!payload) return malformed("payload: " + payload.error().to_string());
  f.payload = std::move(*payload);
  return f;
}

std::variant<ClientRequest, ProtocolError> parse_client_message(std::span<const std::uint8_t> bytes,
                                                                bool binary) {
  // Messages worded as socket.rs words them.
  if (!binary) return ProtocolError{ErrorCode::kMalformedFrame, 0, "text messages are not valid"};
  if (bytes.size() < kHeaderBytes) return ProtocolError{ErrorCode::kMalformedFrame, 0, "message is shorter than header"};
  auto method_id = static_cast<std::uint16_t>(read_be(bytes, 2));
  std::uint64_t request_id = read_be(bytes.subspan(2), 8);
  // socket.rs: the method id is looked up before the request id is.
  if (method_id >= kMethodCount) {
    return ProtocolError{ErrorCode::kUnknownMethod, request_id, "unknown method id " + std::to_string(method_id)};
  }
  if (request_id == 0) {
    return ProtocolError{ErrorCode::kBadRequestId, 0, "client requests must use request_id != 0"};
  }
  auto method = static_cast<Method>(method_id);
  if (method_id < static_cast<std::uint16_t>(Method::kRun)) {
    // error, hello and event flow from the manager only.
    return ProtocolError{ErrorCode::kUnknownMethod, request_id,
                         "method " + std::to_string(method_id) + " is not a client request"};
  }
  auto payload = calldata::decode(bytes.subspan(kHeaderBytes));
  if (!payload) {
    return ProtocolError{ErrorCode::kMalformedFrame, request_id, "payload: " + payload.error().to_string()};
  }
  const Value::Map* map = payload->if_map();
  std::string_view name = to_string(method);
  if (map == nullptr || map->size() != 1 || map->begin()->first != name) {
    return ProtocolError{ErrorCode::kMalformedFrame, request_id,
                         "payload must be a single-key map tagged \"" + std::string(name) + "\""};
  }
  Value body = map->begin()->second;
  if (!body.is_map()) {
    return ProtocolError{ErrorCode::kMalformedFrame, request_id,
                         "the \"" + std::string(name) + "\" value must be a map"};
  }
  return ClientRequest{method, request_id, std::move(body)};
}

Value make_hello(std::uint64_t boot_id) {
  return Value::map({{"hello", Value::map({{"boot_id", boot_id}, {"protocol_major", kProtocolMajor}})}});
}

Value error_payload(ErrorCode code, std::string_view message) {
  return Value::map({{"code", static_cast<std::uint8_t>(code)}, {"message", std::string(message)}});
}

std::vector<std::uint8_t> encode_error(const ProtocolError& e) {
  return encode_frame(Method::kError, e.request_id, error_payload(e.code, e.message));
}

namespace {
Error malformed_shape(const Status& s) { return malformed(s.error().message); }
std::uint64_t u64_of(const Value& body, std::string_view key) { return *body.find(key)->as_int().to_uint64(); }
}  // namespace

Result<AttachArgs> parse_attach(const Value& body) {
  static const Shape& sh = shape::record({{"boot_id", shape::u64()}, {"genvm_id", shape::u64()}});
  if (Status s = check(sh, body); !s) return malformed_shape(s);
  return AttachArgs{u64_of(body, "boot_id"), u64_of(body, "genvm_id")};
}

Result<std::uint64_t> parse_genvm_id(const Value& body) {
  static const Shape& sh = shape::record({{"genvm_id", shape::u64()}});
  if (Status s = check(sh, body); !s) return malformed_shape(s);
  return u64_of(body, "genvm_id");
}

Result<ArtifactArgs> parse_get_artifact(const Value& body) {
  static const Shape& sh = shape::record(
      {{"genvm_id", shape::u64()}, {"field", shape::string()}, {"offset", shape::u64()}, {"max_len", shape::u32()}});
  if (Status s = check(sh, body); !s) return malformed_shape(s);
  return ArtifactArgs{u64_of(body, "genvm_id"), body.find("field")->as_string(), u64_of(body, "offset"),
                      static_cast<std::uint32_t>(u64_of(body, "max_len"))};
}

Result<Millis> parse_duration(std::string_view text) {
  // The public ManagerDuration, rule for rule: strip the unit (ms before s), split the number
  // at one '.', digits only on either side (the whole part may be empty when a fraction is
  // given: ".5s"), the fraction scaled exactly and truncated to milliseconds, in 128 bits, and
  // the total must fit u64 milliseconds.
  auto bad = [&](std::string why) {
    return malformed("duration \"" + std::string(text.substr(0, 64)) + "\": " + why);
  };
  using U128 = unsigned __int128;
  std::string_view number;
  U128 unit;
  if (text.ends_with("ms")) number = text.substr(0, text.size() - 2), unit = 1;
  else if (text.ends_with("s")) number = text.substr(0, text.size() - 1), unit = 1000;
  else if (text.ends_with("m")) number = text.substr(0, text.size() - 1), unit = 60'000;
  else if (text.ends_with("h")) number = text.substr(0, text.size() - 1), unit = 3'600'000;
  else return bad("must end with ms, s, m, or h");
  if (number.empty()) return bad("the number is empty");
  auto dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::optional<std::string_view> frac;
  if (dot != std::string_view::npos) {
    frac = number.substr(dot + 1);
    if (frac->find('.') != std::string_view::npos) return bad("more than one decimal point");
  }
  if (whole.empty() && (!frac || frac->empty())) return bad("the number is empty");
  constexpr U128 kMax = ~U128(0);
  // Decimal digits to u128; nullopt on a non-digit or overflow.
  auto parse = [&](std::string_view digits) -> std::optional<U128> {
    U128 v = 0;
    for (char ch : digits) {
      if (ch < '0' || ch > '9') return std::nullopt;
      auto d = static_cast<unsigned>(ch - '0');
      if (v > (kMax - d) / 10) return std::nullopt;
      v = v * 10 + d;
    }
    return v;
  };
  for (char ch : whole) {
    if (ch < '0' || ch > '9') return bad("the whole part is not a number");
  }
  auto whole_value = parse(whole);
  if (!whole_value) return bad("too large");
  U128 frac_millis = 0;
  if (frac) {
    if (frac->empty()) return bad("the fractional part is not a number");
    for (char ch : *frac) {
      if (ch < '0' || ch > '9') return bad("the fractional part is not a number");
    }
    if (frac->size() > 38) return bad("the fractional part is too long");  // 10^39 > 2^128
    U128 scale = 1;
    for (std::size_t i = 0; i < frac->size(); ++i) scale *= 10;
    auto f = parse(*frac);
    if (!f || *f > kMax / unit) return bad("too large");
    frac_millis = *f * unit / scale;
  }
  if (*whole_value > (kMax - frac_millis) / unit) return bad("too large");
  U128 ms = *whole_value * unit + frac_millis;
  if (ms > static_cast<U128>(UINT64_MAX)) return bad("too large");
  // Our clock counts in i64: past ~292 million years a duration saturates (every use caps
  // far below: a deadline at 24 h).
  auto count = ms > static_cast<U128>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(ms);
  return Millis(count);
}

std::string format_duration(Millis d) {
  auto ms = d.count();
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace genvm::manager
