// libFuzzer: a host that answers arbitrary bytes. The first input byte picks the sequence of
// methods; the rest is everything the "host" sends. Every call must end in a value (no crash, no
// hang: the peer is shut for writing, so reads end at EOF).
#include <cstdint>
#include <cstdlib>
#include <memory>

#include <sys/socket.h>
#include <unistd.h>

#include "executor/host_client.h"

using namespace genvm::executor;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
  // The whole answer fits the socket buffer for these sizes; then EOF.
  std::size_t off = 0;
  while (off + 1 < size) {
    ssize_t n = ::write(sv[0], data + 1 + off, size - 1 - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  ::shutdown(sv[0], SHUT_WR);
  std::vector<std::unique_ptr<HostConnection>> conns;
  conns.push_back(std::make_unique<HostConnection>(sv[1]));
  auto c = HostClient::from_connections(std::move(conns), {}, HostLimits{.max_slice = 1 << 16});
  if (!c) std::abort();
  genvm::calldata::Address a;
  SlotId slot{};
  for (int i = 0; i < 4; ++i) {
    switch ((data[0] >> (2 * i)) & 3) {
      case 0: (void)(*c)->storage_read(StorageType::kDefault, a, slot, 0, 40); break;
      case 1: (void)(*c)->eth_call(a, std::vector<std::uint8_t>{1}); break;
      case 2: (void)(*c)->resolve_callcontract_executor(a, StorageType::kDefault, 0); break;
      case 3: (void)(*c)->run_nested(genvm::calldata::Value()); break;
    }
  }
  (void)(*c)->get_balance(a);
  (void)(*c)->consume_result(std::vector<std::uint8_t>{0});
  ::close(sv[0]);
  return 0;
}
