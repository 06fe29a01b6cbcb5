#include "manager/protocol.h"

#include <gtest/gtest.h>

namespace genvm::manager {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes frame(std::uint16_t method, std::uint64_t id, const Value& payload) {
  return encode_frame(static_cast<Method>(method), id, payload);
}

const ProtocolError& as_error(const std::variant<ClientRequest, ProtocolError>& v) {
  static const ProtocolError none{ErrorCode::kInternal, 0, "not an error"};
  const auto* e = std::get_if<ProtocolError>(&v);
  EXPECT_NE(e, nullptr);
  return e ? *e : none;
}

TEST(ManagerProtocol, IdsMatchTheSpecTable) {
  EXPECT_EQ(static_cast<int>(Method::kError), 0);
  EXPECT_EQ(static_cast<int>(Method::kGetArtifact), 7);
  EXPECT_EQ(to_string(Method::kGetArtifact), "get_artifact");
  EXPECT_EQ(static_cast<int>(ErrorCode::kNotFinished), 6);
  EXPECT_EQ(to_string(ErrorCode::kBootIdMismatch), "boot_id_mismatch");
  Error unknown = request_failure(RequestFailure::kUnknownId, "gone");
  EXPECT_EQ(unknown.code, "unknown_id");
  EXPECT_EQ(socket_error_code(unknown), ErrorCode::kUnknownId);
  EXPECT_EQ(socket_error_code(request_failure(RequestFailure::kModulesNotRunning, "m")), ErrorCode::kInternal);
  EXPECT_EQ(request_failure(RequestFailure::kModulesNotRunning, "m").code, "modules_not_running");
  EXPECT_EQ(socket_error_code(make_error("unknown_id", "a name alone is not a failure")), ErrorCode::kInternal);
}

TEST(ManagerProtocol, HeaderIsBigEndianMethodThenRequestId) {
  Bytes b = frame(0x0102, 0x0304050607080910ull, Value());
  ASSERT_EQ(b.size(), kHeaderBytes + 1);  // null encodes to one byte
  EXPECT_EQ((Bytes{b.begin(), b.begin() + 10}),
            (Bytes{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x10}));
  auto f = decode_frame(b);
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  EXPECT_EQ(f->method, 0x0102);
  EXPECT_EQ(f->request_id, 0x0304050607080910ull);
  EXPECT_TRUE(f->payload.is_null());
}

TEST(ManagerProtocol, ValidRequestYieldsTheTaggedBody) {
  Value body = Value::map({{"genvm_id", 7}});
  auto m = parse_client_message(frame(5, 42, Value::map({{"cancel", body}})), true);
  auto* r = std::get_if<ClientRequest>(&m);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->method, Method::kCancel);
  EXPECT_EQ(r->request_id, 42u);
  EXPECT_EQ(r->body, body);
  EXPECT_EQ(*parse_genvm_id(r->body), 7u);
}

TEST(ManagerProtocol, TextMessageIsMalformed) {
  auto e = as_error(parse_client_message(frame(5, 1, Value::map({{"cancel", Value::map({})}})), false));
  EXPECT_EQ(e.code, ErrorCode::kMalformedFrame);
  EXPECT_EQ(e.request_id, 0u);
}

TEST(ManagerProtocol, ShortMessageIsMalformedWithoutARequestId) {
  for (std::size_t n = 0; n < kHeaderBytes; ++n) {
    Bytes b(n, 0x01);
    auto e = as_error(parse_client_message(b, true));
    EXPECT_EQ(e.code, ErrorCode::kMalformedFrame) << n;
    EXPECT_EQ(e.request_id, 0u);
  }
}

TEST(ManagerProtocol, RequestIdZeroIsBadRequestId) {
  auto e = as_error(parse_client_message(frame(5, 0, Value::map({{"cancel", Value::map({})}})), true));
  EXPECT_EQ(e.code, ErrorCode::kBadRequestId);
  EXPECT_EQ(e.request_id, 0u);
}

TEST(ManagerProtocol, UnknownAndManagerOnlyMethodsAreUnknownMethod) {
  for (std::uint16_t m : {8, 9, 0xFFFF, 0, 1, 2}) {
    auto e = as_error(parse_client_message(frame(m, 9, Value::map({})), true));
    EXPECT_EQ(e.code, ErrorCode::kUnknownMethod) << m;
    EXPECT_EQ(e.request_id, 9u) << "the id is echoed";
  }
}

// socket.rs read_frame looks the method up before dispatch looks at the request id.
TEST(ManagerProtocol, AnUnknownMethodIsReportedBeforeARequestIdOfZero) {
  auto unknown = as_error(parse_client_message(frame(99, 0, Value::map({})), true));
  EXPECT_EQ(unknown.code, ErrorCode::kUnknownMethod);
  auto manager_only = as_error(parse_client_message(frame(1, 0, Value::map({})), true));
  EXPECT_EQ(manager_only.code, ErrorCode::kBadRequestId) << "hello is a known method: the id is checked first";
}

TEST(ManagerProtocol, UndecodablePayloadIsMalformedWithTheIdEchoed) {
  Bytes b = frame(6, 77, Value());
  b.back() = 0xFF;  // not a calldata type tag
  auto e = as_error(parse_client_message(b, true));
  EXPECT_EQ(e.code, ErrorCode::kMalformedFrame);
  EXPECT_EQ(e.request_id, 77u);
  Bytes trailing = frame(6, 77, Value::map({{"ack", Value::map({{"genvm_id", 1}})}}));
  trailing.push_back(0);  // a complete value followed by junk
  EXPECT_EQ(as_error(parse_client_message(trailing, true)).code, ErrorCode::kMalformedFrame);
}

TEST(ManagerProtocol, PayloadMustBeTaggedWithTheMethodName) {
  Value inner = Value::map({{"genvm_id", 1}});
  for (const Value& p : {Value(inner), Value::map({{"cancel", inner}}),  // tag of another method
                         Value::map({{"ack", inner}, {"cancel", inner}}), Value::map({{"ack", 5}}),
                         Value("ack")}) {
    auto e = as_error(parse_client_message(frame(6, 3, p), true));
    EXPECT_EQ(e.code, ErrorCode::kMalformedFrame) << calldata::to_text(p);
  }
}

TEST(ManagerProtocol, ArgumentsAreRangeChecked) {
  EXPECT_FALSE(parse_genvm_id(Value::map({})).ok());
  EXPECT_FALSE(parse_genvm_id(Value::map({{"genvm_id", -1}})).ok());
  EXPECT_FALSE(parse_genvm_id(Value::map({{"genvm_id", "1"}})).ok());
  BigInt too_big = *BigInt::parse_decimal("18446744073709551616");  // 2^64
  EXPECT_FALSE(parse_genvm_id(Value::map({{"genvm_id", too_big}})).ok());
  EXPECT_EQ(*parse_genvm_id(Value::map({{"genvm_id", ~0ull}})), ~0ull);

  auto a = parse_attach(Value::map({{"boot_id", 5}, {"genvm_id", 6}}));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->boot_id, 5u);
  EXPECT_EQ(a->genvm_id, 6u);
  EXPECT_FALSE(parse_attach(Value::map({{"genvm_id", 6}})).ok());

  EXPECT_FALSE(parse_attach(Value::map({{"boot_id", 5}, {"genvm_id", 6}, {"x", 0}})).ok()) << "unknown field";

  auto g = parse_get_artifact(Value::map({{"genvm_id", 1}, {"field", "env"}, {"offset", 3}, {"max_len", 10}}));
  ASSERT_TRUE(g.ok()) << "the field name is the registry's to check, after the id";
  EXPECT_EQ(g->field, "env");
  EXPECT_EQ(g->offset, 3u);
  EXPECT_FALSE(parse_get_artifact(Value::map({{"genvm_id", 1}, {"field", "stdout"}, {"offset", 0}, {"max_len", 1ull << 32}})).ok());
  EXPECT_EQ(parse_get_artifact(Value::map({{"genvm_id", 1}, {"field", "stdout"}, {"max_len", 1}})).error().message,
            "value: missing field \"offset\"")
      << "socket.rs: offset has no default on the socket";
}

TEST(ManagerProtocol, ErrorAndHelloPayloadShapes) {
  Bytes b = encode_error({ErrorCode::kNotFinished, 12, "still running"});
  auto f = decode_frame(b);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->method, 0);
  EXPECT_EQ(f->request_id, 12u);
  EXPECT_EQ(f->payload, Value::map({{"code", 6}, {"message", "still running"}}));
  EXPECT_EQ(make_hello(99), Value::map({{"hello", Value::map({{"boot_id", 99}, {"protocol_major", 0}})}}));
}

TEST(ManagerDuration, AcceptsEveryUnitAndFractions) {
  struct Case { const char* text; long long ms; };
  for (auto c : {Case{"30s", 30'000}, Case{"10.5m", 630'000}, Case{"1h", 3'600'000},
                 Case{"250ms", 250}, Case{"0s", 0}, Case{"1.0009s", 1000}, Case{"0.5ms", 0},
                 Case{"2.25h", 8'100'000}, Case{"007s", 7000}, Case{".5s", 500},
                 Case{"0.9999999999999999999999999999999h", 3'599'999},
                 Case{"18446744073709551615ms", INT64_MAX}, Case{"5124095576030h", INT64_MAX}}) {
    auto d = parse_duration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.error().to_string();
    EXPECT_EQ(d->count(), c.ms) << c.text;
  }
}

TEST(ManagerDuration, RejectsBareNumbersAndEverythingElse) {
  // ManagerDuration (run.rs) refuses each of these; past u64 milliseconds is too large.
  for (const char* t : {"30", "", "s", ".s", "-1s", "+1s", " 1s", "1s ", "1 s", "1.s", "1..5s", "1.2.3s", "1sec",
                        "1d", "1S", "1e3ms", "1,5s", "18446744073709551616ms", "5124095576031h",
                        "0.999999999999999999999999999999999999999h",  // 39 digits: the scale overflows
                        "0.99999999999999999999999999999999999999h"}) {  // 38: fraction * unit overflows
    auto d = parse_duration(t);
    EXPECT_FALSE(d.ok()) << t;
    if (!d.ok()) {
      EXPECT_EQ(d.error().code, "malformed_frame");
    }
  }
}

TEST(ManagerDuration, FormatIsTheShortestExactForm) {
  EXPECT_EQ(format_duration(Millis(300'000)), "5m");
  EXPECT_EQ(format_duration(Millis(1500)), "1500ms");
  EXPECT_EQ(format_duration(Millis(7'200'000)), "2h");
  EXPECT_EQ(format_duration(Millis(0)), "0ms");
  for (long long ms : {1ll, 999ll, 1000ll, 61'000ll, 3'600'001ll}) {
    EXPECT_EQ(parse_duration(format_duration(Millis(ms)))->count(), ms);
  }
}

}  // namespace
}  // namespace genvm::manager
