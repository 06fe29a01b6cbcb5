#include "executor/module_client.h"

namespace genvm::executor {

Result<calldata::Bytes> module_call(const std::string& uri, std::unique_ptr<HostConnection>& conn,
                                    const calldata::Bytes& request) {
  static constexpr std::uint32_t kMaxModuleFrame = 64u << 20;
  if (!conn) {
    auto c = HostConnection::connect(uri, {});
    if (!c) return c.take_error();
    conn = std::move(*c);
  }
  if (conn->poisoned()) return *conn->poisoned();
  auto fail = [&](Error e) {
    conn->poison(e);
    return e;
  };
  std::uint32_t n = static_cast<std::uint32_t>(request.size());
  std::uint8_t len[4] = {std::uint8_t(n >> 24), std::uint8_t(n >> 16), std::uint8_t(n >> 8), std::uint8_t(n)};
  if (auto s = conn->write_all(len); !s) return fail(s.error());
  if (auto s = conn->write_all(request); !s) return fail(s.error());
  if (auto s = conn->read_exact(len, 4); !s) return fail(s.error());
  std::uint32_t m = std::uint32_t(len[0]) << 24 | std::uint32_t(len[1]) << 16 | std::uint32_t(len[2]) << 8 | len[3];
  if (m > kMaxModuleFrame) return fail(make_error("module_oversized", "answer of " + std::to_string(m) + " bytes"));
  calldata::Bytes answer(m);
  if (m) {
    if (auto s = conn->read_exact(answer.data(), m); !s) return fail(s.error());
  }
  if (!calldata::decode(answer)) return fail(make_error("module_protocol", "answer is not calldata"));
  return answer;
}

}  // namespace genvm::executor
