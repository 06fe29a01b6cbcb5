#include "common/module/protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/module/server.h"

namespace genvm::module {
namespace {

Hello sample_hello() {
  Hello h;
  h.genvm_id = 42;
  h.role = Role::kValidator;
  h.host_data = {{"node_address", Value("0xaa")}, {"tx_id", Value("0x01")}, {"n", Value(3)}};
  h.gas_data = {{"storageUnitPrice", "3"}};
  h.initial_time_units_allocation = 9;
  return h;
}

TEST(module_wire, HelloIsTheStructAsAMap) {
  Value v = hello_value(sample_hello());
  // lib.rs GenVMHello through the calldata derive: keys sorted, Role by variant name.
  EXPECT_EQ(calldata::to_text(v),
            calldata::to_text(Value::map({{"gas_data", Value::map({{"storageUnitPrice", "3"}})},
                                          {"genvm_id", 42},
                                          {"host_data", Value::map({{"n", 3}, {"node_address", "0xaa"}, {"tx_id", "0x01"}})},
                                          {"initial_time_units_allocation", 9},
                                          {"role", "Validator"}})));
  auto back = parse_hello(v);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, sample_hello());
  Value::Map m = v.as_map();
  m["role"] = Value("leader");  // serde's spelling, not the calldata derive's
  EXPECT_FALSE(parse_hello(Value(m)).ok());
  m = v.as_map();
  m.erase("gas_data");
  EXPECT_FALSE(parse_hello(Value(m)).ok());
  m = v.as_map();
  m["host_data"] = Value::map({{"tx_id", "x"}});  // no node_address
  EXPECT_FALSE(parse_hello(Value(m)).ok());
}

TEST(module_wire, HostDataFromJson) {
  auto m = host_data_from_json(R"({"node_address":"0xaa","tx_id":"t","list":[1,-2,"s",true,null],"o":{"k":"v"}})");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(calldata::to_text(Value(*m)),
            calldata::to_text(Value::map({{"list", Value::array({1, -2, "s", true, nullptr})},
                                          {"node_address", "0xaa"},
                                          {"o", Value::map({{"k", "v"}})},
                                          {"tx_id", "t"}})));
  auto quoted_number = host_data_from_json(R"({"node_address":"1","tx_id":"2"})");
  ASSERT_TRUE(quoted_number.ok());
  EXPECT_TRUE(quoted_number->at("node_address").is_string());
  EXPECT_FALSE(host_data_from_json("").ok());
  EXPECT_FALSE(host_data_from_json("[1]").ok());
  EXPECT_FALSE(host_data_from_json(R"({"node_address":"a"})").ok());
  EXPECT_FALSE(host_data_from_json(R"({"node_address":"a","tx_id":"b","f":1.5})").ok());
}

TEST(module_wire, LlmMessagesRoundTrip) {
  PromptPayload p;
  p.prompt = "hi";
  p.images = {calldata::Bytes{1, 2}};
  LlmMessage m{p, BigInt(7)};
  Value v = llm_message_value(m);
  EXPECT_EQ(calldata::to_text(v),
            calldata::to_text(Value::map(
                {{"Prompt", Value::map({{"payload", Value::map({{"images", Value::array({calldata::Bytes{1, 2}})},
                                                                {"prompt", "hi"},
                                                                {"response_format", "text"}})},
                                        {"remaining_fuel_as_gen", 7}})}})));
  auto back = parse_llm_message(v);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(std::get<PromptPayload>(back->payload).images.size(), 1u);

  auto t = parse_template_payload(
      Value::map({{"template", "EqNonComparativeLeader"}, {"task", "t"}, {"criteria", "c"}, {"input", "i"}}));
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_FALSE(t->expects_bool());
  EXPECT_EQ(payload_value(*t), Value::map({{"criteria", "c"}, {"input", "i"}, {"task", "t"}, {"template", "EqNonComparativeLeader"}}));
  // Closed field sets: a missing or extra field is refused.
  EXPECT_FALSE(parse_template_payload(Value::map({{"template", "EqNonComparativeLeader"}, {"task", "t"}, {"input", "i"}})).ok());
  EXPECT_FALSE(parse_template_payload(Value::map({{"template", "EqComparative"}, {"leader_answer", "a"},
                                                  {"validator_answer", "b"}, {"principle", "p"}, {"x", "y"}}))
                   .ok());
  EXPECT_FALSE(parse_prompt_payload(Value::map({{"prompt", "x"}, {"images", Value::array({})}, {"extra", 1}})).ok());
  EXPECT_FALSE(parse_prompt_payload(Value::map({{"prompt", "x"}, {"images", Value::array({})}, {"response_format", "xml"}})).ok());
}

TEST(module_wire, WebMessagesRoundTrip) {
  auto r = parse_request_payload(Value::map({{"method", "GET"}, {"url", "https://a.com"}, {"headers", Value::map({})}}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE(r->body);
  EXPECT_FALSE(r->sign);
  Value v = web_message_value(WebMessage{*r, 1000});
  EXPECT_EQ(v, Value::map({{"Request", Value::array({Value::map({{"body", nullptr},
                                                                 {"headers", Value::map({})},
                                                                 {"method", "GET"},
                                                                 {"sign", false},
                                                                 {"url", "https://a.com"}}),
                                                     1000})}}));
  auto back = parse_web_message(v);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->size_limit, 1000u);
  EXPECT_FALSE(parse_request_payload(Value::map({{"method", "BREW"}, {"url", "u"}, {"headers", Value::map({})}})).ok());
  EXPECT_FALSE(parse_request_payload(Value::map({{"method", "GET"}, {"url", "u"}, {"headers", Value::map({{"a", "text"}})}})).ok());

  auto render = parse_render_payload(Value::map({{"mode", "screenshot"}, {"url", "u"}, {"wait_after_loaded", "2s"}}));
  ASSERT_TRUE(render.ok());
  EXPECT_EQ(render->wait_after_loaded_ms, 2000u);
  EXPECT_FALSE(parse_render_payload(Value::map({{"mode", "text"}, {"url", "u"}, {"wait_after_loaded", "2"}})).ok());
  EXPECT_FALSE(parse_render_payload(Value::map({{"mode", "text"}, {"url", "u"}, {"wait_after_loaded", "ms"}})).ok());
}

TEST(module_wire, Answers) {
  EXPECT_EQ(answer_value(Answer::ok(Value(1))), Value::map({{"Ok", 1}}));
  EXPECT_EQ(answer_value(Answer::user_error({"X"}, {{"k", Value(1)}})),
            Value::map({{"UserError", Value::map({{"causes", Value::array({"X"})}, {"ctx", Value::map({{"k", 1}})}})}}));
  EXPECT_EQ(answer_value(Answer::fatal("boom")), Value::map({{"FatalError", "boom"}}));
  EXPECT_FALSE(parse_answer(Value::map({{"Ok", 1}, {"UserError", 2}})).ok());
  EXPECT_FALSE(parse_answer(Value::map({{"FatalError", 1}})).ok());
  EXPECT_FALSE(parse_answer(Value::map({{"Err", 1}})).ok());
  EXPECT_TRUE(parse_prompt_answer(Value::map({{"consumed_gen", 3}, {"data", true}})).ok());
  EXPECT_FALSE(parse_prompt_answer(Value::map({{"consumed_gen", -3}, {"data", true}})).ok());
  EXPECT_FALSE(parse_prompt_answer(Value::map({{"consumed_gen", 3}, {"data", 5}})).ok());
  EXPECT_TRUE(check_render_answer(Value::map({{"response", response_value(200, {}, {})}})).ok());
  EXPECT_FALSE(check_render_answer(Value::map({{"response", Value::map({{"status", 70000}})}})).ok());
  EXPECT_FALSE(check_render_answer(Value::map({{"image", "not bytes"}})).ok());
}

TEST(module_server, ServesHelloThenRequestsOnAUnixSocket) {
  std::string path = "/tmp/genvm-module-wire-test-" + std::to_string(::getpid()) + ".sock";
  auto l = ModuleListener::bind("unix://" + path);
  ASSERT_TRUE(l.ok()) << l.error().to_string();
  Hello seen;
  std::thread t([&] {
    (*l)->serve([&](const Hello& h, const Value& req) {
      seen = h;
      return Answer::ok(req);
    });
  });
  // Through the real listener: connect as an executor would.
  int c = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), path.size());
  ASSERT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_TRUE(write_frame(c, calldata::encode(hello_value(sample_hello()))).ok());
  ASSERT_TRUE(write_frame(c, calldata::encode(Value("ping"))).ok());
  auto answer = read_frame(c);
  ASSERT_TRUE(answer.ok() && *answer);
  EXPECT_EQ(*calldata::decode(**answer), Value::map({{"Ok", "ping"}}));
  // A frame that is not calldata is answered FatalError, and the connection stays in step.
  ASSERT_TRUE(write_frame(c, calldata::Bytes{0xff, 0xff}).ok());
  answer = read_frame(c);
  ASSERT_TRUE(answer.ok() && *answer);
  EXPECT_TRUE(calldata::decode(**answer)->find("FatalError"));
  EXPECT_EQ(seen, sample_hello());
  ::close(c);
  (*l)->stop();
  t.join();
}

TEST(module_server, ConnectionsBeyondTheCapAreClosed) {
  auto l = ModuleListener::bind("127.0.0.1:0");
  ASSERT_TRUE(l.ok()) << l.error().to_string();
  std::thread t([&] { (*l)->serve([](const Hello&, const Value& req) { return Answer::ok(req); }); });
  std::string addr = (*l)->address();
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1))));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto dial = [&] {
    int c = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    return c;
  };
  auto ping = [&](int c) {
    if (!write_frame(c, calldata::encode(hello_value(sample_hello()))) || !write_frame(c, calldata::encode(Value(1)))) {
      return false;
    }
    auto a = read_frame(c);
    return a.ok() && a->has_value();
  };
  std::vector<int> held;
  for (int i = 0; i < ModuleListener::kMaxConnections; ++i) held.push_back(dial());
  ASSERT_TRUE(ping(held.front()));  // every held one is being served...
  int extra = dial();
  EXPECT_FALSE(ping(extra));  // ...and one more is closed without an answer
  ::close(extra);
  for (int c : held) ::close(c);
  (*l)->stop();
  t.join();
}

// Pins RequestLimit: a request frame above the module's bound is dropped as it is read (the
// handler never sees it) and answered with the module's refusal; the connection stays in step,
// so the next request is served. Without the bound the handler got the whole frame.
TEST(module_server, ARequestAboveTheLimitIsDroppedAndRefused) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  int handled = 0;
  RequestLimit limit{100, [](std::uint32_t length) {
                       return Answer::user_error({"TOO_BIG"}, {{"length", Value(static_cast<std::uint64_t>(length))}});
                     }};
  std::thread server([&] {
    serve_connection(fds[1], [&](const Hello&, const Value& req) {
      ++handled;
      return Answer::ok(req);
    }, limit);
  });
  ASSERT_TRUE(write_frame(fds[0], calldata::encode(hello_value(sample_hello()))).ok());
  const calldata::Bytes big = calldata::encode(Value(std::string(5000, 'x')));
  ASSERT_TRUE(write_frame(fds[0], big).ok());
  ASSERT_TRUE(write_frame(fds[0], calldata::encode(Value("ping"))).ok());
  auto refused = read_frame(fds[0]);
  ASSERT_TRUE(refused.ok() && *refused);
  EXPECT_EQ(*calldata::decode(**refused),
            Value::map({{"UserError", Value::map({{"causes", Value::array({"TOO_BIG"})},
                                                  {"ctx", Value::map({{"length", Value(static_cast<std::uint64_t>(big.size()))}})}})}}));
  auto served = read_frame(fds[0]);
  ASSERT_TRUE(served.ok() && *served);
  EXPECT_EQ(*calldata::decode(**served), Value::map({{"Ok", "ping"}}));
  ::shutdown(fds[0], SHUT_WR);
  server.join();
  ::close(fds[0]);
  EXPECT_EQ(handled, 1);
  // read_frame's own form: the length reported, an empty body kept.
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  ASSERT_TRUE(write_frame(fds[0], big).ok());
  std::uint32_t dropped = 0;
  auto f = read_frame(fds[1], 100, &dropped);
  ASSERT_TRUE(f.ok() && *f);
  EXPECT_TRUE((*f)->empty());
  EXPECT_EQ(dropped, big.size());
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(module_server, TcpOnLoopbackPicksAPort) {
  auto l = ModuleListener::bind("127.0.0.1:0");
  ASSERT_TRUE(l.ok()) << l.error().to_string();
  EXPECT_NE((*l)->address(), "127.0.0.1:0");
  EXPECT_FALSE(ModuleListener::bind("localhost:1").ok());  // numeric only
  EXPECT_FALSE(ModuleListener::bind("nothing").ok());
}

}  // namespace
}  // namespace genvm::module
