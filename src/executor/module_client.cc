#include "executor/module_client.h"

namespace genvm::executor {

namespace {

// The connection's own failures are the module being gone; everything else is a broken wire.
Error classified(Error e) {
  HostError h = host_error(e);
  bool gone = h == HostError::kIo || h == HostError::kClosed;
  e.errc = static_cast<int>(gone ? ModuleCallError::kGone : ModuleCallError::kBroken);
  return e;
}

Error broken(const Error& e) {
  Error b = e;
  b.errc = static_cast<int>(ModuleCallError::kBroken);
  return b;
}

}  // namespace

Result<HostConnection*> ModuleClient::connection() {
  if (!hello_) return broken(hello_.error());
  if (!conn_) {
    auto c = HostConnection::connect(uri_, {});
    if (!c) return classified(c.take_error());
    conn_ = std::move(*c);
    if (auto s = conn_->write_all(module::frame(calldata::encode(module::hello_value(*hello_)))); !s) {
      return classified(s.error());
    }
  }
  return conn_.get();
}

Result<module::Answer> ModuleClient::call(const calldata::Value& request) {
  if (failed_) return *failed_;
  auto fail = [&](Error e) {
    failed_ = e;
    if (conn_) conn_->poison(e);
    return e;
  };
  auto c = connection();
  if (!c) return fail(c.take_error());
  HostConnection& conn = **c;
  if (auto s = conn.write_all(module::frame(calldata::encode(request))); !s) return fail(classified(s.error()));
  std::uint8_t header[4];
  if (auto s = conn.read_exact(header, 4); !s) return fail(classified(s.error()));
  std::uint32_t n = module::frame_length(header);
  if (n > module::kMaxFrame) {
    return fail(broken(make_error("module_oversized", "answer of " + std::to_string(n) + " bytes")));
  }
  calldata::Bytes body(n);
  if (n) {
    if (auto s = conn.read_exact(body.data(), n); !s) return fail(classified(s.error()));
  }
  auto value = calldata::decode(body);
  if (!value) return fail(broken(make_error("module_protocol", "answer is not calldata: " + value.error().to_string())));
  auto answer = module::parse_answer(*value);
  if (!answer) return fail(broken(answer.error()));
  return answer;
}

}  // namespace genvm::executor
