#include "executor/module_client.h"

namespace genvm::executor {

Result<HostConnection*> ModuleClient::connection() {
  if (!hello_) return hello_.error();
  if (!conn_) {
    auto c = HostConnection::connect(uri_, {});
    if (!c) return c.take_error();
    conn_ = std::move(*c);
    if (auto s = conn_->write_all(module::frame(calldata::encode(module::hello_value(*hello_)))); !s) {
      conn_->poison(s.error());
    }
  }
  if (conn_->poisoned()) return *conn_->poisoned();
  return conn_.get();
}

Result<module::Answer> ModuleClient::call(const calldata::Value& request) {
  auto c = connection();
  if (!c) return c.take_error();
  HostConnection& conn = **c;
  auto fail = [&](Error e) {
    conn.poison(e);
    return e;
  };
  if (auto s = conn.write_all(module::frame(calldata::encode(request))); !s) return fail(s.error());
  std::uint8_t header[4];
  if (auto s = conn.read_exact(header, 4); !s) return fail(s.error());
  std::uint32_t n = module::frame_length(header);
  if (n > module::kMaxFrame) return fail(make_error("module_oversized", "answer of " + std::to_string(n) + " bytes"));
  calldata::Bytes body(n);
  if (n) {
    if (auto s = conn.read_exact(body.data(), n); !s) return fail(s.error());
  }
  auto value = calldata::decode(body);
  if (!value) return fail(make_error("module_protocol", "answer is not calldata: " + value.error().to_string()));
  auto answer = module::parse_answer(*value);
  if (!answer) return fail(answer.take_error());
  return answer;
}

}  // namespace genvm::executor
