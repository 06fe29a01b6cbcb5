// The executor's host client against the test host, over real sockets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "executor/host_client.h"
#include "test_host.h"

namespace genvm {
namespace {

using executor::HostClient;
using executor::HostConnection;
using host::HostMethod;
using host::StorageType;
using test_host::Fault;
using test_host::TestHost;

calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

executor::SlotId slot(std::uint8_t fill) {
  executor::SlotId s;
  s.fill(fill);
  return s;
}

class HostClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/genvm-hostclient-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    host_.stop();
    host2_.stop();
    ::rmdir(dir_.c_str());
  }
  std::unique_ptr<HostClient> connect(std::vector<std::uint8_t> routes = {},
                                      std::vector<calldata::Bytes> hello = {}) {
    auto uri = host_.listen_unix(dir_ + "/h0.sock");
    EXPECT_TRUE(uri.ok());
    auto c = HostClient::connect({*uri}, std::move(routes), hello);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    return std::move(*c);
  }

  std::string dir_;
  TestHost host_;
  TestHost host2_;
};

TEST_F(HostClientTest, HelloBytesArriveBeforeTheFirstMethod) {
  host_.set_hello_size(5);
  auto c = connect({}, {{'h', 'e', 'l', 'l', 'o'}});
  ASSERT_TRUE(c->consume_fuel(7).ok());
  ASSERT_TRUE(c->remaining_fuel_as_gen().ok());  // a round trip: everything before it arrived
  c.reset();
  host_.drain();
  ASSERT_EQ(host_.state().hellos.size(), 1u);
  EXPECT_EQ(host_.state().hellos[0], (calldata::Bytes{'h', 'e', 'l', 'l', 'o'}));
  EXPECT_EQ(host_.state().fuel_consumed, 7u);
  EXPECT_TRUE(host_.state().errors.empty());
}

TEST_F(HostClientTest, StorageReadReturnsStoredBytesAndZerosBeyond) {
  host_.state().storage[{addr(1).bytes, slot(2)}] = {10, 11, 12, 13};
  auto c = connect();
  auto r = c->storage_read(StorageType::kLatestFinal, addr(1), slot(2), 2, 5);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(*r, (calldata::Bytes{12, 13, 0, 0, 0}));
  auto empty = c->storage_read(StorageType::kDefault, addr(9), slot(9), 0, 3);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, (calldata::Bytes{0, 0, 0}));
  c.reset();
  host_.drain();
  ASSERT_EQ(host_.state().storage_reads.size(), 2u);
  const auto& rec = host_.state().storage_reads[0];
  EXPECT_EQ(rec.type, StorageType::kLatestFinal);
  EXPECT_EQ(rec.address, addr(1));
  EXPECT_EQ(rec.slot, slot(2));
  EXPECT_EQ(rec.index, 2u);
  EXPECT_EQ(rec.len, 5u);
}

TEST_F(HostClientTest, ForbiddenAnswerIsAnErrorValueAndTheConnectionStaysUsable) {
  host_.state().forbidden_reads.insert(addr(3).bytes);
  auto c = connect();
  auto r = c->storage_read(StorageType::kDefault, addr(3), slot(0), 0, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_forbidden");
  auto again = c->storage_read(StorageType::kDefault, addr(4), slot(0), 0, 4);
  EXPECT_TRUE(again.ok());
}

TEST_F(HostClientTest, EthCallAnswersAndReverts) {
  host_.state().eth_answers[addr(5).bytes] = {host::HostErrorCode::kOk, {1, 2, 3}};
  host_.state().eth_answers[addr(6).bytes] = {host::HostErrorCode::kEvmReverted, {}};
  auto c = connect();
  auto ok = c->eth_call(addr(5), calldata::Bytes{0xaa, 0xbb});
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(*ok, (calldata::Bytes{1, 2, 3}));
  auto rev = c->eth_call(addr(6), calldata::Bytes{});
  ASSERT_FALSE(rev.ok());
  EXPECT_EQ(rev.error().code, "host_evm_reverted");
  EXPECT_EQ(executor::host_error(rev.error()), executor::HostError::kEvmReverted);  // what callers branch on
  c.reset();
  host_.drain();
  ASSERT_EQ(host_.state().eth_calls.size(), 2u);
  EXPECT_EQ(host_.state().eth_calls[0], (calldata::Bytes{0xaa, 0xbb}));
}

TEST_F(HostClientTest, BalanceAndRemainingFuelAre32ByteLittleEndian) {
  host_.state().balances[addr(7).bytes] = test_host::u256_le(0x0102);
  host_.state().remaining_fuel_as_gen = test_host::u256_le(99);
  auto c = connect();
  auto b = c->get_balance(addr(7));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[0], 0x02);
  EXPECT_EQ((*b)[1], 0x01);
  EXPECT_EQ((*b)[2], 0x00);
  auto zero = c->get_balance(addr(8));
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(*zero, executor::U256Le{});
  auto f = c->remaining_fuel_as_gen();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)[0], 99);
}

TEST_F(HostClientTest, NoAnswerMethodsAreRecordedInOrder) {
  auto c = connect();
  ASSERT_TRUE(c->consume_fuel(1000).ok());
  ASSERT_TRUE(c->consume_fuel(234).ok());
  ASSERT_TRUE(c->notify_nondet_disagreement(3).ok());
  ASSERT_TRUE(c->notify_nondet_disagreement(0xfffffffe).ok());
  c.reset();  // EOF ends the host loop after everything written has been read
  host_.stop();
  EXPECT_EQ(host_.state().fuel_consumed, 1234u);
  EXPECT_EQ(host_.state().disagreements, (std::vector<std::uint32_t>{3, 0xfffffffe}));
  EXPECT_TRUE(host_.state().errors.empty());
}

TEST_F(HostClientTest, ConsumeResultWaitsForTheAck) {
  auto c = connect();
  calldata::Bytes result{0, 1, 2, 3, 4};
  ASSERT_TRUE(c->consume_result(result).ok());
  // The ack came back, so the host has the result now, before we close.
  auto n = host_.with_state([](test_host::State& s) { return s.results.size(); });
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(host_.with_state([](test_host::State& s) { return s.results[0]; }), result);
}

TEST_F(HostClientTest, ResolveAnswersNullOrOpaqueRoutingBytes) {
  // The routing payload is the host's encoded ExecutorSelector; the client carries it unread.
  calldata::Bytes routing = calldata::encode(calldata::Value::map({{"kind", "version"}, {"version", "v0.2.17"}}));
  host_.state().resolve_answers[addr(2).bytes] = routing;
  host_.state().resolve_answers[addr(3).bytes] = calldata::Bytes{};
  auto c = connect();
  auto none = c->resolve_callcontract_executor(addr(1), StorageType::kDefault, 0);
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_FALSE(none->has_value());
  auto some = c->resolve_callcontract_executor(addr(2), StorageType::kLatestNonFinal, 0);
  ASSERT_TRUE(some.ok()) << some.error().to_string();
  ASSERT_TRUE(some->has_value());
  EXPECT_EQ(**some, routing);
  // An empty payload is not null (calldata Option<Bytes> keeps them apart).
  auto empty = c->resolve_callcontract_executor(addr(3), StorageType::kDefault, 0);
  ASSERT_TRUE(empty.ok()) << empty.error().to_string();
  ASSERT_TRUE(empty->has_value());
  EXPECT_TRUE((*empty)->empty());
}

TEST_F(HostClientTest, ResolveRejectsAReplyThatIsNeitherNullNorBytes) {
  // A selector map sent bare (not as bytes) is not what the public decoder accepts either.
  host_.state().resolve_answers[addr(2).bytes] = calldata::Value::map({{"kind", "major"}, {"major", 1}});
  auto c = connect();
  auto r = c->resolve_callcontract_executor(addr(2), StorageType::kDefault, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_protocol");
}

TEST_F(HostClientTest, RunNestedSendsTheEnvelopeAndReadsTheReply) {
  host_.state().nested_handler = [](const calldata::Value& env) {
    return calldata::Value::map({{"result", calldata::Value::map({{"kind", "UserError"}, {"data", env}})},
                                 {"small_hash", calldata::Bytes(32, 7)},
                                 {"effect_free", false}});
  };
  auto c = connect();
  calldata::Value env = calldata::Value::map({{"x", 1}});
  auto r = c->run_nested(env);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->kind, ResultCode::kUserError);
  EXPECT_EQ(r->data, env);
  EXPECT_EQ(r->small_hash, calldata::Bytes(32, 7));
  EXPECT_FALSE(r->effect_free);
  c.reset();  // EOF ends the host loop
  host_.drain();
  EXPECT_EQ(host_.state().nested_envelopes, (std::vector<calldata::Value>{env}));
}

// Replies that are not a NestedRunReply, as the public derive decodes it (closed maps, kind a
// variant name), are protocol errors.
TEST_F(HostClientTest, RunNestedRefusesRepliesOfTheWrongShape) {
  using calldata::Value;
  Value ok_result = Value::map({{"kind", "Return"}, {"data", Value()}});
  std::vector<std::pair<std::string, Value>> bad = {
      {"not a map", Value(1)},
      {"missing effect_free", Value::map({{"result", ok_result}, {"small_hash", calldata::Bytes(32)}})},
      {"extra key", Value::map({{"result", ok_result}, {"small_hash", calldata::Bytes(32)}, {"effect_free", true},
                                {"x", 1}})},
      {"kind as a number", Value::map({{"result", Value::map({{"kind", 0}, {"data", Value()}})},
                                       {"small_hash", calldata::Bytes(32)}, {"effect_free", true}})},
      {"kind unknown", Value::map({{"result", Value::map({{"kind", "VMError"}, {"data", Value()}})},
                                   {"small_hash", calldata::Bytes(32)}, {"effect_free", true}})},
      {"result without data", Value::map({{"result", Value::map({{"kind", "Return"}})},
                                          {"small_hash", calldata::Bytes(32)}, {"effect_free", true}})},
      {"small_hash not bytes", Value::map({{"result", ok_result}, {"small_hash", "h"}, {"effect_free", true}})},
      {"effect_free not a bool", Value::map({{"result", ok_result}, {"small_hash", calldata::Bytes(32)},
                                             {"effect_free", 1}})},
  };
  for (const auto& [name, reply] : bad) {
    TestHost host;
    host.state().nested_handler = [reply = reply](const Value&) { return reply; };
    auto uri = host.listen_unix(dir_ + "/bad.sock");
    ASSERT_TRUE(uri.ok());
    auto c = HostClient::connect({*uri}, {}, {});
    ASSERT_TRUE(c.ok());
    auto r = (*c)->run_nested(Value());
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error().code, "host_protocol") << name;
    c->reset();
    host.stop();
  }
}

// A refused reply was read whole: the connection stays usable, so the run can still deliver
// its (internal error) result on it.
TEST_F(HostClientTest, ARefusedReplyLeavesTheConnectionUsable) {
  host_.state().nested_handler = [](const calldata::Value&) { return calldata::Value(1); };
  host_.state().resolve_answers[addr(2).bytes] = calldata::Value("not bytes");
  auto c = connect();
  ASSERT_FALSE(c->run_nested(calldata::Value()).ok());
  ASSERT_FALSE(c->resolve_callcontract_executor(addr(2), StorageType::kDefault, 0).ok());
  EXPECT_TRUE(c->consume_result(calldata::Bytes{3}).ok());
}

TEST_F(HostClientTest, RunNestedReadsAShortSmallHashForTheCallerToRefuse) {
  // The length is the caller's check (nested.h), so the reply itself still decodes.
  host_.state().nested_handler = [](const calldata::Value&) {
    return calldata::Value::map({{"result", calldata::Value::map({{"kind", "Return"}, {"data", 5}})},
                                 {"small_hash", calldata::Bytes(31, 1)},
                                 {"effect_free", true}});
  };
  auto c = connect();
  auto r = c->run_nested(calldata::Value());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->small_hash.size(), 31u);
  EXPECT_EQ(r->data, calldata::Value(5));
}

TEST_F(HostClientTest, MethodHostsRouteMethodsToTheirConnection) {
  auto uri0 = host_.listen_unix(dir_ + "/h0.sock");
  auto uri1 = host2_.listen_unix(dir_ + "/h1.sock");
  ASSERT_TRUE(uri0.ok() && uri1.ok());
  host2_.set_hello_size(2);
  // consume_fuel (1) and consume_result (6) go to host 1; everything else to host 0.
  std::vector<std::uint8_t> routes{0, 1, 0, 0, 0, 0, 1};
  auto c = HostClient::connect({*uri0, *uri1}, routes, {{}, {'h', '1'}});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  ASSERT_TRUE((*c)->consume_fuel(5).ok());
  ASSERT_TRUE((*c)->consume_result(calldata::Bytes{9}).ok());
  ASSERT_TRUE((*c)->notify_nondet_disagreement(1).ok());  // index 5 -> host 0
  ASSERT_TRUE((*c)->run_nested(calldata::Value()).ok());  // beyond the table -> host 0
  c->reset();
  host_.drain();
  host2_.drain();
  EXPECT_EQ(host_.state().fuel_consumed, 0u);
  EXPECT_EQ(host2_.state().fuel_consumed, 5u);
  EXPECT_TRUE(host_.state().results.empty());
  EXPECT_EQ(host2_.state().results.size(), 1u);
  EXPECT_EQ(host_.state().disagreements.size(), 1u);
  EXPECT_EQ(host_.state().nested_envelopes.size(), 1u);
  EXPECT_EQ(host2_.state().hellos, (std::vector<calldata::Bytes>{{'h', '1'}}));
}

TEST_F(HostClientTest, RouteToAMissingHostIsRejectedAtConnect) {
  auto uri = host_.listen_unix(dir_ + "/h0.sock");
  ASSERT_TRUE(uri.ok());
  auto c = HostClient::connect({*uri}, {0, 0, 0, 0, 0, 0, 1}, {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, "host_route");
}

TEST_F(HostClientTest, GarbageStatusByteIsAProtocolErrorThatPoisonsTheConnection) {
  host_.set_fault(HostMethod::kGetBalance, Fault::kGarbageStatus);
  auto c = connect();
  auto r = c->get_balance(addr(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_protocol");
  // Stream position is lost: later calls report the same failure without touching the socket.
  auto again = c->remaining_fuel_as_gen();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, "host_protocol");
}

TEST_F(HostClientTest, HangUpBeforeTheAnswerIsHostClosed) {
  host_.set_fault(HostMethod::kStorageRead, Fault::kHangUp);
  auto c = connect();
  auto r = c->storage_read(StorageType::kDefault, addr(1), slot(1), 0, 8);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_closed");
  EXPECT_EQ(executor::host_error(r.error()), executor::HostError::kClosed);
  // Writing to the closed peer gives an error value, not SIGPIPE.
  EXPECT_FALSE(c->consume_fuel(1).ok());
}

TEST_F(HostClientTest, HangUpInsteadOfTheResultAckIsHostClosed) {
  host_.set_fault(HostMethod::kConsumeResult, Fault::kHangUp);
  auto c = connect();
  auto s = c->consume_result(calldata::Bytes{1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "host_closed");
}

TEST_F(HostClientTest, WrongResultAckIsAProtocolError) {
  host_.set_fault(HostMethod::kConsumeResult, Fault::kGarbageStatus);
  auto c = connect();
  auto s = c->consume_result(calldata::Bytes{1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "host_protocol");
}

TEST_F(HostClientTest, OversizedSliceIsRefusedWithoutAllocating) {
  // The announced 4 GiB would fail the test under ASan's allocation limits if it were
  // allocated; the limit check turns it into an error value instead.
  host_.set_fault(HostMethod::kEthCall, Fault::kOversizedSlice);
  auto c = connect();
  auto r = c->eth_call(addr(1), calldata::Bytes{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_oversized");
}

TEST_F(HostClientTest, SliceLimitIsConfigurable) {
  host_.state().eth_answers[addr(5).bytes] = {host::HostErrorCode::kOk, calldata::Bytes(100, 1)};
  auto uri = host_.listen_unix(dir_ + "/h0.sock");
  ASSERT_TRUE(uri.ok());
  auto c = HostClient::connect({*uri}, {}, {}, executor::HostLimits{.max_slice = 99});
  ASSERT_TRUE(c.ok());
  auto r = (*c)->eth_call(addr(5), calldata::Bytes{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_oversized");
}

TEST_F(HostClientTest, TruncatedAnswerIsHostClosed) {
  host_.state().eth_answers[addr(5).bytes] = {host::HostErrorCode::kOk, calldata::Bytes(64, 1)};
  host_.set_fault(HostMethod::kEthCall, Fault::kTruncated);
  auto c = connect();
  auto r = c->eth_call(addr(5), calldata::Bytes{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_closed");
}

TEST_F(HostClientTest, NonCalldataRepliesAreProtocolErrors) {
  host_.set_fault(HostMethod::kResolveCallcontractExecutor, Fault::kGarbageCalldata);
  host_.set_fault(HostMethod::kRunNested, Fault::kGarbageCalldata);
  auto uri = host_.listen_unix(dir_ + "/h0.sock");
  ASSERT_TRUE(uri.ok());
  // Two connections to the same host so the first failure does not poison the second call.
  auto c = HostClient::connect({*uri, *uri}, {0, 0, 0, 0, 0, 0, 0, 0, 1}, {});
  ASSERT_TRUE(c.ok());
  auto r = (*c)->resolve_callcontract_executor(addr(1), StorageType::kDefault, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_protocol");
  auto n = (*c)->run_nested(calldata::Value());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, "host_protocol");
}

TEST_F(HostClientTest, FdTransportServesTheSameProtocol) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  host_.serve_fd(sv[0]);
  auto c = HostClient::connect({"fd://" + std::to_string(sv[1])}, {}, {});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  host_.with_state([](test_host::State& s) { s.balances[addr(1).bytes] = test_host::u256_le(5); return 0; });
  auto b = (*c)->get_balance(addr(1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[0], 5);
}

TEST_F(HostClientTest, TcpTransportServesTheSameProtocol) {
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(::listen(lfd, 1), 0);
  socklen_t len = sizeof(sa);
  ASSERT_EQ(::getsockname(lfd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  std::string uri = "tcp://127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  auto c = HostClient::connect({uri}, {}, {});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  int conn = ::accept(lfd, nullptr, nullptr);
  ASSERT_GE(conn, 0);
  ::close(lfd);
  host_.serve_fd(conn);
  ASSERT_TRUE((*c)->consume_result(calldata::Bytes{42}).ok());
  EXPECT_EQ(host_.with_state([](test_host::State& s) { return s.results.size(); }), 1u);
}

TEST_F(HostClientTest, UnknownSchemeAndDeadFdAreRejected) {
  auto bad = HostConnection::connect("http://x", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "host_uri");
  auto dead = HostConnection::connect("fd://987654", {});
  ASSERT_FALSE(dead.ok());
  EXPECT_EQ(dead.error().code, "host_uri");
  auto nosock = HostConnection::connect("unix://" + dir_ + "/absent.sock", {});
  ASSERT_FALSE(nosock.ok());
  EXPECT_EQ(nosock.error().code, "host_io");
}

}  // namespace
}  // namespace genvm
