// Runner start-up snapshots (docs/PROTOCOLS.md, "Runner start-up snapshot"): the state a
// runner's genvm_preinit left — the instance's (wasm::InstanceSnapshot) and the host's part of
// it — as the sealed file vm_runner.cc keeps beside the compiled-module cache.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "wasm/wasm.h"

namespace genvm::executor {

struct RunnerSnapshot {
  std::uint64_t fuel_used = 0;       // by genvm_preinit (0 when the run is not metered)
  std::uint64_t ram_needed = 0;      // the budget's peak above its use when genvm_preinit began
  std::uint64_t random_counter = 0;  // random_get's counter after it
  std::uint32_t next_fd = 0;         // the next descriptor number after it
  bool stdin_closed = false;
  wasm::InstanceSnapshot instance;
};

// "GVMRSNP1", the host fields little-endian, then the instance's byte form. decode refuses
// ("snapshot_malformed") anything else.
std::vector<std::uint8_t> encode_runner_snapshot(const RunnerSnapshot& s);
Result<RunnerSnapshot> decode_runner_snapshot(std::span<const std::uint8_t> bytes);

// The host fields, and the instance's byte form left where it lies in `bytes` (the mapped file:
// wasm::restore_instance reads the memory image from there, no copy in between). The instance
// part is checked when it is restored (or parsed), not here.
struct RunnerSnapshotView {
  std::uint64_t fuel_used = 0, ram_needed = 0, random_counter = 0;
  std::uint32_t next_fd = 0;
  bool stdin_closed = false;
  std::span<const std::uint8_t> instance;
};
Result<RunnerSnapshotView> decode_runner_snapshot_view(std::span<const std::uint8_t> bytes);

// The file name of a snapshot under its key: lowercase hex of the 32 bytes, ".gvms".
std::string runner_snapshot_file_name(std::span<const std::uint8_t, 32> key);

}  // namespace genvm::executor
