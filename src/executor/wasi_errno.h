// WASI preview 1 errno values and the iovec copy shared by wasi.cc (the contract's WASI) and
// wasi_fs.cc (its read-only file system over a runner plan's files).
#pragma once

#include <cstdint>
#include <span>

#include "wasm/wasm.h"

namespace genvm::executor {

enum : std::int32_t {
  kWasiSuccess = 0,
  kWasiAcces = 2,
  kWasiBadf = 8,
  kWasiFault = 21,
  kWasiInval = 28,
  kWasiIsdir = 31,
  kWasiNametoolong = 37,
  kWasiNoent = 44,
  kWasiNosys = 52,
  kWasiNotsup = 58,
  kWasiOverflow = 61,
  kWasiRofs = 69,
  kWasiSpipe = 70,
};

// Copies `data` from offset `pos` into the guest's `n_iovs` iovecs at `iovs`, in order, until
// either runs out; `copied` is what was copied. Returns kWasiSuccess or kWasiFault (a bad iovec).
std::int32_t copy_to_iovecs(wasm::Caller& c, std::span<const std::uint8_t> data, std::size_t pos,
                            std::uint32_t iovs, std::uint32_t n_iovs, std::uint64_t& copied);

}  // namespace genvm::executor
