// The executor integration fixture: the real `genvm` binary run against an in-process TestHost
// over a unix socket, shared by every *_test.cc of tests/executor.
//
//   class MyTest : public exec_test::ExecutorTest {};      // one fixture class per test suite
//   deploy("counter.wasm", addr(1));
//   RunResult r = run(data(addr(1), addr(0xaa), call("increment"), false, std::nullopt));
//   r.report / r.result_bytes                              // what consume_result delivered
//
// run() applies a Returned result's storage changes to the host the way a node would (pass
// apply=false to leave the host untouched, e.g. to repeat one run). Every temporary file lives in
// one mkdtemp folder that TearDown removes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/calldata.h"
#include "common/host/execution_data.h"
#include "common/vm_error.h"
#include "executor/storage.h"
#include "test_host.h"

namespace genvm::calldata {
// Readable failures: gtest prints values in calldata's text form.
inline void PrintTo(const Value& v, std::ostream* os) { *os << to_text(v); }
}  // namespace genvm::calldata

namespace genvm::exec_test {

using calldata::Value;
using test_host::TestHost;

inline calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

inline std::string binary_dir() {
  const char* env = std::getenv("GENVM_BINARY_DIR");
  return env ? env : GENVM_BINARY_DIR;
}

inline calldata::Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return calldata::Bytes(std::istreambuf_iterator<char>(f), {});
}

inline void write_file(const std::string& path, const calldata::Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::string hex(std::span<const std::uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (auto c : b) {
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

// A consume_result payload: the outer ResultCode byte, then the reported-result map whose
// "kind" must agree with it (impl-spec manager-socket.rst, "consumed_result").
inline Result<Value> decode_consumed(const calldata::Bytes& wire) {
  if (wire.empty()) return make_error("consumed_result", "empty");
  auto v = calldata::decode(std::span<const std::uint8_t>(wire.data() + 1, wire.size() - 1));
  if (!v) return v;
  const Value* kind = v->is_map() ? v->find("kind") : nullptr;
  auto code = kind && kind->is_string() ? parse_result_code_name(kind->as_string())
                                        : Result<ResultCode>(make_error("consumed_result", "kind is not a name"));
  if (!code || static_cast<std::uint8_t>(*code) != wire[0]) {
    return make_error("consumed_result", "the outer result code disagrees with kind");
  }
  return v;
}

struct RunResult {
  int exit_code = -1;
  bool signaled = false;
  std::string stderr_text;
  Value report;                 // null when nothing was delivered
  calldata::Bytes result_bytes;  // the consume_result payload, byte for byte (outer code byte first)
  std::uint64_t peak_rss_bytes = 0;  // the genvm process's (wait4 ru_maxrss)
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    genvm_ = binary_dir() + "/tools/genvm/genvm";
    examples_ = binary_dir() + "/examples/";
    contracts_ = binary_dir() + "/tests/executor/";
    if (::access(genvm_.c_str(), X_OK) != 0 || ::access((examples_ + "counter.wasm").c_str(), R_OK) != 0) {
      GTEST_SKIP() << "needs the genvm binary and the example contracts in " << binary_dir()
                   << " (set GENVM_BINARY_DIR)";
    }
    char tmpl[] = "/tmp/genvm-exec-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto uri = host_.listen_unix(dir_ + "/host.sock");
    ASSERT_TRUE(uri.ok());
    uri_ = *uri;
  }
  void TearDown() override {
    host_.stop();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  host::ExecutionData data(const calldata::Address& contract, const calldata::Address& sender, Value entry,
                               bool is_init, std::optional<calldata::Bytes> code) {
    host::ExecutionData d;
    d.calldata = calldata::encode(entry);
    d.message.contract_address = contract;
    d.message.sender_address = sender;
    d.message.origin_address = sender;
    d.message.signer_address = sender;
    d.message.chain_id = BigInt(61999);
    d.message.is_init = is_init;
    d.message.datetime = std::string(host::kDefaultDatetime);
    d.code = std::move(code);
    // Every run needs the fee data the default rules read (docs/PROTOCOLS.md, ### Fees).
    host::HostFees fees = host::local_host_fees(*BigInt::parse_decimal(kFeeBucketTotal));
    d.bucket_totals = std::move(fees.bucket_totals);
    d.gas_data = std::move(fees.gas_data);
    d.message_fee_allocation = std::move(fees.message_fee_allocation);
    return d;
  }
  static constexpr const char* kFeeBucketTotal = "1000000000000000000";

  // Forks and execs genvm with `args` (after argv[0]), stderr to a file; waits.
  RunResult exec_genvm(const std::vector<std::string>& args_in) {
    std::vector<std::string> args = {genvm_};
    args.insert(args.end(), args_in.begin(), args_in.end());
    RunResult out;
    std::string err = dir_ + "/stderr.txt";
    pid_t pid = ::fork();
    if (pid == 0) {
      FILE* f = std::freopen(err.c_str(), "w", stderr);
      (void)f;
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    out.peak_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
    out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    out.signaled = WIFSIGNALED(status);
    auto text = read_file(err);
    out.stderr_text.assign(text.begin(), text.end());
    return out;
  }

  // Runs genvm on `d`; returns the delivered report (and, when `apply`, applies its storage
  // changes to the contract's storage if it Returned).
  RunResult run(const host::ExecutionData& d, const std::string& permissions = "wscn",
                std::vector<std::string> extra = {}, bool apply = true) {
    write_file(dir_ + "/data.bin", calldata::encode(host::execution_data_to_value(d)));
    std::size_t before = host_.with_state([](test_host::State& s) { return s.results.size(); });
    std::vector<std::string> args = {"run", "--execution-data", dir_ + "/data.bin", "--host", uri_,
                                     "--permissions", permissions};
    args.insert(args.end(), extra.begin(), extra.end());
    // consume_result waits for the host's ack, so a delivered result is recorded by now.
    RunResult out = exec_genvm(args);
    auto results = host_.with_state([](test_host::State& s) { return s.results; });
    EXPECT_LE(results.size(), before + 1) << "more than one result delivered by one run";
    if (results.size() > before) {
      out.result_bytes = results.back();
      auto v = decode_consumed(results.back());
      EXPECT_TRUE(v.ok()) << v.error().to_string();
      if (v.ok()) out.report = *v;
    }
    if (apply && out.report.is_map() && *out.report.find("kind") == Value("Return")) {
      host_.with_state([&](test_host::State& s) {
        auto st = test_host::apply_storage_changes(s, d.message.contract_address, *out.report.find("storage_changes"));
        EXPECT_TRUE(st.ok());
        return 0;
      });
    }
    return out;
  }

  Value call(const std::string& method, Value::Array args = {}) {
    Value::Map m{{"", method}};
    if (!args.empty()) m["args"] = Value(std::move(args));
    return Value(std::move(m));
  }

  RunResult deploy_code(const calldata::Bytes& code, const calldata::Address& at, Value entry = Value(Value::Map{})) {
    auto r = run(data(at, addr(0xaa), std::move(entry), true, code));
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_TRUE(r.report.is_map());
    if (r.report.is_map()) {
      EXPECT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
    }
    return r;
  }
  RunResult deploy(const std::string& example, const calldata::Address& at, Value entry = Value(Value::Map{})) {
    return deploy_code(read_file(examples_ + example), at, std::move(entry));
  }

  // The public code of a VM error result (the text before " # ").
  static std::string public_code(const RunResult& r) {
    const Value* d = r.report.is_map() ? r.report.find("data") : nullptr;
    if (!d || !d->is_string()) return "<not a VM error>";
    std::string s = d->as_string();
    return s.substr(0, s.find(" # "));
  }

  std::string genvm_, examples_, contracts_, dir_, uri_;
  TestHost host_;
};

}  // namespace genvm::exec_test
