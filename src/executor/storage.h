// Storage: the executor's view of contract storage (spec/04-contract-interface/03-storage.rst).
//
//   Storage st(reader, self_address);
//   auto b = st.read(StorageType::kDefault, self_address, slot, 0, 4);   // via cache
//   st.write(slot, 0, bytes);                                         // buffered
//   std::vector<StorageDelta> d = st.changes();                        // for the result
//
// Every slot is 2^32 bytes, zero where never written. The executor handles storage in pages of
// kPageSize bytes: a read fetches every page it touches that is neither cached nor written, in
// one host call per contiguous run of missing pages (at most 1 MiB each, straight into the
// destination; the cache is bounded); a write is buffered (a partially covered
// page is read first, so its page holds whole, correct bytes). Reads of the run's own contract
// in the default view see the run's buffered writes; other views and other contracts read
// through the cache only. Nothing reaches the host until the result: `changes()` lists the
// written pages ordered by (slot id bytes, page index) as the public executor's storage deltas:
// each run of consecutive written pages of one slot is one change, keyed by the slot id and the
// run's first page index as u32 big-endian (36 bytes), valued by the run's pages.
// `index + len` beyond 2^32 is "storage_overflow"; host failures pass through unchanged.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"
#include "executor/host_client.h"
#include "common/host/protocol.h"

namespace genvm::executor {

// Our choice (the spec names no page size): 32 bytes, the size of a slot id and of a u256, so a
// small field write reports a small delta.
inline constexpr std::uint32_t kPageSize = 32;
inline constexpr std::uint64_t kSlotSize = std::uint64_t(1) << 32;
// Host memory a read costs, whatever its length (docs/PROTOCOLS.md, "Memory model of a run"):
// pages come from the host at most kReadChunkPages at a time (1 MiB), and at most
// kMaxCachedPages pages read are kept (about 3 MiB of host memory with the map's nodes).
inline constexpr std::uint64_t kReadChunkPages = (std::uint64_t(1) << 20) / kPageSize;
inline constexpr std::size_t kMaxCachedPages = 16384;

// Root slot layout (spec storage.rst, constants.rst root_offsets).
inline constexpr SlotId kRootSlot{};
inline constexpr std::uint32_t kRootOffsetMajor = 0;
inline constexpr std::uint32_t kRootOffsetContract = 1;
inline constexpr std::uint32_t kRootOffsetCode = 2;
inline constexpr std::uint32_t kRootOffsetLockedSlots = 3;
inline constexpr std::uint32_t kRootOffsetUpgraders = 4;
inline constexpr std::uint32_t kRootOffsetCodeSlot = 5;        // 32 bytes, inline
inline constexpr std::uint32_t kRootOffsetPermissions = 37;    // 32 bytes, inline, u256 LE
inline constexpr std::uint32_t kRootReservedFrom = 69;
// storage.rst: "bit n corresponds to the permission whose value is n"; constants.rst gives
// can_use_balance_for_message_fees the value 1, so it is bit 1 (the public executor reads the
// bit by the permission's value; the storage text's "currently only bit 0" contradicts both).
inline constexpr std::uint32_t kPermissionBitCanUseBalanceForMessageFees = 1;
// Top limits on the lists the root slot points at.
inline constexpr std::uint32_t kMaxLockedSlots = 256;
inline constexpr std::uint32_t kMaxUpgraders = 32;

// The default derivation: the slot holding the indirected content of the field at `offset` of
// `slot`, sha3_256(slot || offset as u32 little-endian).
SlotId indirection_slot(const SlotId& slot, std::uint32_t offset);

struct StorageDelta {
  std::array<std::uint8_t, kSlotIdSize + 4> key;  // slot id || page byte offset (u32 LE)
  calldata::Bytes value;                          // kPageSize bytes
  friend bool operator==(const StorageDelta&, const StorageDelta&) = default;
};

// Where pages come from. The production one is the host (HostStorageReader).
class StorageReader {
 public:
  virtual ~StorageReader() = default;
  virtual Result<calldata::Bytes> read(StorageType view, const calldata::Address& address,
                                       const SlotId& slot, std::uint32_t index, std::uint32_t len) = 0;
};

class HostStorageReader : public StorageReader {
 public:
  explicit HostStorageReader(HostClient& host) : host_(host) {}
  Result<calldata::Bytes> read(StorageType view, const calldata::Address& address, const SlotId& slot,
                               std::uint32_t index, std::uint32_t len) override {
    return host_.storage_read(view, address, slot, index, len);
  }

 private:
  HostClient& host_;
};

class Storage {
 public:
  Storage(StorageReader& reader, calldata::Address self) : reader_(reader), self_(self) {}

  // `with_own_writes` false: a read-only child's view, which never sees this run's writes even
  // for the same contract.
  Status read_into(StorageType view, const calldata::Address& address, const SlotId& slot, std::uint32_t index,
                   std::span<std::uint8_t> out, bool with_own_writes = true);
  Result<calldata::Bytes> read(StorageType view, const calldata::Address& address, const SlotId& slot,
                               std::uint32_t index, std::uint32_t len, bool with_own_writes = true);
  // Writes to the run's own contract.
  Status write(const SlotId& slot, std::uint32_t index, std::span<const std::uint8_t> data);

  std::vector<StorageDelta> changes() const;
  // The same, emptying the run's writes (and the cache) as it goes: what a finished run reports.
  std::vector<StorageDelta> take_changes();
  // How many kPageSize regions of [index, index + len) of `slot` this run has not written yet:
  // what a write there costs in RAM (spec 03-ram-limiting.rst, new_storage_page per region).
  std::uint64_t unwritten_pages(const SlotId& slot, std::uint32_t index, std::uint64_t len) const;
  // Pages this run has written (each once), for the storage fee of writes made outside a sub-VM.
  std::size_t written_page_count() const { return written_.size(); }
  // Pages held in memory: written (charged to the run's RAM budget as they are first written)
  // and cached (at most kMaxCachedPages).
  std::size_t page_count() const { return cache_.size() + written_.size(); }
  std::size_t host_reads() const { return host_reads_; }

  // Root-slot helpers over read(): the inline u256 permission bits and the ABI major byte.
  Result<bool> can_use_balance_for_message_fees();
  Result<std::uint8_t> abi_major();

 private:
  using Page = std::array<std::uint8_t, kPageSize>;
  using CacheKey = std::tuple<std::uint8_t, std::array<std::uint8_t, 20>, SlotId, std::uint32_t>;
  using WriteKey = std::pair<SlotId, std::uint32_t>;
  // The byte length of each change changes() reports, in order.
  std::vector<std::size_t> run_lengths() const;

  // The first page >= `page` of `slot` that is written (own) or cached; 2^32 when none is.
  std::uint64_t next_present(StorageType view, const calldata::Address& address, const SlotId& slot,
                             std::uint32_t page, bool own) const;
  const Page* find(StorageType view, const calldata::Address& address, const SlotId& slot,
                   std::uint32_t page, bool own) const;

  StorageReader& reader_;
  calldata::Address self_;
  std::map<CacheKey, Page> cache_;
  std::map<WriteKey, Page> written_;
  std::size_t host_reads_ = 0;
};

// The contract code stored for `address` in storage view `state`: the root slot's code_slot if
// non-zero, else the default-derived `code` slot; each holds `u32 LE length ‖ bytes`.
Result<calldata::Bytes> read_contract_code(Storage& storage, const calldata::Address& address,
                                           StorageType state, bool with_own_writes = true);
// Storage writes a deployment makes: the code into the `code` slot and the ABI major byte.
Status write_deployed_code(Storage& storage, const calldata::Bytes& code);

// The root slot's locked_slots (offset 3) and upgraders (offset 4) lists, each stored at its
// default-derived slot as `u32 LE count ‖ items` (32-byte slot ids, 20-byte addresses). A count
// above the top limit (256 slots, 32 upgraders) is `out_of locked_slots` / `out_of upgraders`.
struct WriteProtection {
  std::vector<SlotId> locked_slots;
  std::vector<calldata::Address> upgraders;
};
Result<WriteProtection> read_write_protection(Storage& storage, const calldata::Address& address);

}  // namespace genvm::executor
