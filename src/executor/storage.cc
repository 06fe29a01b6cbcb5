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

std::uint64_t Storage::next_present(StorageType view, const calldata::Address& address, const SlotId& slot,
                                    std::uint32_t page, bool own) const {
  std::uint64_t next = std::uint64_t(1) << 32;  // none before the end of the slot
  if (own) {
    auto w = written_.lower_bound({slot, page});
    if (w != written_.end() && w->first.first == slot) next = w->first.second;
  }
  CacheKey key{static_cast<std::uint8_t>(view), address.bytes, slot, page};
  auto c = cache_.lower_bound(key);
  if (c != cache_.end() && std::get<0>(c->first) == std::get<0>(key) && std::get<1>(c->first) == address.bytes &&
      std::get<2>(c->first) == slot) {
    next = std::min<std::uint64_t>(next, std::get<3>(c->first));
  }
  return next;
}

Status Storage::read_into(StorageType view, const calldata::Address& address, const SlotId& slot,
                          std::uint32_t index, std::span<std::uint8_t> out, bool with_own_writes) {
  if (auto s = check_range(index, out.size()); !s) return s;
  if (out.empty()) return {};
  bool own = with_own_writes && address == self_ && view == StorageType::kDefault;
  std::uint64_t end = std::uint64_t(index) + out.size();
  // Copies the part of page `p` (whose bytes are `src`) that [index, end) covers.
  auto copy_page = [&](std::uint64_t p, const std::uint8_t* src) {
    std::uint64_t ps = p * kPageSize;
    std::uint64_t from = std::max<std::uint64_t>(ps, index), to = std::min<std::uint64_t>(ps + kPageSize, end);
    std::memcpy(out.data() + (from - index), src + (from - ps), to - from);
  };
  std::uint64_t p = index / kPageSize;
  const std::uint64_t last = (end - 1) / kPageSize;
  std::vector<std::uint8_t> chunk;
  while (p <= last) {
    if (const Page* pg = find(view, address, slot, static_cast<std::uint32_t>(p), own)) {
      copy_page(p, pg->data());
      ++p;
      continue;
    }
    // The longest run of missing pages, at most one host chunk: the host's bytes pass through
    // a buffer of bounded size straight into `out`, so a read costs no copy of its own size.
    std::uint64_t run_end = std::min<std::uint64_t>({last, next_present(view, address, slot, static_cast<std::uint32_t>(p), own) - 1,
                                                     p + kReadChunkPages - 1});
    std::uint64_t bytes = (run_end - p + 1) * kPageSize;
    auto data = reader_.read(view, address, slot, static_cast<std::uint32_t>(p * kPageSize), static_cast<std::uint32_t>(bytes));
    ++host_reads_;
    if (!data) return data.take_error();
    if (data->size() != bytes) {
      return make_error(HostError::kProtocol, "host_protocol", "storage read returned a wrong number of bytes");
    }
    for (std::uint64_t q = p; q <= run_end; ++q) {
      const std::uint8_t* src = data->data() + std::size_t(q - p) * kPageSize;
      copy_page(q, src);
      // The cache is bounded: past kMaxCachedPages reads go to the host again (the host's
      // storage does not change during a run, so this changes no answer).
      if (cache_.size() < kMaxCachedPages) {
        Page pg;
        std::memcpy(pg.data(), src, kPageSize);
        cache_.emplace(CacheKey{static_cast<std::uint8_t>(view), address.bytes, slot, static_cast<std::uint32_t>(q)}, pg);
      }
    }
    p = run_end + 1;
  }
  return {};
}

Result<calldata::Bytes> Storage::read(StorageType view, const calldata::Address& address, const SlotId& slot,
                                      std::uint32_t index, std::uint32_t len, bool with_own_writes) {
  if (auto s = check_range(index, len); !s) return s.take_error();
  calldata::Bytes out(len);
  if (auto s = read_into(view, address, slot, index, out, with_own_writes); !s) return s.take_error();
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
  auto hint = written_.lower_bound({slot, first});
  for (std::uint32_t p = first;; ++p) {
    std::uint64_t ps = std::uint64_t(p) * kPageSize;
    std::uint64_t from = std::max<std::uint64_t>(ps, index);
    std::uint64_t to = std::min<std::uint64_t>(ps + kPageSize, end);
    bool exists = hint != written_.end() && hint->first == WriteKey{slot, p};
    if (!exists) {
      Page pg{};
      // Only an edge page can be partially covered: its other bytes are what a read sees.
      if (to - from != kPageSize) {
        if (auto s = read_into(StorageType::kDefault, self_, slot, static_cast<std::uint32_t>(ps), pg, true); !s) return s;
      }
      hint = written_.emplace_hint(hint, WriteKey{slot, p}, pg);
    }
    std::memcpy(hint->second.data() + (from - ps), data.data() + (from - index), to - from);
    ++hint;
    if (p == last) break;
  }
  return {};
}

namespace {

// Collects the changes of the pages `each` visits in (slot, page) order: a page that directly
// follows the previous page of the same slot extends the last change, else it starts a new one.
// `runs` holds every change's final byte length (from the same walk), so each value is
// allocated once at its size.
template <typename Walk>
std::vector<StorageDelta> collect_changes(const std::vector<std::size_t>& runs, Walk&& each) {
  std::vector<StorageDelta> out;
  out.reserve(runs.size());
  SlotId last_slot{};
  std::uint32_t last_page = 0;
  each([&](const SlotId& slot, std::uint32_t index, const std::array<std::uint8_t, kPageSize>& page) {
    if (!out.empty() && last_slot == slot && index == last_page + 1) {
      out.back().value.insert(out.back().value.end(), page.begin(), page.end());
    } else {
      StorageDelta d;
      std::copy(slot.begin(), slot.end(), d.key.begin());
      for (int i = 0; i < 4; ++i) d.key[kSlotIdSize + i] = static_cast<std::uint8_t>(index >> (8 * (3 - i)));
      d.value.reserve(runs[out.size()]);
      d.value.assign(page.begin(), page.end());
      out.push_back(std::move(d));
    }
    last_slot = slot;
    last_page = index;
  });
  return out;
}

}  // namespace

std::vector<std::size_t> Storage::run_lengths() const {
  // written_ is ordered by (slot bytes, page number), which is the documented order.
  std::vector<std::size_t> runs;
  const WriteKey* last = nullptr;
  for (const auto& entry : written_) {
    const WriteKey& key = entry.first;
    if (last && last->first == key.first && key.second == last->second + 1) {
      runs.back() += kPageSize;
    } else {
      runs.push_back(kPageSize);
    }
    last = &key;
  }
  return runs;
}

std::vector<StorageDelta> Storage::changes() const {
  return collect_changes(run_lengths(), [&](auto&& emit) {
    for (const auto& [key, page] : written_) emit(key.first, key.second, page);
  });
}

std::vector<StorageDelta> Storage::take_changes() {
  cache_.clear();
  // Each page's node is freed as its bytes move into a change, so the overlay and the changes
  // are never both whole in memory.
  return collect_changes(run_lengths(), [&](auto&& emit) {
    while (!written_.empty()) {
      auto node = written_.extract(written_.begin());
      emit(node.key().first, node.key().second, node.mapped());
    }
  });
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
