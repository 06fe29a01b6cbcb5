// The manager against an adversarial review's findings, through its real sockets: a version
// selector built to exhaust the stack, browser pages, run ownership (the public model by
// default, per caller when configured), /status per caller, the per-peer connection cap.
#ifdef GENVM_MANAGER_HAS_SUPERVISOR
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "manager/server_test_util.h"

namespace genvm::manager {
namespace {

using namespace server_test;
using namespace std::chrono_literals;

Value request(const char* key, Value::Map body) { return Value::map({{key, Value(std::move(body))}}); }

// A directory with a manifest of one line, v0.1.0, whose executor does not exist (a run that
// resolves to it fails at the spawn, which is enough to show the manager got that far).
struct Lines {
  Lines() : root(::testing::TempDir() + "mgr_lines_" + std::to_string(::getpid()) + "_" + std::to_string(n++)) {
    std::filesystem::create_directories(root);
    std::ofstream(root + "/manifest.yaml") << "executor_versions:\n  v0.1.0: {available_after: 2024-01-01T00:00:00Z}\n";
  }
  ~Lines() { std::filesystem::remove_all(root); }
  std::string yaml() const { return "executors_dir: " + root + "/executor\nmanifest_path: " + root + "/manifest.yaml\n"; }
  static inline int n = 0;
  std::string root;
};

Value version_selector(const std::string& version) {
  return Value::map({{"kind", "version"}, {"version", version}});
}

std::string failure_of(const Value& terminal) {
  const auto& m = terminal.as_map();
  if (m.begin()->first != "failed_to_start") return "not failed_to_start: " + calldata::to_text(terminal);
  return m.begin()->second.find("error")->as_string();
}

// ---- a selector that recursed std::regex into SIGSEGV -----------------------------------------

// Without the bounded matcher, resolving this selector killed the whole test binary (and the
// manager with every run and connection). Now the run fails to start with the reason, and the
// same connection, other connections and HTTP keep being served.
TEST(ManagerHardening, AVersionSelectorOfThirtyThousandNestedGroupsFailsToStartAndTheManagerServesOn) {
  Lines lines;
  Manager m(lines.yaml(), /*scripts=*/false, -1, /*stand_in=*/false);
  asio::io_context io;
  TcpWs c(io, m.port());
  std::string deep = "re:" + std::string(30000, '(') + std::string(30000, ')');
  c.send(Method::kRun, 1, Value::map({{"run", testing::run_body(true, {{"selector", version_selector(deep)}})}}));
  std::uint64_t id = genvm_id_of(c.reply(1));
  std::string why = failure_of(c.terminal(id));
  EXPECT_NE(why.find("is not a valid regex: the pattern is 60000 bytes; at most 256 are accepted"), std::string::npos)
      << why.substr(0, 300);
  EXPECT_LT(why.size(), 300u) << "the reason quotes the selector's start only";

  std::string nested = "re:" + std::string(17, '(') + "v0" + std::string(17, ')');
  c.send(Method::kRun, 2, Value::map({{"run", testing::run_body(true, {{"selector", version_selector(nested)}})}}));
  std::uint64_t id2 = genvm_id_of(c.reply(2));
  EXPECT_NE(failure_of(c.terminal(id2)).find("groups nest deeper than 16"), std::string::npos);

  // Still serving: a pattern that resolves reaches the spawn (whose executor is absent), a new
  // connection says hello, HTTP answers.
  c.send(Method::kRun, 3, Value::map({{"run", testing::run_body(true, {{"selector", version_selector("re:^v0\\.1")}})}}));
  std::uint64_t id3 = genvm_id_of(c.reply(3));
  std::string spawn = failure_of(c.terminal(id3));
  EXPECT_NE(spawn.find("v0.1.0/bin/genvm"), std::string::npos) << spawn;
  TcpWs other(io, m.port());
  EXPECT_EQ(other.hello_.method, static_cast<std::uint16_t>(Method::kHello));
  EXPECT_EQ(http_call(m.port(), http::verb::get, "/status").result(), http::status::ok);
}

// ---- other recursion a request drives ----------------------------------------------------------

// Pins the bounds that already hold (no fix here): every structure a request nests is bounded
// by the calldata decoder's kMaxDepth before anything recurses over it (the shape check, the
// copies, the ExecutionData encode), and an HTTP body by the JSON reader's kMaxJsonDepth. A message_fee_allocation tree as deep as a frame may nest
// is run; one deeper is a malformed_frame; the connection and the manager go on.
TEST(ManagerHardening, RequestNestingIsBoundedBeforeAnythingRecursesOverIt) {
  Manager m("");
  asio::io_context io;
  TcpWs c(io, m.port());
  Value::Map fees = testing::local_fee_fields();
  Value node = fees.at("message_fee_allocation").as_array().at(0);
  auto tree = [&](std::size_t levels) {
    Value t = node;
    t.as_map()["children"] = Value::Array{};
    for (std::size_t i = 1; i < levels; ++i) {
      Value parent = node;
      Value::Array children;
      children.push_back(std::move(t));  // moved, not copied: the tree is built in linear time
      parent.as_map()["children"] = Value(std::move(children));
      t = std::move(parent);
    }
    Value::Array top;
    top.push_back(std::move(t));
    return Value(std::move(top));
  };
  // run -> request map -> allocation array: 3 levels; each node a map and its children array.
  const std::size_t deepest = (calldata::kMaxDepth - 8) / 2;
  Value::Map ok_fields = fees;
  ok_fields["message_fee_allocation"] = tree(deepest);
  c.send(Method::kRun, 1, run_payload("cat >/dev/null; exit 7", ok_fields));
  std::uint64_t id = genvm_id_of(c.reply(1));
  EXPECT_EQ(*c.terminal(id).as_map().at("finished").find("exit_code"), Value(7));
  Value::Map deep_fields = fees;
  deep_fields["message_fee_allocation"] = tree(calldata::kMaxDepth);
  c.send(Method::kRun, 2, run_payload("exit 0", deep_fields));
  EXPECT_EQ(error_code_of(c.reply(2)), static_cast<int>(ErrorCode::kMalformedFrame));
  // An HTTP JSON body: the reader stops at kMaxJsonDepth, a 400 naming the bound.
  auto deep_json = http_call(m.port(), http::verb::post, "/permits", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(deep_json.result(), http::status::bad_request);
  EXPECT_NE(deep_json.body().find("nesting deeper than " + std::to_string(kMaxJsonDepth)), std::string::npos)
      << deep_json.body().substr(0, 200);
  EXPECT_EQ(http_call(m.port(), http::verb::get, "/status").result(), http::status::ok);
}

// ---- browser pages ---------------------------------------------------------------------------

// Without the check, a page's WebSocket reached /ws and its POST started a run.
TEST(ManagerHardening, RequestsFromBrowserPagesAreRefusedWith403) {
  Manager m("allowed_origins: [\"http://dashboard.local:8080\"]\n");
  auto upgrade = [&](std::vector<std::pair<std::string, std::string>> extra) {
    std::vector<std::pair<std::string, std::string>> f{{"Upgrade", "websocket"},
                                                       {"Connection", "Upgrade"},
                                                       {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                                                       {"Sec-WebSocket-Version", "13"}};
    f.insert(f.end(), extra.begin(), extra.end());
    return http_with(m.port(), http::verb::get, "/ws", f);
  };
  auto refused = upgrade({{"Origin", "https://evil.example"}});
  EXPECT_EQ(refused.result(), http::status::forbidden);
  EXPECT_NE(refused.body().find("a request from a browser page (Origin: https://evil.example)"), std::string::npos)
      << refused.body();
  EXPECT_EQ(upgrade({}).result(), http::status::switching_protocols) << "a client without Origin is not a page";
  EXPECT_EQ(upgrade({{"Origin", "http://dashboard.local:8080"}}).result(), http::status::switching_protocols)
      << "an allowed origin";

  // State-changing routes too (CSRF), and a page that sends no Origin but Sec-Fetch-Site.
  std::string body = calldata_body(testing::run_body(true, {{"extra_args", Value::array({"exit 0"})}}));
  auto post = http_with(m.port(), http::verb::post, "/genvm/run", {{"Origin", "null"}}, body);
  EXPECT_EQ(post.result(), http::status::forbidden) << post.body();
  EXPECT_EQ(http_with(m.port(), http::verb::post, "/permits", {{"Origin", "https://evil.example"}}, "{\"permits\":1000}")
                .result(),
            http::status::forbidden);
  EXPECT_EQ(http_with(m.port(), http::verb::delete_, "/genvm/1", {{"Sec-Fetch-Site", "cross-site"}}).result(),
            http::status::forbidden);
  EXPECT_EQ(http_with(m.port(), http::verb::get, "/genvm/1", {{"Sec-Fetch-Site", "same-site"}}).result(),
            http::status::forbidden)
      << "GET /genvm/{id} acks: a link on a page must not";
  EXPECT_TRUE(m.on_thread([&] { return m.registry().executions().empty(); })) << "a refused request started a run";
  EXPECT_EQ(http_with(m.port(), http::verb::get, "/status", {{"Sec-Fetch-Site", "none"}}).result(), http::status::ok)
      << "a user typing the address is not a page";
  EXPECT_EQ(http_with(m.port(), http::verb::post, "/genvm/run", {{"Origin", "http://dashboard.local:8080"}}, body)
                .result(),
            http::status::ok);
}

// ---- ownership -------------------------------------------------------------------------------

// The public manager's model, and the default: a host that reconnects uses its runs from the new
// connection (attach, get_artifact, cancel, a repeated host_genvm_id, ack). Failed before the
// default was `shared`: each of these was answered as for an unknown id.
TEST(ManagerHardening, ByDefaultAReconnectedHostUsesItsRunsFromTheNewConnection) {
  Manager m("");
  asio::io_context io;
  std::uint64_t done, sleeper, boot;
  {
    TcpWs first(io, m.port());
    boot = first.boot_id();
    first.send(Method::kRun, 1, run_payload("printf abc", {{"debug_mode", "safe"}, {"host_genvm_id", "tx-1"}}));
    done = genvm_id_of(first.reply(1));
    first.terminal(done);
    first.send(Method::kRun, 2, run_payload("exec sleep 1000"));
    sleeper = genvm_id_of(first.reply(2));
    first.event("started", sleeper);
    first.ws().close(websocket::close_code::normal);
  }
  TcpWs second(io, m.port());
  second.send(Method::kAttach, 3, request("attach", {{"boot_id", boot}, {"genvm_id", done}}));
  Frame snap = second.reply(3);
  ASSERT_EQ(snap.method, static_cast<std::uint16_t>(Method::kAttach)) << calldata::to_text(snap.payload);
  EXPECT_EQ(snap.payload.find("snapshot")->as_map().begin()->first, "finished");
  second.send(Method::kGetArtifact, 4,
              request("get_artifact", {{"genvm_id", done}, {"field", "stdout"}, {"offset", 0}, {"max_len", 9}}));
  EXPECT_EQ(*second.reply(4).payload.find("data"), Value(calldata::Bytes{'a', 'b', 'c'}));
  // Reads before ack are repeatable, from any number of connections.
  auto art = http_call(m.port(), http::verb::get, "/genvm/" + std::to_string(done) + "/artifact?field=stdout&max_len=9");
  EXPECT_NE(art.body().find("\"total_len\":3"), std::string::npos) << art.body();
  second.send(Method::kRun, 5, run_payload("exit 0", {{"host_genvm_id", "tx-1"}}));
  EXPECT_EQ(genvm_id_of(second.reply(5)), done) << "the repeat answers the first run";
  second.send(Method::kAttach, 8, request("attach", {{"boot_id", boot}, {"genvm_id", sleeper}}));
  EXPECT_EQ(second.reply(8).payload.find("snapshot")->as_map().begin()->first, "started");
  second.send(Method::kCancel, 6, request("cancel", {{"genvm_id", sleeper}}));
  EXPECT_EQ(second.reply(6).payload, Value::map({}));
  EXPECT_EQ(*second.terminal(sleeper).as_map().at("finished").find("cause"), Value("cancelled"));
  second.send(Method::kAck, 7, request("ack", {{"genvm_id", done}}));
  EXPECT_EQ(second.reply(7).payload, Value::map({}));
}

// per_caller: the same reconnect is refused (as for an unknown id), and /status lists only the
// caller's runs (all of them for a trusted caller). Without the filter, /status showed every
// caller's ids, times and lines.
TEST(ManagerHardening, PerCallerOwnershipHidesOtherCallersRunsIncludingFromStatus) {
  Manager m(std::string("ownership: per_caller\ntrusted: {tokens: [\"") + kTrustedToken + "\"]}\n");
  asio::io_context io;
  std::uint64_t id, boot;
  const std::string mine = "client-secret-0000000001";
  {
    TcpWs first(io, m.port());
    boot = first.boot_id();
    first.send(Method::kRun, 1, run_payload("printf abc", {{"debug_mode", "safe"}}));
    id = genvm_id_of(first.reply(1));
    first.terminal(id);
  }
  TcpWs second(io, m.port());
  second.send(Method::kAttach, 2, request("attach", {{"boot_id", boot}, {"genvm_id", id}}));
  EXPECT_EQ(error_code_of(second.reply(2)), static_cast<int>(ErrorCode::kUnknownId));
  second.send(Method::kCancel, 3, request("cancel", {{"genvm_id", id}}));
  EXPECT_EQ(error_code_of(second.reply(3)), static_cast<int>(ErrorCode::kUnknownId));

  auto posted = http_call(m.port(), http::verb::post, "/genvm/run",
                          calldata_body(testing::run_body(true, {{"extra_args", Value::array({"exit 0"})}})), mine);
  ASSERT_EQ(posted.result(), http::status::ok) << posted.body();
  std::string tid = posted.body().substr(posted.body().find("\"id\":") + 5);
  tid = tid.substr(0, tid.find('}'));
  auto listed = [](const http::response<http::string_body>& r, const std::string& gid) {
    return r.body().find("\"" + gid + "\":") != std::string::npos;
  };
  std::string sid = std::to_string(id);
  auto anonymous = http_call(m.port(), http::verb::get, "/status");
  EXPECT_FALSE(listed(anonymous, sid)) << anonymous.body();
  EXPECT_FALSE(listed(anonymous, tid)) << anonymous.body();
  auto own = http_call(m.port(), http::verb::get, "/status", "", mine);
  EXPECT_TRUE(listed(own, tid)) << own.body();
  EXPECT_FALSE(listed(own, sid)) << own.body();
  auto trusted = http_call(m.port(), http::verb::get, "/status", "", kTrustedToken);
  EXPECT_TRUE(listed(trusted, sid) && listed(trusted, tid)) << trusted.body();

  Manager shared("");
  TcpWs c(io, shared.port());
  c.send(Method::kRun, 1, run_payload("exit 0"));
  std::uint64_t sh = genvm_id_of(c.reply(1));
  EXPECT_TRUE(listed(http_call(shared.port(), http::verb::get, "/status"), std::to_string(sh))) << "shared lists all";
}

// ---- the per-peer connection cap ---------------------------------------------------------------

// Without it, one peer could hold every connection the manager has room for.
TEST(ManagerHardening, OnePeerCannotTakeEveryConnection) {
  std::string log_path = ::testing::TempDir() + "mgr_peer_log_" + std::to_string(::getpid());
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  {
    Manager m("connections: {max: 50, max_per_peer: 2}\n", true, log_fd);
    asio::io_context io;
    auto a = std::make_unique<TcpWs>(io, m.port());
    TcpWs b(io, m.port());
    auto refused = http_call(m.port(), http::verb::get, "/status");
    EXPECT_EQ(refused.result(), http::status::too_many_requests);
    EXPECT_NE(refused.body().find("too many connections from tcp:127.0.0.1 (connections.max_per_peer 2)"),
              std::string::npos)
        << refused.body();
    // Another peer (the unix socket's uid) is still served.
    UnixWs local(io, m.socket_path());
    EXPECT_EQ(local.hello_.method, static_cast<std::uint16_t>(Method::kHello));
    a.reset();
    bool served = false;
    for (int i = 0; i < 100 && !served; ++i) {  // until the manager has seen the close
      served = http_call(m.port(), http::verb::get, "/status").result() == http::status::ok;
      if (!served) std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(served) << "room again once a connection of the peer closed";
  }
  std::string text = slurp(log_path);
  EXPECT_NE(text.find("\"reason\":\"connections.max_per_peer\",\"peer\":\"tcp:127.0.0.1\""), std::string::npos) << text;
  ::close(log_fd);
  ::unlink(log_path.c_str());
}

}  // namespace
}  // namespace genvm::manager
#endif  // GENVM_MANAGER_HAS_SUPERVISOR
