#include "executor/storage.h"

#include <algorithm>
#include <cstring>

#include "common/vm_error.h"
#include "executor/sha3.h"

namespace genvm::executor {

SlotId indirection_slot(const SlotId& slot, std::uint32_t offset) {
  Sha3Hasher h;
  h.update(slot);
  std::uint8_t le[4];
  for (int i = 0; i < 4; ++i) le[i] = static_cast<std::uint8_t>(offset >> (8 * i));
  h.update(le);
  return h.digest();
}

namespace {

Status check_range(std::uint32_t index, std::uint64_t len) {
  if (std::uint64_t(index) + len > kSlotSize) {
    return make_error("storage_overflow", "index + length runs past the end of the 4 GiB slot");
  }
  return {};
}

}  // namespace

const Storage::Page* Storage::find(StorageType view, const calldata::Address& address, const SlotId& slot,
                                   std::uint32_t page, bool own) const {
  if (own) {
    auto w = written_.find({slot, page});
    if (w != written_.end()) return &w->second;
  }
  auto c = cache_.find({static_cast<std::uint8_t>(view), address.bytes, slot, page});
  return c == cache_.end() ? nullptr : &c->second;
}

Status Storage::fetch(StorageType view, const calldata::Address& address, const SlotId& slot,
                      std::uint32_t first, std::uint32_t last, bool own) {
  std::uint32_t p = first;
  for (;;) {
    // Skip pages already present, then take the longest run of missing ones.
    while (find(view, address, slot, p, own)) {
      if (p == last) return {};
      ++p;
    }
    std::uint32_t run_end = p;
    while (run_end < last && !find(view, address, slot, run_end + 1, own)) ++run_end;
    std::uint64_t bytes = (std::uint64_t(run_end) - p + 1) * kPageSize;
    // A run covers at most the whole slot; its byte length fits u32 except for exactly 4 GiB,
    // which is split in two.
    if (bytes > 0xffffffffu) {
      run_end = p + static_cast<std::uint32_t>((std::uint64_t(1) << 31) / kPageSize) - 1;
      bytes = (std::uint64_t(run_end) - p + 1) * kPageSize;
    }
    auto data = reader_.read(view, address, slot, p * kPageSize, static_cast<std::uint32_t>(bytes));
    ++host_reads_;
    if (!data) return data.take_error();
    if (data->size() != bytes) {
      return make_error(HostError::kProtocol, "host_protocol", "storage read returned a wrong number of bytes");
    }
    for (std::uint32_t q = p; q <= run_end; ++q) {
      Page pg;
      std::memcpy(pg.data(), data->data() + std::size_t(q - p) * kPageSize, kPageSize);
      cache_.emplace(CacheKey{static_cast<std::uint8_t>(view), address.bytes, slot, q}, pg);
    }
    if (run_end == last) return {};
    p = run_end + 1;
  }
}

Result<calldata::Bytes> Storage::read(StorageType view, const calldata::Address& address, const SlotId& slot,
                                      std::uint32_t index, std::uint32_t len, bool with_own_writes) {
  if (auto s = check_range(index, len); !s) return s.take_error();
  calldata::Bytes out(len);
  if (len == 0) return out;
  bool own = with_own_writes && address == self_ && view == StorageType::kDefault;
  std::uint32_t first = index / kPageSize;
  std::uint32_t last = static_cast<std::uint32_t>((std::uint64_t(index) + len - 1) / kPageSize);
  if (auto s = fetch(view, address, slot, first, last, own); !s) return s.take_error();
  for (std::uint32_t p = first;; ++p) {
    const Page* pg = find(view, address, slot, p, own);
    std::uint64_t page_start = std::uint64_t(p) * kPageSize;
    std::uint64_t from = std::max<std::uint64_t>(page_start, index);
    std::uint64_t to = std::min<std::uint64_t>(page_start + kPageSize, std::uint64_t(index) + len);
    std::memcpy(out.data() + (from - index), pg->data() + (from - page_start), to - from);
    if (p == last) break;
  }
  return out;
}

std::uint64_t Storage::unwritten_pages(const SlotId& slot, std::uint32_t index, std::uint64_t len) const {
  if (len == 0) return 0;
  std::uint64_t first = index / kPageSize;
  std::uint64_t last = (std::uint64_t(index) + len - 1) / kPageSize;
  std::uint64_t n = last - first + 1;
  // Written pages of this slot inside the range, found by one ordered walk of the map.
  for (auto it = written_.lower_bound({slot, static_cast<std::uint32_t>(first)});
       it != written_.end() && it->first.first == slot && it->first.second <= last; ++it) {
    --n;
  }
  return n;
}

Status Storage::write(const SlotId& slot, std::uint32_t index, std::span<const std::uint8_t> data) {
  if (auto s = check_range(index, data.size()); !s) return s;
  if (data.empty()) return {};
  std::uint64_t end = std::uint64_t(index) + data.size();
  std::uint32_t first = index / kPageSize;
  std::uint32_t last = static_cast<std::uint32_t>((end - 1) / kPageSize);
  // Only the edge pages can be partially covered; fetch those that are.
  auto need = [&](std::uint32_t p) -> Status {
    std::uint64_t ps = std::uint64_t(p) * kPageSize;
    bool partial = index > ps || end < ps + kPageSize;
    if (!partial || written_.count({slot, p})) return {};
    if (auto s = fetch(StorageType::kDefault, self_, slot, p, p, true); !s) return s;
    return {};
  };
  if (auto s = need(first); !s) return s;
  if (last != first) {
    if (auto s = need(last); !s) return s;
  }
  for (std::uint32_t p = first;; ++p) {
    Page pg{};
    if (const Page* base = find(StorageType::kDefault, self_, slot, p, true)) pg = *base;
    std::uint64_t ps = std::uint64_t(p) * kPageSize;
    std::uint64_t from = std::max<std::uint64_t>(ps, index);
    std::uint64_t to = std::min<std::uint64_t>(ps + kPageSize, end);
    std::memcpy(pg.data() + (from - ps), data.data() + (from - index), to - from);
    written_[{slot, p}] = pg;
    if (p == last) break;
  }
  return {};
}

std::vector<StorageDelta> Storage::changes() const {
  std::vector<StorageDelta> out;
  // written_ is ordered by (slot bytes, page number), which is the documented order. A page
  // that directly follows the previous written page of the same slot extends that delta.
  const SlotId* last_slot = nullptr;
  std::uint32_t last_page = 0;
  for (const auto& [key, page] : written_) {
    if (last_slot && *last_slot == key.first && key.second == last_page + 1) {
      out.back().value.insert(out.back().value.end(), page.begin(), page.end());
    } else {
      StorageDelta d;
      std::copy(key.first.begin(), key.first.end(), d.key.begin());
      for (int i = 0; i < 4; ++i) d.key[kSlotIdSize + i] = static_cast<std::uint8_t>(key.second >> (8 * (3 - i)));
      d.value.assign(page.begin(), page.end());
      out.push_back(std::move(d));
    }
    last_slot = &key.first;
    last_page = key.second;
  }
  return out;
}

Result<bool> Storage::can_use_balance_for_message_fees() {
  auto b = read(StorageType::kDefault, self_, kRootSlot, kRootOffsetPermissions, 32);
  if (!b) return b.take_error();
  std::uint32_t bit = kPermissionBitCanUseBalanceForMessageFees;
  return ((*b)[bit / 8] >> (bit % 8) & 1) != 0;
}

Result<std::uint8_t> Storage::abi_major() {
  auto b = read(StorageType::kDefault, self_, kRootSlot, kRootOffsetMajor, 1);
  if (!b) return b.take_error();
  return (*b)[0];
}

Result<calldata::Bytes> read_contract_code(Storage& storage, const calldata::Address& address, StorageType state,
                                           bool with_own_writes) {
  auto code_slot_bytes = storage.read(state, address, kRootSlot, kRootOffsetCodeSlot, kSlotIdSize, with_own_writes);
  if (!code_slot_bytes) return code_slot_bytes.take_error();
  SlotId slot{};
  std::copy(code_slot_bytes->begin(), code_slot_bytes->end(), slot.begin());
  if (slot == SlotId{}) slot = indirection_slot(kRootSlot, kRootOffsetCode);
  auto len_le = storage.read(state, address, slot, 0, 4, with_own_writes);
  if (!len_le) return len_le.take_error();
  std::uint32_t len = std::uint32_t((*len_le)[0]) | std::uint32_t((*len_le)[1]) << 8 |
                      std::uint32_t((*len_le)[2]) << 16 | std::uint32_t((*len_le)[3]) << 24;
  if (std::uint64_t(len) + 4 > kSlotSize) return make_error("storage_overflow", "stored code length too large");
  return storage.read(state, address, slot, 4, len, with_own_writes);
}

Status write_deployed_code(Storage& storage, const calldata::Bytes& code) {
  if (code.size() + 4 > kSlotSize) return make_error("storage_overflow", "code too large");
  calldata::Bytes blob(4 + code.size());
  auto n = static_cast<std::uint32_t>(code.size());
  for (int i = 0; i < 4; ++i) blob[i] = static_cast<std::uint8_t>(n >> (8 * i));
  std::copy(code.begin(), code.end(), blob.begin() + 4);
  if (auto s = storage.write(indirection_slot(kRootSlot, kRootOffsetCode), 0, blob); !s) return s;
  std::uint8_t major = kCurrentMajor;
  return storage.write(kRootSlot, kRootOffsetMajor, std::span<const std::uint8_t>(&major, 1));
}


Result<WriteProtection> read_write_protection(Storage& storage, const calldata::Address& address) {
  WriteProtection out;
  auto list = [&](std::uint32_t offset, std::size_t item, std::uint32_t limit,
                  VmErrorCode too_many) -> Result<calldata::Bytes> {
    SlotId slot = indirection_slot(kRootSlot, offset);
    auto n_le = storage.read(StorageType::kDefault, address, slot, 0, 4);
    if (!n_le) return n_le.take_error();
    std::uint32_t n = std::uint32_t((*n_le)[0]) | std::uint32_t((*n_le)[1]) << 8 |
                      std::uint32_t((*n_le)[2]) << 16 | std::uint32_t((*n_le)[3]) << 24;
    if (n > limit) return make_error(std::string(too_many.wire_code()), "the root slot lists " + std::to_string(n));
    return storage.read(StorageType::kDefault, address, slot, 4, static_cast<std::uint32_t>(n * item));
  };
  auto locked = list(kRootOffsetLockedSlots, kSlotIdSize, kMaxLockedSlots, VmError::out_of().locked_slots());
  if (!locked) return locked.take_error();
  for (std::size_t i = 0; i + kSlotIdSize <= locked->size(); i += kSlotIdSize) {
    SlotId s;
    std::copy(locked->begin() + static_cast<std::ptrdiff_t>(i), locked->begin() + static_cast<std::ptrdiff_t>(i + kSlotIdSize), s.begin());
    out.locked_slots.push_back(s);
  }
  auto ups = list(kRootOffsetUpgraders, kAddressSize, kMaxUpgraders, VmError::out_of().upgraders());
  if (!ups) return ups.take_error();
  for (std::size_t i = 0; i + kAddressSize <= ups->size(); i += kAddressSize) {
    calldata::Address a;
    std::copy(ups->begin() + static_cast<std::ptrdiff_t>(i), ups->begin() + static_cast<std::ptrdiff_t>(i + kAddressSize), a.bytes.begin());
    out.upgraders.push_back(a);
  }
  return out;
}


}  // namespace genvm::executor
