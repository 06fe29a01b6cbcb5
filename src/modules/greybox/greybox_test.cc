#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "modules/greybox/host_lib.h"
#include "modules/greybox/lua_value.h"
#include "modules/greybox/lua_vm.h"
#include "modules/greybox/script_host.h"

namespace genvm::greybox {
namespace {

std::string write_script(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "greybox_" + std::to_string(::getpid()) + "_" + name + ".lua";
  std::ofstream(path) << text;
  return path;
}

const HostOptions& options() {
  static HostOptions o{"greybox_test", "/tmp", "error"};
  return o;
}

std::unique_ptr<LuaVm> vm_with(const std::string& script, Limits limits = {}) {
  auto vm = LuaVm::create(limits, "");
  EXPECT_TRUE(vm);
  EXPECT_TRUE(register_common_host(**vm, options()));
  auto s = (*vm)->run_file(write_script(::testing::UnitTest::GetInstance()->current_test_info()->name(), script));
  EXPECT_TRUE(s) << (s ? "" : s.error().to_string());
  return std::move(*vm);
}

TEST(module_greybox, ValuesRoundTripThroughLua) {
  auto vm = vm_with("function Echo(x) return x end");
  Value v = Value::map({{"s", "text"},
                        {"n", -5},
                        {"big", BigInt::parse_decimal("123456789012345678901234567890").value()},
                        {"list", Value::array({1, true, "x"})},
                        {"nested", Value::map({{"empty", Value::Map{}}})},
                        {"bytes", calldata::Bytes{0xff, 0x00}}});
  auto r = vm->call("Echo", {}, {v});
  ASSERT_TRUE(r) << r.error().message;
  Value expected = v;
  // Big integers go as their decimal text; strings that are not UTF-8 come back as bytes.
  expected.as_map()["big"] = Value("123456789012345678901234567890");
  EXPECT_EQ(*r, expected);
  auto f = vm_with("function F() return {half = 0.5, whole = 2.0} end")->call("F", {}, {});
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, Value::map({{"half", "0.5"}, {"whole", 2}}));
  auto bad = vm_with("function F() return {1, x = 2} end")->call("F", {}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ScriptFailure::kBadResult);
}

TEST(module_greybox, UserErrorsAreTheWiresUserError) {
  auto vm = vm_with(R"(
function Fail() __dflt.user_error{causes = {"NOPE"}, fatal = false, ctx = {url = "u", n = 3}} end
function Fatal() __dflt.user_error{causes = {"BAD", "WORSE"}, fatal = true, ctx = {message = "why", k = 1}} end
function Caught()
  local ok, e = pcall(__dflt.json_parse, "{oops")
  local u = __dflt.as_user_error(e)
  assert(not ok and u and u.causes[1] == "DESERIALIZING" and u.fatal == true)
  assert(__dflt.as_user_error("plain") == nil)
  assert(getmetatable(e) == false and not pcall(setmetatable, e, {}))
  u.fatal = false
  __dflt.user_error(u)
end
)");
  auto r = vm->call("Fail", {}, {});
  ASSERT_FALSE(r);
  module::Answer a = answer_of(r.error());
  ASSERT_EQ(a.kind, module::AnswerKind::kUserError);
  EXPECT_EQ(a.value, Value::map({{"causes", Value::array({"NOPE"})}, {"ctx", Value::map({{"n", 3}, {"url", "u"}})}}));
  module::Answer f = answer_of(vm->call("Fatal", {}, {}).error());
  ASSERT_EQ(f.kind, module::AnswerKind::kFatalError);
  EXPECT_EQ(f.value.as_string(), "BAD,WORSE: why {\"k\":1}");
  module::Answer c = answer_of(vm->call("Caught", {}, {}).error());
  ASSERT_EQ(c.kind, module::AnswerKind::kUserError);
  EXPECT_EQ(c.value.as_map().at("causes"), Value::array({"DESERIALIZING"}));
}

TEST(module_greybox, AScriptErrorIsAStructuredFatalError) {
  auto vm = vm_with("function Boom() local t = nil; return t.field end");
  auto r = vm->call("Boom", {}, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ScriptFailure::kScriptError);
  module::Answer a = answer_of(r.error());
  ASSERT_EQ(a.kind, module::AnswerKind::kFatalError);
  EXPECT_EQ(a.value.as_string().rfind("LUA_ERROR: ", 0), 0u) << a.value.as_string();
  EXPECT_NE(a.value.as_string().find("attempt to index"), std::string::npos);
  // The state is still usable.
  auto again = vm->call("Missing", {}, {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ScriptFailure::kMissingEntry);
}

TEST(module_greybox, AnEndlessLoopEndsAtTheInstructionBudgetEvenUnderPcall) {
  Limits limits;
  limits.instructions = 5'000'000;
  auto vm = vm_with(R"(
function Spin() while true do end end
function Stubborn()
  while true do pcall(function() while true do end end) end
end
)", limits);
  auto r = vm->call("Spin", {}, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ScriptFailure::kInstructionLimit);
  auto s = vm->call("Stubborn", {}, {});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ScriptFailure::kInstructionLimit);
  EXPECT_EQ(answer_of(s.error()).value.as_string().rfind("LUA_INSTRUCTION_LIMIT: ", 0), 0u);
}

TEST(module_greybox, AWallClockBudgetEndsAScriptThatSleepsAndSpins) {
  Limits limits;
  limits.wall_ms = 200;
  auto vm = vm_with("function Slow() while true do __dflt.sleep_seconds(0.05) end end", limits);
  auto r = vm->call("Slow", {}, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ScriptFailure::kTimeLimit);
}

TEST(module_greybox, AllocationsStopAtTheCapEvenWhenCaught) {
  Limits limits;
  limits.memory_bytes = 8u << 20;
  auto vm = vm_with(R"(
function Hog() local t = {} ; local i = 0; while true do i = i + 1; t[i] = string.rep("x", 4096) .. i end end
function Sly()
  local ok = pcall(function() return string.rep("x", 64 * 1024 * 1024) end)
  return {caught = not ok}
end
function Small() return "fine" end
)", limits);
  auto r = vm->call("Hog", {}, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ScriptFailure::kMemoryLimit);
  EXPECT_LE(vm->memory_used(), limits.memory_bytes);
  auto s = vm->call("Sly", {}, {});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ScriptFailure::kMemoryLimit);
  auto ok = vm->call("Small", {}, {});
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, Value("fine"));
}

TEST(module_greybox, NoFilesNoOsNoBinaryChunks) {
  auto vm = vm_with(R"(
function Probe()
  local bin = string.dump(function() end)
  local f, err = load(bin)
  return {io = io == nil, os = os == nil, dofile = dofile == nil, binary_refused = f == nil,
          text_ok = load("return 1")() == 1, int_div = 7 // 2, utf8 = utf8.len("é")}
end
)");
  auto r = vm->call("Probe", {}, {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, Value::map({{"io", true}, {"os", true}, {"dofile", true}, {"binary_refused", true},
                            {"text_ok", true}, {"int_div", 3}, {"utf8", 1}}));
}

TEST(module_greybox, HostFunctions) {
  auto vm = vm_with(R"(
function Run()
  local d = __dflt
  local u = d.split_url("https://Example.com:8443/a?b")
  local j = d.json_parse('{"a": [1, 2.5, "x", null, true]}')
  return {
    sha2 = d.sha2_256("abc"), sha3 = d.sha3_256("abc"), keccak = d.keccak256(""),
    b64 = d.base64_encode("hi!?"), unb64 = d.base64_decode("aGkhPw=="),
    url = {u.schema, u.host, u.port}, no_port = d.split_url("http://x.org/").port == nil,
    bad_url = d.split_url("not a url") == nil, enc = d.url_encode("a b&c/é"),
    json = d.json_stringify({k = {1, 2}}), parsed = {j.a[1], j.a[3], j.a[5], #j.a},
    ws = d.filter_text("  a \t b\n\n\n\nc  \n", {"NormalizeWS"}),
    zw = d.filter_text("a\u{200B}b\u{FEFF}c\td", {"RmZeroWidth"}),
    rnd = #d.random_bytes(16), f = d.random_float() < 1, t = d.time_ms() > 1600000000000,
  }
end
function Nfkc() return __dflt.filter_text("x", {"NFKC"}) end
)");
  auto r = vm->call("Run", {}, {});
  ASSERT_TRUE(r) << r.error().message;
  const auto& m = r->as_map();
  auto hex = [](const Value& v) {
    std::string out;
    const auto& b = v.as_bytes();
    for (auto c : b) {
      char buf[3];
      std::snprintf(buf, sizeof buf, "%02x", c);
      out += buf;
    }
    return out;
  };
  EXPECT_EQ(hex(m.at("sha2")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(m.at("sha3")), "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
  EXPECT_EQ(hex(m.at("keccak")), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  EXPECT_EQ(m.at("b64"), Value("aGkhPw=="));
  EXPECT_EQ(m.at("unb64"), Value("hi!?"));
  EXPECT_EQ(m.at("url"), Value::array({"https", "example.com", 8443}));
  EXPECT_EQ(m.at("no_port"), Value(true));
  EXPECT_EQ(m.at("bad_url"), Value(true));
  EXPECT_EQ(m.at("enc"), Value("a+b%26c%2F%C3%A9"));
  EXPECT_EQ(m.at("json"), Value("{\"k\":[1,2]}"));
  EXPECT_EQ(m.at("parsed"), Value::array({1, "x", true, 5}));
  EXPECT_EQ(m.at("ws"), Value("a b\n\nc\n"));  // a last newline stays, as GenVM's filter keeps it
  EXPECT_EQ(m.at("zw"), Value("abcd"));
  EXPECT_EQ(m.at("rnd"), Value(16));
  EXPECT_EQ(m.at("f"), Value(true));
  EXPECT_EQ(m.at("t"), Value(true));
  auto n = vm->call("Nfkc", {}, {});
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().causes, std::vector<std::string>{"UNSUPPORTED_FILTER"});
}

TEST(module_greybox, AMissingOrBrokenScriptRefusesToStart) {
  ScriptHost::Options o;
  o.script_path = "/nonexistent/genvm-llm-default.lua";
  auto missing = ScriptHost::create(o);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "script_missing");
  o.script_path = write_script("syntax", "function (");
  auto broken = ScriptHost::create(o);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, "script_error");
  o.script_path = write_script("noentry", "function Other() end");
  o.entry_points = {"Request"};
  auto no_entry = ScriptHost::create(o);
  ASSERT_FALSE(no_entry);
  EXPECT_NE(no_entry.error().message.find("defines no function Request"), std::string::npos);
}

TEST(module_greybox, ASessionKeepsItsCtxAcrossCallsOfOneRun) {
  ScriptHost::Options o;
  o.script_path = write_script("session", R"(
function Setup(ctx) ctx.calls = 0 end
function Count(ctx, x) ctx.calls = ctx.calls + 1; return {calls = ctx.calls, role = ctx.role, id = ctx.genvm_id, x = x} end
)");
  o.entry_points = {"Count"};
  auto host = ScriptHost::create(o);
  ASSERT_TRUE(host) << host.error().to_string();
  module::Hello h;
  h.genvm_id = 7;
  h.role = module::Role::kValidator;
  EXPECT_EQ(*(*host)->call(h, "Count", {"a"}), Value::map({{"calls", 1}, {"role", "Validator"}, {"id", 7}, {"x", "a"}}));
  EXPECT_EQ((*host)->call(h, "Count", {"b"})->as_map().at("calls"), Value(2));
  h.genvm_id = 8;  // another run: a fresh session
  EXPECT_EQ((*host)->call(h, "Count", {"c"})->as_map().at("calls"), Value(1));
}

}  // namespace
}  // namespace genvm::greybox
