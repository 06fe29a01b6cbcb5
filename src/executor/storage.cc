#include "executor/storage.h"

#include <algorithm>
#include <cstring>

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
      return make_error("host_protocol", "storage read returned a wrong number of bytes");
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
  out.reserve(written_.size());
  // written_ is ordered by (slot bytes, page number), which is the documented order.
  for (const auto& [key, page] : written_) {
    StorageDelta d;
    std::copy(key.first.begin(), key.first.end(), d.key.begin());
    std::uint32_t off = key.second * kPageSize;
    for (int i = 0; i < 4; ++i) d.key[kSlotIdSize + i] = static_cast<std::uint8_t>(off >> (8 * i));
    d.value.assign(page.begin(), page.end());
    out.push_back(std::move(d));
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

}  // namespace genvm::executor
