// Fuzzes every decoder of genvm_eth on the same input: they must return an Error, never crash,
// hang or read out of bounds; and whatever RLP decodes must re-encode to the same octets.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "eth/eth.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace genvm::eth;
  const ByteView in(data, size);
  if (auto r = rlp_decode(in); r.ok()) {
    Bytes again = r->is_list ? rlp_list(r->payload) : rlp_string(r->payload);
    if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
  }
  (void)parse_signed_tx(in);
  (void)decode_submission(in);
  (void)decode_add_transaction(in);
  (void)decode_gen_tx_data(in, size % 2 == 0);
  return 0;
}
