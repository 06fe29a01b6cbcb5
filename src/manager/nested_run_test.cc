// run_nested on host 1: what the manager derives for the child (run.rs start_nested) and the
// reply it derives from the child's consume_result (nested_reply_from_consumed_result).
#include "manager/nested_run.h"

#include <gtest/gtest.h>

#include "common/host/execution_data.h"
#include "manager/executor_link.h"
#include "manager/test_util.h"

namespace genvm::manager {
namespace {

using calldata::Bytes;
using calldata::Value;
namespace h = genvm::host;

Value zero_buckets() {
  return Value::map({{"storage", 0}, {"message_receipt", 0}, {"nondet_output", 0}, {"message_fee", 0}, {"event", 0}});
}

// An effect-free ReportedResult (domain.rs) of `kind`.
Value reported(const char* kind, Value data = Value("x"), std::size_t hash_len = 32) {
  return Value::map({{"execution_hash", Bytes(hash_len, 1)},
                     {"small_hash", Bytes(hash_len, 2)},
                     {"kind", kind},
                     {"data", std::move(data)},
                     {"backtrace", Value()},
                     {"wasm_store_hashes", Value(Value::Map{})},
                     {"storage_changes", Value::Array{}},
                     {"emissions", Value::Array{}},
                     {"nondet_disagreement", Value()},
                     {"nondet_results", Value::Array{}},
                     {"data_fees_remaining", Value::array({10})},
                     {"data_fees_consumed", zero_buckets()},
                     {"llm_consumption", 0}});
}

Bytes framed(std::uint8_t code, const Value& map) {
  Bytes out{code};
  calldata::encode_to(map, out);
  return out;
}

h::Address addr(std::uint8_t fill) {
  h::Address a;
  a.bytes.fill(fill);
  return a;
}

h::NestedRunEnvelope envelope() {
  h::NestedRunEnvelope e;
  e.routing_payload = calldata::encode(Value::map({{"kind", "version"}, {"version", "v0.3.0-cpp"}}));
  e.calldata = calldata::encode(Value::map({{"", "get"}}));
  e.message.contract_address = addr(2);
  e.message.sender_address = addr(0xaa);
  e.message.origin_address = addr(0xaa);
  e.message.signer_address = addr(0xaa);
  e.message.chain_id = 61999;
  e.message.datetime = "2025-06-07T08:09:10Z";
  e.stack = {addr(1)};
  e.permissions = h::kNestedDeterministic | h::kNestedReadStorage | h::kNestedCallOthers;
  e.state_mode = h::StorageType::kLatestNonFinal;
  e.remaining_recursion = 9;
  e.remaining_det_fuel = 5000;
  e.memory_limit = 1u << 24;
  return e;
}

Bytes encoded(const h::NestedRunEnvelope& e) { return calldata::encode(h::nested_envelope_to_value(e)); }

RunRequest caller(Value::Map extra = {}) {
  extra.emplace("host", "unix:///run/host0.sock");
  extra.emplace("host_hello_data", Value::array({Bytes{7, 7}}));
  extra.emplace("gas_data", Value::map({{"k", "v"}}));
  extra.emplace("host_data", "{\"node\":1}");
  extra.emplace("bucket_totals", Value::array({100, 200}));
  return *parse_run_request(testing::run_body(false, std::move(extra)));
}

TEST(ManagerNestedRun, TheChildIsDerivedAsStartNestedDerivesIt) {
  auto child = plan_nested_run(caller({{"hook_cross_contract_calls", true}}), encoded(envelope()), 0);
  ASSERT_TRUE(child) << child.error().to_string();
  const RunRequest& r = child->request;
  EXPECT_EQ(r.selector.kind, ExecutorSelector::Kind::kVersion);
  EXPECT_EQ(r.selector.version, "v0.3.0-cpp");
  EXPECT_TRUE(r.is_sync);
  EXPECT_EQ(r.debug_mode, "disabled");
  EXPECT_EQ(r.permissions, "c") << "CALL_OTHERS in the envelope";
  EXPECT_EQ(r.host, "unix:///run/host0.sock") << "host 0 re-dialed";
  EXPECT_TRUE(r.extra_args.empty());
  EXPECT_TRUE(r.hook_cross_contract_calls) << "inherited, so the child routes as its caller does";
  EXPECT_EQ(format_rfc3339_utc(r.timestamp), "2025-06-07T08:09:10Z") << "lines resolve at the message's datetime";

  // What the child's stdin says, read back with the executor's own strict reader.
  auto d = h::parse_execution_data(child->execution_data);
  ASSERT_TRUE(d) << d.error().to_string();
  EXPECT_EQ(d->calldata, envelope().calldata);
  EXPECT_EQ(d->message.contract_address, addr(2));
  EXPECT_EQ(d->host_data, "{\"node\":1}");
  EXPECT_FALSE(d->code);
  EXPECT_FALSE(d->leader_nondet_results);
  EXPECT_EQ(d->host_hello_data, (std::vector<Bytes>{Bytes{7, 7}, Bytes{}})) << "entry 1 is the manager's";
  EXPECT_EQ(d->method_hosts, (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 1, 0, 1}));
  EXPECT_TRUE(d->bucket_totals.empty()) << "the child imports its budget instead";
  EXPECT_EQ(d->gas_data.at("k"), "v");
  EXPECT_TRUE(d->message_fee_allocation.empty());
  EXPECT_EQ(d->initial_time_units_allocation, 0u);
  EXPECT_EQ(d->remaining_recursion, kCrossMajorRecursion) << "9 clamped to CROSS_MAJOR_RECURSION";
  ASSERT_TRUE(d->nested);
  EXPECT_EQ(d->nested->memory_limit, 1u << 24);
  EXPECT_EQ(d->nested->stack, (std::vector<h::Address>{addr(1)}));
  EXPECT_EQ(d->nested->state_mode, h::StorageType::kLatestNonFinal);
  EXPECT_EQ(d->nested->topmost_runner_id.as_string(), "contract");
  EXPECT_EQ(d->nested->remaining_det_fuel, BigInt(5000));
  EXPECT_EQ(d->nested->permissions.as_int(), BigInt(h::kNestedDeterministic | h::kNestedReadStorage | h::kNestedCallOthers));

  h::NestedRunEnvelope low = envelope();
  low.remaining_recursion = 2;
  low.permissions = h::kNestedDeterministic;
  low.routing_payload = calldata::encode(Value::map({{"kind", "major"}, {"major", 1}}));
  auto unhooked = plan_nested_run(caller(), encoded(low), 3);
  ASSERT_TRUE(unhooked);
  EXPECT_EQ(unhooked->request.permissions, "");
  EXPECT_EQ(unhooked->request.selector.kind, ExecutorSelector::Kind::kMajor);
  EXPECT_EQ(unhooked->request.selector.major, 1u);
  auto d2 = h::parse_execution_data(unhooked->execution_data);
  EXPECT_EQ(d2->remaining_recursion, 2u);
  EXPECT_EQ(d2->method_hosts, (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 1, 1, 1}));
}

TEST(ManagerNestedRun, EnvelopesADelegatedCallNeverSendsAreRefused) {
  auto why = [](const RunRequest& c, const Bytes& env, std::size_t depth = 0) {
    auto r = plan_nested_run(c, env, depth);
    EXPECT_FALSE(r);
    return r ? std::string("<accepted>") : r.error().message;
  };
  EXPECT_EQ(plan_nested_run(caller(), Bytes{0xff}, 0).error().code, "nested_run");
  h::NestedRunEnvelope init = envelope();
  init.message.is_init = true;
  EXPECT_EQ(why(caller(), encoded(init)), "nested CallContract message cannot be an init");
  h::NestedRunEnvelope value = envelope();
  value.message.value = 1;
  EXPECT_EQ(why(caller(), encoded(value)), "nested CallContract message value must be zero");
  EXPECT_EQ(why(caller({{"host", " fd://3"}}), encoded(envelope())),
            "host 0 uses fd:// and cannot be re-dialed by a nested executor");
  for (auto [bit, name] : {std::pair{h::kNestedSpawnNondet, "spawn_nondet"}, std::pair{h::kNestedWriteStorage, "write_storage"},
                           std::pair{h::kNestedSendMessages, "send_messages"},
                           std::pair{h::kNestedUseBalanceForMessageFees, "use_balance_for_message_fees"}}) {
    h::NestedRunEnvelope e = envelope();
    e.permissions |= bit;
    EXPECT_EQ(why(caller(), encoded(e)),
              std::string("nested run envelope asserts `") + name + "`, which a call crossing a major boundary never carries");
  }
  h::NestedRunEnvelope routing = envelope();
  routing.routing_payload = calldata::encode(Value::map({{"kind", "exact"}, {"version", "v1"}}));
  EXPECT_NE(why(caller(), encoded(routing)).find("routing payload"), std::string::npos);
  routing.routing_payload = Bytes{0xff, 0xff};
  EXPECT_NE(why(caller(), encoded(routing)).find("routing payload is not calldata"), std::string::npos);
  Value extra = h::nested_envelope_to_value(envelope());
  extra.as_map()["granted_custom"] = Value::Array{};
  EXPECT_EQ(why(caller(), calldata::encode(extra)), "envelope.granted_custom: unknown key");
  EXPECT_NE(why(caller(), encoded(envelope()), kMaxNestedDepth).find("delegated calls deep"), std::string::npos);
  EXPECT_TRUE(plan_nested_run(caller(), encoded(envelope()), kMaxNestedDepth - 1));
}

TEST(ManagerNestedRun, TheReplyCarriesTheCalleesOutcomeAndSmallHash) {
  for (auto [code, kind] : {std::pair{0, "Return"}, std::pair{1, "UserError"}, std::pair{2, "VmError"},
                            std::pair{4, "FatalVmError"}}) {
    auto r = nested_reply_from_consumed_result(framed(static_cast<std::uint8_t>(code), reported(kind, Value(kind))));
    ASSERT_TRUE(r) << kind << ": " << r.error().to_string();
    EXPECT_EQ(wire_name(r->kind), kind) << "FatalVmError stays fatal for the caller";
    EXPECT_EQ(r->data.as_string(), kind);
    EXPECT_EQ(r->small_hash, Bytes(32, 2)) << "the small hash, not the execution hash";
    EXPECT_TRUE(r->effect_free);
  }
  // An internal error needs no hashes and is forwarded as it is (the caller refuses it).
  auto internal = nested_reply_from_consumed_result(framed(3, reported("InternalError", Value("boom"), 0)));
  ASSERT_TRUE(internal);
  EXPECT_EQ(internal->kind, ResultCode::kInternalError);
  // On the wire: {result: {kind, data}, small_hash, effect_free}.
  std::vector<std::uint8_t> frame = nested_reply_frame(*internal);
  ASSERT_GE(frame.size(), 4u);
  EXPECT_EQ(h::get_u32_le(frame.data()), frame.size() - 4);
  Value wire = *calldata::decode(std::span<const std::uint8_t>(frame).subspan(4));
  EXPECT_EQ(wire.find("result")->find("kind")->as_string(), "InternalError");
  EXPECT_EQ(wire.find("result")->find("data")->as_string(), "boom");
  EXPECT_EQ(wire.find("effect_free")->as_bool(), internal->effect_free);
}

TEST(ManagerNestedRun, AReplyIsRefusedWhenTheCalleeHadAnyEffect) {
  auto why = [](const Value& r, std::uint8_t code = 0) {
    auto reply = nested_reply_from_consumed_result(framed(code, r));
    EXPECT_FALSE(reply);
    return reply ? std::string("<accepted>") : reply.error().message;
  };
  EXPECT_EQ(why(reported("Return", Value("x"), 31)), "nested executor returned an invalid small hash length");
  EXPECT_EQ(why(reported("Return"), 1), "nested executor result code UserError disagrees with the reported Return");
  auto with = [](const char* key, Value v) {
    Value r = reported("Return");
    r.as_map()[key] = std::move(v);
    return r;
  };
  auto forbids = [](const std::string& effect) {
    return "nested executor reported `" + effect + "`, which its permissions forbid";
  };
  EXPECT_EQ(why(with("storage_changes", Value::array({Value::array({Bytes(36, 0), Bytes(32, 5)})}))), forbids("storage_changes"));
  EXPECT_EQ(why(with("nondet_results", Value::array({Bytes{1}}))), forbids("nondet_results"));
  EXPECT_EQ(why(with("nondet_disagreement", 0)), forbids("nondet_disagreement"));
  EXPECT_EQ(why(with("llm_consumption", 1)), forbids("llm_consumption"));
  Value event = zero_buckets();
  event.as_map()["event"] = 3;
  EXPECT_EQ(why(with("data_fees_consumed", event)), forbids("data_fees_consumed.event"));
  Value emission = Value::map({{"type", "EmitEvent"}, {"topics", Value::Array{}}, {"blob", Value(Value::Map{})}, {"storage_fee", 0}});
  EXPECT_EQ(why(with("emissions", Value::array({emission}))), forbids("emissions"));
  // A remaining budget is a report, not a consumption.
  EXPECT_TRUE(nested_reply_from_consumed_result(framed(0, with("data_fees_remaining", Value::array({1, 2})))));
}

TEST(ManagerNestedRun, TheChildMustExitCleanlyAfterItsResult) {
  Bytes ok = framed(0, reported("Return"));
  EXPECT_TRUE(nested_reply_for_exit(ok, 0, 0));
  EXPECT_EQ(nested_reply_for_exit(ok, 1, 0).error().message, "nested executor exited with code 1");
  EXPECT_EQ(nested_reply_for_exit(ok, 137, 9).error().message, "nested executor was killed by signal 9");
  EXPECT_EQ(nested_reply_for_exit(std::nullopt, 0, 0).error().message, "nested executor exited without consume_result");
  h::NestedRunReply e = nested_internal_error();
  EXPECT_EQ(e.kind, ResultCode::kInternalError);
  EXPECT_EQ(e.data.as_string(), "cross-major nested run failed");
  EXPECT_TRUE(e.small_hash.empty());
  EXPECT_FALSE(e.effect_free);
}

TEST(ManagerNestedRun, HostOneHandsOutRunNestedAndWaitsForItsReply) {
  Bytes env = encoded(envelope());
  Bytes msg{8};
  h::put_u32_le(msg, static_cast<std::uint32_t>(env.size()));
  msg.insert(msg.end(), env.begin(), env.end());
  Bytes resolve(23, 0);
  resolve[0] = 7;
  Bytes both = msg;
  both.insert(both.end(), resolve.begin(), resolve.end());
  HostOneParser p(1 << 20);
  auto o = p.feed(both);
  ASSERT_FALSE(o.error) << *o.error;
  ASSERT_TRUE(o.nested_envelope);
  EXPECT_EQ(*o.nested_envelope, env);
  EXPECT_TRUE(o.reply.empty()) << "nothing behind a run_nested is answered before its reply";
  EXPECT_TRUE(p.feed({}).reply.empty());
  p.nested_replied();
  EXPECT_EQ(p.feed({}).reply, (std::vector<std::uint8_t>{0, 1, 0, 0, 0, 0}));

  // The envelope is bounded by a build constant, not by max_message_bytes (ADR-015).
  HostOneParser small(8);
  EXPECT_TRUE(small.feed(msg).nested_envelope);
  Bytes huge{8};
  h::put_u32_le(huge, kMaxNestedEnvelopeBytes + 1);
  EXPECT_TRUE(HostOneParser(8).feed(huge).error);

  // A nested run's consume_result is kept as sent: its caller's reply is derived from it.
  Bytes fatal = framed(4, reported("FatalVmError"));
  Bytes consume{6};
  h::put_u32_le(consume, static_cast<std::uint32_t>(fatal.size()));
  consume.insert(consume.end(), fatal.begin(), fatal.end());
  HostOneParser nested(1 << 20, HostOneParser::Role::kNested);
  auto c = nested.feed(consume);
  ASSERT_TRUE(c.consumed);
  EXPECT_EQ(*c.consumed, fatal);
  EXPECT_EQ(c.reply, (std::vector<std::uint8_t>{0}));
}

}  // namespace
}  // namespace genvm::manager
