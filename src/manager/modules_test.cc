// ModuleSet with the real module binaries of this build (tools/genvm-module-{web,llm}).
#include "manager/modules.h"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>

#include <gtest/gtest.h>

#include "common/module/protocol.h"
#include "manager/protocol.h"

namespace genvm::manager {
namespace {

const std::string kWebBinary = GENVM_BINARY_DIR "/tools/genvm-module-web/genvm-module-web";
const std::string kLlmBinary = GENVM_BINARY_DIR "/tools/genvm-module-llm/genvm-module-llm";

JsonValue json(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_TRUE(v.ok()) << text;
  return v ? std::move(*v) : JsonValue();
}

// Runs io until `done` holds; a bounded wait (fails the test, never asserts a duration).
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  return true;
}

class ManagerModules : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::access(kWebBinary.c_str(), X_OK), 0) << kWebBinary << " is not built";
    ASSERT_EQ(::access(kLlmBinary.c_str(), X_OK), 0) << kLlmBinary << " is not built";
    config.web.binary = kWebBinary;
    config.llm.binary = kLlmBinary;
  }

  Status start(ModuleSet& m, const ModuleStartRequest& r) {
    std::optional<Status> got;
    m.start(r, [&](Status s) { got = std::move(s); });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return got ? std::move(*got) : make_error("timeout");
  }
  std::optional<bool> stop(ModuleSet& m, ModuleType t) {
    std::optional<bool> got;
    m.stop(t, [&](bool was) { got = was; });
    EXPECT_TRUE(run_until(io, [&] { return got.has_value(); }));
    return got;
  }
  // A web module with no browser (WebRender is not what these tests exercise; this keeps the
  // start quick) and the loopback allow-listed.
  ModuleStartRequest web(bool user_error = false) {
    ModuleStartRequest r;
    r.type = ModuleType::kWeb;
    r.config = json(R"({"always_allow_hosts": ["127.0.0.1"], "chromium_path": "/nonexistent/chromium"})");
    r.user_error = user_error;
    return r;
  }
  // The pid of the process serving a module's socket (SO_PEERCRED).
  pid_t server_pid(const std::string& path) {
    auto fd = connect_module_socket(path);
    EXPECT_TRUE(fd.ok());
    if (!fd) return -1;
    ucred cred{};
    socklen_t len = sizeof cred;
    ::getsockopt(*fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
    ::close(*fd);
    return cred.pid;
  }

  boost::asio::io_context io;
  Log log{-1};
  ModulesConfig config;
};

TEST(ManagerModuleRequests, StartRequestFieldsAsModulesRsReadsThem) {
  auto r = parse_module_start_request(json(R"({"module_type": "web"})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->type, ModuleType::kWeb);
  EXPECT_FALSE(r->config.has_value());
  EXPECT_FALSE(r->user_error);
  r = parse_module_start_request(json(R"({"module_type": "Llm", "config": null, "user_error": true,
                                          "allow_empty_backends": true, "other": 1})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->type, ModuleType::kLlm);
  EXPECT_FALSE(r->config.has_value());
  EXPECT_TRUE(r->user_error);
  EXPECT_TRUE(r->allow_empty_backends);
  r = parse_module_start_request(json(R"({"module_type": "llm", "config": {"backends": {}}})"));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->config.has_value());
  EXPECT_TRUE(r->config->is_object());
  for (const char* bad : {R"({})", R"({"module_type": "gpu"})", R"({"module_type": 1})", R"([])",
                          R"({"module_type": "web", "config": "file.yaml"})",
                          R"({"module_type": "web", "user_error": "yes"})"}) {
    EXPECT_FALSE(parse_module_start_request(json(bad)).ok()) << bad;
  }
  EXPECT_EQ(parse_module_stop_request(json(R"({"module_type": "Web"})")).value(), ModuleType::kWeb);
  EXPECT_FALSE(parse_module_stop_request(json(R"({"module_type": "x"})")).ok());
}

TEST_F(ManagerModules, StartsTheWebModuleAnswersOnItsSocketAndStopsIt) {
  ModuleSet m(io, config, log);
  EXPECT_EQ(to_string(m.state(ModuleType::kWeb)), "stopped");
  ASSERT_TRUE(start(m, web()).ok());
  EXPECT_EQ(to_string(m.state(ModuleType::kWeb)), "running");
  std::string path = m.socket_path(ModuleType::kWeb);
  ASSERT_FALSE(path.empty());
  pid_t pid = server_pid(path);
  ASSERT_GT(pid, 0);
  EXPECT_NE(pid, ::getpid()) << "a module is a process of its own";
  EXPECT_EQ(::getpgid(pid), pid) << "in its own process group";

  Status again = start(m, web());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, "module_already_running");

  EXPECT_EQ(stop(m, ModuleType::kWeb), std::optional<bool>(true));
  EXPECT_EQ(to_string(m.state(ModuleType::kWeb)), "stopped");
  EXPECT_TRUE(m.socket_path(ModuleType::kWeb).empty());
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the socket file is removed";
  EXPECT_NE(::kill(pid, 0), 0) << "the module process is gone (reaped)";
  EXPECT_FALSE(connect_module_socket(path).ok());
  EXPECT_EQ(stop(m, ModuleType::kWeb), std::optional<bool>(false));
}

TEST_F(ManagerModules, ALeaseNeedsBothModulesAndAStopWaitsForIt) {
  ModuleSet m(io, config, log);
  auto none = m.acquire();
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(is_failure(none.error(), RequestFailure::kModulesNotRunning));
  ASSERT_TRUE(start(m, web()).ok());
  EXPECT_FALSE(m.acquire().ok()) << "the LLM module is not running";
  ModuleStartRequest llm;
  llm.type = ModuleType::kLlm;
  llm.user_error = true;
  ASSERT_TRUE(start(m, llm).ok());
  auto lease = m.acquire();
  ASSERT_TRUE(lease.ok());
  std::string web_path = lease->socket_path(ModuleType::kWeb);
  EXPECT_EQ(web_path, m.socket_path(ModuleType::kWeb));

  std::optional<bool> stopped;
  m.stop(ModuleType::kWeb, [&](bool was) { stopped = was; });
  io.restart();
  io.poll();
  EXPECT_EQ(to_string(m.state(ModuleType::kWeb)), "stopping");
  EXPECT_FALSE(stopped.has_value()) << "a run still holds the module";
  EXPECT_FALSE(m.acquire().ok()) << "no new run while it stops";
  EXPECT_TRUE(connect_module_socket(web_path).ok()) << "the held module still serves";
  *lease = ModuleSet::Lease();
  ASSERT_TRUE(run_until(io, [&] { return stopped.has_value(); }));
  EXPECT_TRUE(*stopped);
  EXPECT_EQ(to_string(m.state(ModuleType::kWeb)), "stopped");
}

TEST_F(ManagerModules, UserErrorModeAnswersEveryRequestWithAUserError) {
  ModuleSet m(io, config, log);
  ASSERT_TRUE(start(m, web(/*user_error=*/true)).ok());
  std::string path = m.socket_path(ModuleType::kWeb);
  EXPECT_EQ(server_pid(path), ::getpid()) << "served by the manager itself";
  auto fd = connect_module_socket(path);
  ASSERT_TRUE(fd.ok());
  module::Hello hello;
  hello.genvm_id = 7;
  hello.host_data = {{"node_address", calldata::Value("")}, {"tx_id", calldata::Value("")}};
  ASSERT_TRUE(module::write_frame(*fd, calldata::encode(module::hello_value(hello))).ok());
  module::WebMessage msg;
  msg.payload = module::RequestPayload{"GET", "http://127.0.0.1/", {}, std::nullopt, false};
  msg.size_limit = 1000;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(module::write_frame(*fd, calldata::encode(module::web_message_value(msg))).ok());
    auto frame = module::read_frame(*fd);
    ASSERT_TRUE(frame.ok() && frame->has_value());
    auto v = calldata::decode(**frame);
    ASSERT_TRUE(v.ok());
    auto answer = module::parse_answer(*v);
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(answer->kind, module::AnswerKind::kUserError);
    const calldata::Value* causes = answer->value.find("causes");
    ASSERT_NE(causes, nullptr);
    ASSERT_EQ(causes->as_array().size(), 1u);
    EXPECT_EQ(causes->as_array()[0].as_string(), "MODULE_USER_ERROR");
  }
  ::close(*fd);
  EXPECT_EQ(stop(m, ModuleType::kWeb), std::optional<bool>(true));
  EXPECT_FALSE(connect_module_socket(path).ok());
}

TEST_F(ManagerModules, AModuleThatRefusesToStartIsAnErrorNamingWhy) {
  ModuleSet m(io, config, log);
  ModuleStartRequest llm;
  llm.type = ModuleType::kLlm;
  llm.config = json(R"({"backends": {}})");
  Status s = start(m, llm);
  ASSERT_FALSE(s.ok());
  // The module's own last line says why (here: a configuration without its templates).
  EXPECT_NE(s.error().message.find("prompt_templates"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("exited with code 1"), std::string::npos) << s.error().message;
  EXPECT_EQ(to_string(m.state(ModuleType::kLlm)), "stopped");

  ModulesConfig missing = config;
  missing.web.binary = "/nonexistent/genvm-module-web";
  ModuleSet n(io, missing, log);
  Status t = start(n, web());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("/nonexistent/genvm-module-web"), std::string::npos) << t.error().message;
}

TEST_F(ManagerModules, AModuleThatDiesIsStopped) {
  ModuleSet m(io, config, log);
  ASSERT_TRUE(start(m, web()).ok());
  pid_t pid = server_pid(m.socket_path(ModuleType::kWeb));
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(m.process_exiting(ModuleType::kWeb));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  // io has not run: the set still shows the module running, but its process is on its way out
  // (SIGKILL pending, exiting, or a zombie), which a node checks before trusting a probe.
  EXPECT_EQ(m.state(ModuleType::kWeb), ModuleState::kRunning);
  EXPECT_TRUE(m.process_exiting(ModuleType::kWeb));
  ASSERT_TRUE(run_until(io, [&] { return m.state(ModuleType::kWeb) == ModuleState::kStopped; }));
  EXPECT_FALSE(m.process_exiting(ModuleType::kWeb));
  EXPECT_FALSE(m.acquire().ok());
  ASSERT_TRUE(start(m, web()).ok()) << "and may be started again";
}

TEST_F(ManagerModules, TheDestructorEndsEveryModule) {
  pid_t pid = -1;
  std::string path;
  {
    ModuleSet m(io, config, log);
    ASSERT_TRUE(start(m, web()).ok());
    path = m.socket_path(ModuleType::kWeb);
    pid = server_pid(path);
  }
  ASSERT_GT(pid, 0);
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace genvm::manager
