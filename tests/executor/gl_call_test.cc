// gl_call messages through the real binary (spec 03-wasi_genlayer_sdk/02-gl_call.rst): Yield,
// GetTimestamp, Trace (Message and RuntimeMicroSec), and CallContract delegated to another
// executor through the host's run_nested (docs/adr/015, impl-spec host-loop.rst), plus the
// executor side of being such a nested run (ExecutionData.nested / remaining_recursion).
//
// Contract tests/executor/contracts/gl_probe.c: "raw" sends a request the test builds and
// returns {ret, fd, data}; "raw_nondet" does the same from a RunNondet block's leader; "call"
// is a CallContract of {"": "get"} (which returns 7) that returns the [code][data] result.
#include <fcntl.h>

#include "executor/result.h"
#include "executor/vm.h"
#include "executor_fixture.h"
#include "common/sanitizers.h"

namespace genvm::exec_test {
namespace {

using executor::Digest32;

struct Probe {
  std::int64_t ret = -1;
  std::uint64_t fd = 0;
  Value data;  // decoded calldata of the descriptor's bytes, or null
  bool has_data = false;
};

class GlCallTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    if (::access((contracts_ + "gl_probe.wasm").c_str(), R_OK) != 0) GTEST_SKIP() << "needs gl_probe.wasm";
    code_ = read_file(contracts_ + "gl_probe.wasm");
    deploy_code(code_, kCaller);
    deploy_code(code_, kCallee);
  }

  host::ExecutionData probe_data(const char* method, const Value& request) {
    return data(kCaller, addr(0xaa), call(method, {Value(calldata::encode(request))}), false, std::nullopt);
  }
  static Probe parse_probe(const Value& v) {
    Probe p;
    if (!v.is_map()) return p;
    p.ret = *v.find("ret")->as_int().to_int64();
    p.fd = *v.find("fd")->as_int().to_uint64();
    if (v.find("data")->is_bytes()) {
      auto d = calldata::decode(v.find("data")->as_bytes());
      p.has_data = d.ok();
      if (d) p.data = *d;
    }
    return p;
  }
  // gl_call(request) in the deterministic entry VM.
  Probe det(const Value& request, std::vector<std::string> extra = {}) {
    auto r = run(probe_data("raw", request), "wscn", std::move(extra), false);
    EXPECT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
    return parse_probe(*r.report.find("data"));
  }
  // gl_call(request) in a non-deterministic block (leader run).
  Probe nondet(const Value& request, std::vector<std::string> extra = {}) {
    auto r = run(probe_data("raw_nondet", request), "wscn", std::move(extra), false);
    EXPECT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
    const calldata::Bytes& entry = r.report.find("data")->as_bytes();
    EXPECT_FALSE(entry.empty());
    if (entry.empty() || entry[0] != 0) return Probe{};
    auto v = calldata::decode(std::span<const std::uint8_t>(entry.data() + 1, entry.size() - 1));
    return v ? parse_probe(*v) : Probe{};
  }
  // CallContract from kCaller to kCallee in view `state`.
  RunResult call_callee(std::uint32_t state, const std::string& permissions = "wscn") {
    return run(data(kCaller, addr(0xaa), call("call", {Value(kCallee), Value(state)}), false, std::nullopt),
               permissions, {}, false);
  }
  static calldata::Bytes result_buffer(std::uint8_t code, const calldata::Bytes& data) {
    calldata::Bytes e(1 + data.size());
    e[0] = code;
    std::copy(data.begin(), data.end(), e.begin() + 1);
    return e;
  }
  static Value returned(const RunResult& r) {
    return r.report.is_map() && *r.report.find("kind") == Value("Return") ? *r.report.find("data") : Value("<none>");
  }
  static Value reply(const char* kind, Value data, calldata::Bytes small_hash, bool effect_free = true) {
    return Value::map({{"result", Value::map({{"kind", kind}, {"data", std::move(data)}})},
                       {"small_hash", std::move(small_hash)},
                       {"effect_free", effect_free}});
  }
  // The small hash of a sub-VM that returned `v` with no sub-VMs of its own (a Return has no
  // memory fingerprint): what an in-process CallContract of kCallee "get" folds.
  static calldata::Bytes return_small_hash(const Value& v) {
    Digest32 h = executor::small_hash(ResultCode::kReturn, v, executor::SubVmHashAccumulator().finalize(), {});
    return calldata::Bytes(h.begin(), h.end());
  }
  void route_callee(const calldata::Bytes& routing) {
    host_.with_state([&](test_host::State& s) {
      s.resolve_answers[kCallee.bytes] = routing;
      return 0;
    });
  }
  void answer_nested(Value r) {
    host_.with_state([&](test_host::State& s) {
      s.nested_handler = [r](const Value&) { return r; };
      return 0;
    });
  }
  std::vector<Value> envelopes() {
    return host_.with_state([](test_host::State& s) { return s.nested_envelopes; });
  }

  const calldata::Address kCaller = addr(0x61);
  const calldata::Address kCallee = addr(0x62);
  const calldata::Bytes kRouting =
      calldata::encode(Value::map({{"kind", "version"}, {"version", "v0.2.17"}}));
  calldata::Bytes code_;
};

constexpr std::uint64_t kNoFd = 0xffffffffu;

// ---- Yield, Trace, GetTimestamp ----

TEST_F(GlCallTest, YieldSucceedsWithNoValue) {
  Probe p = det(Value::map({{"Yield", Value()}}));
  EXPECT_EQ(p.ret, 0);
  EXPECT_EQ(p.fd, kNoFd);  // "no file", as the public executor writes it
  EXPECT_FALSE(p.has_data);
  Probe n = nondet(Value::map({{"Yield", Value()}}));
  EXPECT_EQ(n.ret, 0);
  EXPECT_EQ(n.fd, kNoFd);
}

// Every gl_call that answers no data writes the "no file" descriptor, the emissions too (the
// slot is guest memory, so it is inside the error fingerprint): fails if one leaves it alone.
TEST_F(GlCallTest, EmissionsWriteTheNoFileDescriptor) {
  Probe p = det(Value::map({{"EmitEvent", Value::map({{"topics", Value::Array{}}, {"blob", Value::map({{"k", 1}})}})}}));
  EXPECT_EQ(p.ret, 0);
  EXPECT_EQ(p.fd, kNoFd);
}

TEST_F(GlCallTest, MalformedMessagesAreInval) {
  for (const Value& bad : {Value::map({{"Yield", 1}}), Value::map({{"GetTimestamp", "now"}}),
                           Value::map({{"Trace", "Elapsed"}}), Value::map({{"Trace", 5}}),
                           Value::map({{"Trace", Value::map({{"Message", 5}})}}),
                           Value::map({{"Trace", Value::map({{"Message", "a"}, {"x", 1}})}})}) {
    SCOPED_TRACE(calldata::to_text(bad));
    EXPECT_EQ(det(bad).ret, 2);  // error_inval
  }
}

TEST_F(GlCallTest, TraceMessageSucceedsWithNoValueAtEveryLevel) {
  for (const char* level : {"disabled", "safe-unbounded"}) {
    SCOPED_TRACE(level);
    Probe p = det(Value::map({{"Trace", Value::map({{"Message", "hello"}})}}), {"--debug-mode", level});
    EXPECT_EQ(p.ret, 0);
    EXPECT_EQ(p.fd, kNoFd);
  }
}

// Fails if deterministic code can see elapsed time below unsafe-tracing, or if unsafe-tracing
// does not expose it (02-gl_call.rst, seed 000 "Debug modes").
TEST_F(GlCallTest, RuntimeMicroSecIsZeroInDeterministicModeUnlessUnsafeTracing) {
  const Value req = Value::map({{"Trace", "RuntimeMicroSec"}});
  for (const char* level : {"disabled", "safe", "safe-unbounded", "unsafe"}) {
    SCOPED_TRACE(level);
    Probe p = det(req, {"--debug-mode", level});
    ASSERT_EQ(p.ret, 0);
    ASSERT_TRUE(p.has_data);
    EXPECT_EQ(p.data, Value(0));
  }
  Probe t = det(req, {"--debug-mode", "unsafe-tracing"});
  ASSERT_EQ(t.ret, 0);
  ASSERT_TRUE(t.has_data && t.data.is_int());
  EXPECT_GT(*t.data.as_int().to_int64(), 0);
}

// Non-deterministic blocks see real elapsed time at every level.
TEST_F(GlCallTest, RuntimeMicroSecIsRealTimeInNonDeterministicModeAtEveryLevel) {
  for (const char* level : {"disabled", "safe", "safe-unbounded", "unsafe", "unsafe-tracing"}) {
    SCOPED_TRACE(level);
    Probe p = nondet(Value::map({{"Trace", "RuntimeMicroSec"}}), {"--debug-mode", level});
    ASSERT_EQ(p.ret, 0);
    ASSERT_TRUE(p.has_data && p.data.is_int());
    EXPECT_GT(*p.data.as_int().to_int64(), 0);
    EXPECT_LT(*p.data.as_int().to_int64(), 60'000'000);  // since the block's start, not the epoch
  }
}

TEST_F(GlCallTest, GetTimestampIsTheMessageDatetimeInDeterministicMode) {
  const Value req = Value::map({{"GetTimestamp", Value()}});
  struct Case {
    const char* datetime;
    std::int64_t seconds;  // Python: int(datetime(...).timestamp()) (floor for the .5 before 1970)
  };
  for (const Case& c : {Case{"2024-11-26T06:42:42.424242Z", 1732603362}, Case{"2030-01-01T00:00:00Z", 1893456000},
                        Case{"1969-12-31T23:59:59.5Z", -1}}) {
    SCOPED_TRACE(c.datetime);
    auto d = probe_data("raw", req);
    d.message.datetime = c.datetime;
    auto r = run(d, "wscn", {}, false);
    ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
    Probe p = parse_probe(*r.report.find("data"));
    ASSERT_EQ(p.ret, 0);
    EXPECT_EQ(p.data, Value(c.seconds));
  }
}

TEST_F(GlCallTest, GetTimestampIsTheWallClockInNonDeterministicMode) {
  // The message datetime is 2024; a block reads the real clock.
  std::int64_t before = static_cast<std::int64_t>(::time(nullptr));
  Probe p = nondet(Value::map({{"GetTimestamp", Value()}}));
  std::int64_t after = static_cast<std::int64_t>(::time(nullptr));
  ASSERT_EQ(p.ret, 0);
  ASSERT_TRUE(p.data.is_int());
  EXPECT_GE(*p.data.as_int().to_int64(), before);
  EXPECT_LE(*p.data.as_int().to_int64(), after);
}

// ---- CallContract through run_nested ----

// Fails if the route is visible: the same callee outcome, in-process or delegated with the
// callee's small hash, gives the caller the same result and the same hashes.
TEST_F(GlCallTest, ADelegatedCallIsIndistinguishableFromAnInProcessOne) {
  auto local = call_callee(0);
  ASSERT_EQ(local.exit_code, 0) << local.stderr_text;
  ASSERT_EQ(returned(local), Value(result_buffer(0, calldata::encode(Value(7)))));
  EXPECT_TRUE(envelopes().empty());  // null resolution, major 0: in-process

  route_callee(kRouting);
  answer_nested(reply("Return", Value(7), return_small_hash(Value(7))));
  auto routed = call_callee(0);
  ASSERT_EQ(routed.exit_code, 0) << routed.stderr_text;
  EXPECT_EQ(returned(routed), returned(local));
  EXPECT_EQ(*routed.report.find("execution_hash"), *local.report.find("execution_hash"));
  EXPECT_EQ(*routed.report.find("small_hash"), *local.report.find("small_hash"));
  EXPECT_EQ(envelopes().size(), 1u);

  // A different small hash from the callee changes the caller's hashes: it is folded.
  answer_nested(reply("Return", Value(7), calldata::Bytes(32, 0x5a)));
  auto other = call_callee(0);
  EXPECT_EQ(returned(other), returned(local));
  EXPECT_NE(*other.report.find("execution_hash"), *local.report.find("execution_hash"));
}

// The envelope, field by field (NestedRunEnvelope in nested.rs; ADR-015's table).
TEST_F(GlCallTest, TheEnvelopeCarriesTheDerivedCallee) {
  route_callee(kRouting);
  host_.with_state([](test_host::State& s) {
    s.remaining_fuel_as_gen = test_host::u256_le(123456789);
    return 0;
  });
  answer_nested(reply("Return", Value(7), calldata::Bytes(32, 1)));
  auto r = call_callee(1);  // latest_final
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  auto envs = envelopes();
  ASSERT_EQ(envs.size(), 1u);
  const Value& e = envs[0];
  ASSERT_TRUE(e.is_map());
  EXPECT_EQ(e.as_map().size(), 10u) << calldata::to_text(e);
  EXPECT_EQ(*e.find("routing_payload"), Value(kRouting));  // carried unread
  EXPECT_EQ(*e.find("calldata"), Value(calldata::encode(Value::map({{"", "get"}}))));
  const Value& m = *e.find("message");
  ASSERT_TRUE(m.is_map());
  EXPECT_EQ(m.as_map().size(), 8u) << calldata::to_text(m);
  EXPECT_EQ(*m.find("contract_address"), Value(kCallee));
  EXPECT_EQ(*m.find("sender_address"), Value(addr(0xaa)));
  EXPECT_EQ(*m.find("origin_address"), Value(addr(0xaa)));
  EXPECT_EQ(*m.find("signer_address"), Value(addr(0xaa)));
  EXPECT_EQ(*m.find("chain_id"), Value(61999));
  EXPECT_EQ(*m.find("value"), Value(0));
  EXPECT_EQ(*m.find("is_init"), Value(false));
  EXPECT_EQ(*m.find("datetime"), Value(std::string(host::kDefaultDatetime)));
  EXPECT_EQ(*e.find("stack"), Value(Value::Array{Value(kCaller)}));
  // deterministic | read_storage | call_others: write, send, nondet and balance fees never cross.
  EXPECT_EQ(*e.find("permissions"), Value(1 + 2 + 16));
  EXPECT_EQ(*e.find("state_mode"), Value("LatestFinal"));
  EXPECT_EQ(*e.find("topmost_runner_id"), Value("contract"));
  EXPECT_EQ(*e.find("remaining_recursion"), Value(511));  // the callee's depth is 1
  EXPECT_EQ(*e.find("remaining_det_fuel"), Value(123456789));
  const auto mem = e.find("memory_limit")->as_int().to_uint64();
  ASSERT_TRUE(mem.has_value());
  EXPECT_GT(*mem, 0u);
  EXPECT_LT(*mem, 4294967295u);  // what the caller has left, not a fresh budget

  // View 2 as asked; view 0 keeps the caller's (default at the top).
  call_callee(2);
  envs = envelopes();
  ASSERT_EQ(envs.size(), 2u);
  EXPECT_EQ(*envs[1].find("state_mode"), Value("LatestNonFinal"));
  call_callee(0);
  envs = envelopes();
  ASSERT_EQ(envs.size(), 3u);
  EXPECT_EQ(*envs[2].find("state_mode"), Value("Default"));
}

TEST_F(GlCallTest, TheHostIsAskedWithTheCalleesMajorAndAnUnservedMajorIsDelegated) {
  // Our deployment wrote major 0. A root claiming major 1 is not ours to run or reject: with a
  // null resolution it goes to the manager with a major selector (ADR-015).
  host_.with_state([&](test_host::State& s) {
    calldata::Bytes& root = s.storage[{kCallee.bytes, test_host::Slot{}}];
    if (root.empty()) root.resize(1);
    root[0] = 1;
    return 0;
  });
  answer_nested(reply("VmError", Value("invalid_contract major_mismatch"), calldata::Bytes(32, 2)));
  auto r = call_callee(0);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  auto envs = envelopes();
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(*envs[0].find("routing_payload"), Value(calldata::encode(Value::map({{"kind", "major"}, {"major", 1}}))));
  EXPECT_EQ(returned(r), Value(result_buffer(2, calldata::Bytes{'i', 'n', 'v', 'a', 'l', 'i', 'd', '_', 'c', 'o',
                                                                 'n', 't', 'r', 'a', 'c', 't', ' ', 'm', 'a', 'j',
                                                                 'o', 'r', '_', 'm', 'i', 's', 'm', 'a', 't', 'c',
                                                                 'h'})));
}

// What each reply kind becomes for the caller.
TEST_F(GlCallTest, ReplyKindsReachTheCallerAsSubVmResults) {
  route_callee(kRouting);
  answer_nested(reply("UserError", Value("no"), calldata::Bytes(32, 3)));
  EXPECT_EQ(returned(call_callee(0)), Value(result_buffer(1, calldata::encode(Value("no")))));
  answer_nested(reply("VmError", Value("exit_code 3"), calldata::Bytes(32, 3)));
  EXPECT_EQ(returned(call_callee(0)), Value(result_buffer(2, calldata::Bytes{'e', 'x', 'i', 't', '_', 'c', 'o', 'd',
                                                                              'e', ' ', '3'})));
  // Fatality crosses the boundary: the caller ends with it (published as a VM error).
  answer_nested(reply("FatalVmError", Value("out_of memory"), calldata::Bytes(32, 3)));
  auto fatal = call_callee(0);
  ASSERT_EQ(fatal.exit_code, 0) << fatal.stderr_text;
  EXPECT_EQ(*fatal.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(fatal), "out_of memory");
}

// Replies a caller must refuse end its run with an internal error (the public executor's
// nested_run_ok; ADR-015 "Failure taxonomy": a callee reporting effects is internal).
TEST_F(GlCallTest, RefusedRepliesAreInternalErrors) {
  route_callee(kRouting);
  struct Case {
    const char* name;
    Value reply;
    const char* why;  // in the internal error's text
  };
  std::vector<Case> cases = {
      {"effects", reply("Return", Value(7), calldata::Bytes(32, 4), false), "contains effects"},
      {"short small hash", reply("Return", Value(7), calldata::Bytes(31, 4)), "small hash has length 31"},
      {"long small hash", reply("Return", Value(7), calldata::Bytes(33, 4)), "small hash has length 33"},
      {"VM error not a string", reply("VmError", Value(3), calldata::Bytes(32, 4)), "VM error is not a string"},
      {"internal error", reply("InternalError", Value("x"), calldata::Bytes(32, 4)), "internal error"},
      {"kind as a number", Value::map({{"result", Value::map({{"kind", 0}, {"data", Value()}})},
                                       {"small_hash", calldata::Bytes(32)}, {"effect_free", true}}),
       "run_nested"},
      {"not a reply", Value::array({1, 2}), "run_nested"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    answer_nested(c.reply);
    auto r = call_callee(0);
    ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
    EXPECT_EQ(*r.report.find("kind"), Value("InternalError"));
    const Value* text = r.report.find("data");
    ASSERT_TRUE(text->is_string());
    EXPECT_NE(text->as_string().find(c.why), std::string::npos) << text->as_string();
    EXPECT_TRUE(r.report.find("storage_changes")->as_array().empty());
  }
}

TEST_F(GlCallTest, AResolveReplyThatIsNotNullOrBytesIsAnInternalError) {
  host_.with_state([&](test_host::State& s) {
    s.resolve_answers[kCallee.bytes] = Value::map({{"kind", "major"}, {"major", 0}});
    return 0;
  });
  auto r = call_callee(0);
  ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("InternalError"));
  EXPECT_TRUE(envelopes().empty());
}

// ---- Requests of many tiny items ----

// A request is charged what it takes decoded in host memory, not its length: 4M nulls are 4 MB
// of request and 224 MB of decoded values (charged its length, a 50 MB request of nulls took
// 3.7 GB of RSS while charged 234 MB, and a 6 GiB address-space limit aborted the run with no
// result). With the
// charge, host memory stays within the documented 1.25x of the budget's peak plus a constant,
// and a budget too small for the decoded request is the sub-VM's deterministic OOM. Fails when
// the request is charged its length: the peak is then far below the decoded size (and RSS
// above 1.25x of it), and the small budget still "fits" the request.
class ManyItemsTest : public GlCallTest {
 protected:
  // One run of gl_call({"Trace": [nulls...]}) (not a valid Trace: error_inval once decoded),
  // with the run's budget peak (ram_peak) read back from --log-fd.
  RunResult run_nulls(std::optional<std::uint32_t> memory_limit, std::uint64_t* ram_peak) {
    auto d = probe_data("raw", Value::map({{"Trace", Value(Value::Array(kNulls))}}));
    if (memory_limit) {
      host::NestedExecutionData n;
      n.memory_limit = *memory_limit;
      n.stack = {addr(0x70)};
      n.permissions = Value(1 | 2 | 16);
      n.state_mode = host::StorageType::kLatestNonFinal;
      n.topmost_runner_id = Value("contract");
      n.remaining_det_fuel = BigInt(99);
      d.nested = std::move(n);
      d.remaining_recursion = 6;
    }
    std::string path = dir_ + "/log.jsonl";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);  // inherited by genvm
    EXPECT_GE(fd, 0);
    RunResult r = run(d, "wscn", {"--log-fd", std::to_string(fd)}, false);
    ::close(fd);
    auto text = read_file(path);
    std::string log(text.begin(), text.end());
    auto at = log.find("\"ram_peak\":");
    *ram_peak = at == std::string::npos ? 0 : std::stoull(log.substr(at + 11));
    return r;
  }
  static constexpr std::size_t kNulls = 4000000;
  static constexpr std::uint64_t kDecodedNulls = kNulls * sizeof(Value);
};

TEST_F(ManyItemsTest, ARequestIsChargedItsDecodedSizeAndHostMemoryStaysWithinTheBound) {
  std::uint64_t peak = 0;
  RunResult r = run_nulls(std::nullopt, &peak);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(parse_probe(*r.report.find("data")).ret, 2);  // decoded, then error_inval
  EXPECT_GE(peak, executor::kVmSpawnCost + kDecodedNulls) << "the decoded request is charged";
#if !GENVM_ADDRESS_SANITIZER
  EXPECT_LT(double(r.peak_rss_bytes), 1.25 * double(peak) + double(64 << 20))
      << "peak RSS " << r.peak_rss_bytes << ", budget peak " << peak;
#endif
  // The same run with half the decoded request's room taken away: the decode stops at the
  // budget, the sub-VM's VM error (deterministic: the budget is).
  const std::uint64_t small = peak - kDecodedNulls / 2;
  ASSERT_LT(small, 0xffffffffu);
  std::uint64_t small_peak = 0;
  RunResult oom = run_nulls(static_cast<std::uint32_t>(small), &small_peak);
  ASSERT_EQ(oom.exit_code, 0) << oom.stderr_text;
  ASSERT_TRUE(oom.report.is_map()) << oom.stderr_text;
  EXPECT_EQ(*oom.report.find("kind"), Value("VmError")) << calldata::to_text(*oom.report.find("data"));
  EXPECT_EQ(public_code(oom), "out_of memory");
  EXPECT_LE(small_peak, small);
}

// ---- Being a nested run ----

class NestedRunTest : public GlCallTest {
 protected:
  host::ExecutionData nested_call(std::uint32_t bits, std::optional<std::uint32_t> recursion,
                                  host::StorageType state = host::StorageType::kLatestFinal) {
    auto d = data(kCaller, addr(0xaa), call("call", {Value(kCallee), Value(0)}), false, std::nullopt);
    host::NestedExecutionData n;
    n.memory_limit = 4294967295u;
    n.stack = {addr(0x70)};
    n.permissions = Value(bits);
    n.state_mode = state;
    n.topmost_runner_id = Value("contract");
    n.remaining_det_fuel = BigInt(99);
    d.nested = std::move(n);
    d.remaining_recursion = recursion;
    return d;
  }
};

// Fails if the command line's permissions are used instead of the imported bits.
TEST_F(NestedRunTest, ImportedPermissionBitsReplaceTheCommandLine) {
  auto denied = run(nested_call(1 | 2, 6), "wscn", {}, false);
  ASSERT_EQ(denied.exit_code, 0) << denied.stderr_text;
  EXPECT_EQ(*denied.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*denied.report.find("data"), Value("refused 6"));  // FORBIDDEN: no call_others
  auto allowed = run(nested_call(1 | 2 | 16, 6), "", {}, false);
  EXPECT_EQ(returned(allowed), Value(result_buffer(0, calldata::encode(Value(7)))));
}

// The imported view is the view of every read the run makes, and a CallContract's default.
TEST_F(NestedRunTest, TheImportedStateModeIsTheRunsView) {
  host_.with_state([](test_host::State& s) {
    s.storage_reads.clear();
    return 0;
  });
  auto r = run(nested_call(1 | 2 | 16, 6), "", {}, false);
  ASSERT_EQ(returned(r), Value(result_buffer(0, calldata::encode(Value(7)))));
  auto reads = host_.with_state([](test_host::State& s) { return s.storage_reads; });
  ASSERT_FALSE(reads.empty());
  for (const auto& rd : reads) EXPECT_EQ(rd.type, host::StorageType::kLatestFinal);
}

// remaining_recursion is the chain's budget: the top VM starts that far from the limit.
TEST_F(NestedRunTest, TheImportedRecursionBudgetBoundsTheChain) {
  route_callee(kRouting);
  answer_nested(reply("Return", Value(7), calldata::Bytes(32, 1)));
  auto two = run(nested_call(1 | 2 | 16, 2), "", {}, false);
  EXPECT_EQ(returned(two), Value(result_buffer(0, calldata::encode(Value(7)))));
  auto envs = envelopes();
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(*envs[0].find("remaining_recursion"), Value(1));
  // A budget of one leaves no room for the callee; zero none for the run itself.
  for (std::uint32_t budget : {1u, 0u}) {
    SCOPED_TRACE(budget);
    auto r = run(nested_call(1 | 2 | 16, budget), "", {}, false);
    ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
    EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
    EXPECT_EQ(public_code(r), "out_of vm_recursion");
  }
  EXPECT_EQ(envelopes().size(), 1u);
  // A budget above this executor's own limit is clamped to it (512: the callee gets 511).
  run(nested_call(1 | 2 | 16, 100000), "", {}, false);
  envs = envelopes();
  ASSERT_EQ(envs.size(), 2u);
  EXPECT_EQ(*envs[1].find("remaining_recursion"), Value(511));
}

TEST_F(NestedRunTest, TheImportedDetFuelCapsWhatADelegatedCallHandsOn) {
  route_callee(kRouting);
  answer_nested(reply("Return", Value(7), calldata::Bytes(32, 1)));
  host_.with_state([](test_host::State& s) {
    s.remaining_fuel_as_gen = test_host::u256_le(12345);
    return 0;
  });
  run(nested_call(1 | 2 | 16, 6), "", {}, false);
  host_.with_state([](test_host::State& s) {
    s.remaining_fuel_as_gen = test_host::u256_le(50);
    return 0;
  });
  run(nested_call(1 | 2 | 16, 6), "", {}, false);
  auto envs = envelopes();
  ASSERT_EQ(envs.size(), 2u);
  EXPECT_EQ(*envs[0].find("remaining_det_fuel"), Value(99));  // the import is lower
  EXPECT_EQ(*envs[1].find("remaining_det_fuel"), Value(50));  // the host's figure is lower
}

TEST_F(NestedRunTest, TheImportedMemoryLimitIsTheRamBudget) {
  auto d = nested_call(1 | 2 | 16, 6);
  d.nested->memory_limit = 1000;  // less than the spec's vm_spawn_cost: the VM cannot start
  auto r = run(d, "", {}, false);
  ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "out_of memory");
  d.nested->memory_limit = executor::kVmSpawnCost + 1000;  // it starts; less than one wasm page remains
  r = run(d, "", {}, false);
  ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
  EXPECT_EQ(public_code(r), "out_of memory wasm_memory");
}

TEST_F(NestedRunTest, PermissionsThatAreNotAU32AreBadInput) {
  auto d = nested_call(0, 6);
  d.nested->permissions = Value("all");
  auto r = run(d, "", {}, false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.report.is_null());
  EXPECT_NE(r.stderr_text.find("nested.permissions"), std::string::npos) << r.stderr_text;
}

}  // namespace
}  // namespace genvm::exec_test
