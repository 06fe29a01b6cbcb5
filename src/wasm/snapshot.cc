// Instance state snapshots (wasm.h, InstanceSnapshot): capture, restore and their byte form.
#include <sys/mman.h>

#include <cstring>

#include "common/blake3.h"
#include "wasm/runtime.h"

namespace genvm::wasm {

namespace {

constexpr uint64_t kPage = 65536;
constexpr char kMagic[8] = {'G', 'V', 'M', 'I', 'S', 'N', 'P', '1'};

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

Error mismatch(std::string why) { return make_error("snapshot_mismatch", std::move(why)); }
Error unsupported(std::string why) { return make_error("snapshot_unsupported", std::move(why)); }

struct Writer {
  std::vector<uint8_t> out;
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i))); }
  void bytes(const uint8_t* p, size_t n) { out.insert(out.end(), p, p + n); }
};

struct Reader {
  std::span<const uint8_t> in;
  size_t pos = 0;
  bool ok = true;
  bool need(uint64_t n) {
    if (!ok || n > in.size() - pos) ok = false;
    return ok;
  }
  uint8_t u8() { return need(1) ? in[pos++] : 0; }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(in[pos++]) << (8 * i);
    return v;
  }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(in[pos++]) << (8 * i);
    return v;
  }
  // A count of items each at least `min_item` bytes long: bounded by what is left.
  uint64_t count(uint64_t min_item) {
    uint64_t n = u32();
    if (ok && n > (in.size() - pos) / min_item) ok = false;
    return ok ? n : 0;
  }
};

std::array<uint8_t, 32> module_hash(const ModuleImpl& m) {
  blake3::Digest d = blake3::hash(std::span<const uint8_t>(m.bytes.data(), m.bytes.size()));
  std::array<uint8_t, 32> out;
  std::copy(d.begin(), d.end(), out.begin());
  return out;
}

// A snapshot whose memory runs point into bytes held elsewhere (the serialized form, say a
// mapped file): restore reads them from there, with no copy between the file and the memory.
struct SnapshotView {
  struct Memory {
    uint64_t pages = 0;
    std::vector<std::pair<uint64_t, std::span<const uint8_t>>> runs;
  };
  std::array<uint8_t, 32> module_blake3{};
  std::vector<Memory> memories;
  std::vector<Value> globals;
  std::vector<std::vector<uint32_t>> tables;
  std::vector<bool> elem_dropped, data_dropped;
};

SnapshotView view_of(const InstanceSnapshot& snap) {
  SnapshotView v;
  v.module_blake3 = snap.module_blake3;
  for (const auto& mem : snap.memories) {
    SnapshotView::Memory vm;
    vm.pages = mem.pages;
    for (const auto& [off, bytes] : mem.runs) vm.runs.emplace_back(off, std::span<const uint8_t>(bytes));
    v.memories.push_back(std::move(vm));
  }
  v.globals = snap.globals;
  v.tables = snap.tables;
  v.elem_dropped = snap.elem_dropped;
  v.data_dropped = snap.data_dropped;
  return v;
}

Result<SnapshotView> parse_view(std::span<const uint8_t> bytes);
Status restore_view(Store& store, Instance& inst, const SnapshotView& snap);

}  // namespace

Result<InstanceSnapshot> capture_instance(const Instance& inst) {
  const Instance::Impl& ip = inst.impl();
  const ModuleImpl& m = *ip.m;
  if (m.num_imported_memories || m.num_imported_tables) return unsupported("the instance imports a memory or a table");
  for (uint32_t i = 0; i < m.num_imported_globals; ++i)
    if (m.globals[i].mut) return unsupported("the instance imports a mutable global");
  InstanceSnapshot snap;
  snap.module_blake3 = module_hash(m);
  for (const MemInst* mem : ip.memories) {
    InstanceSnapshot::Memory sm;
    sm.pages = mem->size / kPage;
    for (uint64_t off = 0; off < mem->size;) {
      if (all_zero(mem->base + off, InstanceSnapshot::kChunk)) {
        off += InstanceSnapshot::kChunk;
        continue;
      }
      uint64_t end = off + InstanceSnapshot::kChunk;
      while (end < mem->size && !all_zero(mem->base + end, InstanceSnapshot::kChunk)) end += InstanceSnapshot::kChunk;
      sm.runs.emplace_back(off, std::vector<uint8_t>(mem->base + off, mem->base + end));
      off = end;
    }
    snap.memories.push_back(std::move(sm));
  }
  for (size_t i = m.num_imported_globals; i < ip.globals.size(); ++i) {
    const GlobalInst* g = ip.globals[i];
    snap.globals.push_back(Value{g->type, g->bits, g->hi});
  }
  for (const TableInst* t : ip.tables) {
    std::vector<uint32_t> elems;
    elems.reserve(t->elems.size());
    for (uint64_t e : t->elems) {
      if (e == 0) {
        elems.push_back(0);
        continue;
      }
      if (t->elem != ValType::FuncRef) return unsupported("an externref table holds a host value");
      auto it = std::find(ip.funcs.begin(), ip.funcs.end(), reinterpret_cast<FuncInst*>(e));
      if (it == ip.funcs.end()) return unsupported("a table holds a function outside the instance's index space");
      elems.push_back(uint32_t(it - ip.funcs.begin()) + 1);
    }
    snap.tables.push_back(std::move(elems));
  }
  for (size_t i = 0; i < m.elems.size(); ++i) snap.elem_dropped.push_back(ip.elems[i].empty() && !m.elems[i].items.empty());
  for (size_t i = 0; i < m.datas.size(); ++i) snap.data_dropped.push_back(ip.data_dropped[i]);
  return snap;
}

Status restore_instance(Store& store, Instance& inst, const InstanceSnapshot& snap) {
  return restore_view(store, inst, view_of(snap));
}

Status restore_instance(Store& store, Instance& inst, std::span<const uint8_t> serialized) {
  auto view = parse_view(serialized);
  if (!view) return view.take_error();
  return restore_view(store, inst, *view);
}

namespace {

Status restore_view(Store& store, Instance& inst, const SnapshotView& snap) {
  Instance::Impl& ip = inst.impl();
  const ModuleImpl& m = *ip.m;
  if (m.num_imported_memories || m.num_imported_tables) return unsupported("the instance imports a memory or a table");
  if (snap.module_blake3 != module_hash(m)) return mismatch("the snapshot is of another module");
  if (snap.memories.size() != ip.memories.size() || snap.globals.size() != ip.globals.size() - m.num_imported_globals ||
      snap.tables.size() != ip.tables.size() || snap.elem_dropped.size() != m.elems.size() ||
      snap.data_dropped.size() != m.datas.size()) {
    return mismatch("the snapshot's shape is not the instance's");
  }
  // Everything is checked before anything changes.
  for (size_t i = 0; i < snap.memories.size(); ++i) {
    const auto& sm = snap.memories[i];
    const MemInst* mem = ip.memories[i];
    if (sm.pages < mem->size / kPage || sm.pages > mem->max_pages) return mismatch("a memory's size does not fit");
    uint64_t prev_end = 0;
    for (const auto& [off, bytes] : sm.runs) {
      if (off < prev_end || bytes.size() > sm.pages * kPage || off > sm.pages * kPage - bytes.size())
        return mismatch("a memory run is outside the memory");
      prev_end = off + bytes.size();
    }
  }
  for (size_t i = 0; i < snap.globals.size(); ++i) {
    const GlobalInst* g = ip.globals[m.num_imported_globals + i];
    if (g->type != snap.globals[i].type) return mismatch("a global's type differs");
    if (!g->mut && (g->bits != snap.globals[i].bits || g->hi != snap.globals[i].hi)) return mismatch("an immutable global differs");
  }
  for (size_t i = 0; i < snap.tables.size(); ++i) {
    const TableInst* t = ip.tables[i];
    if (snap.tables[i].size() < t->elems.size() || snap.tables[i].size() > t->max) return mismatch("a table's size does not fit");
    for (uint32_t e : snap.tables[i])
      if (e > ip.funcs.size() || (e && t->elem != ValType::FuncRef)) return mismatch("a table element is out of range");
  }
  for (size_t i = 0; i < m.elems.size(); ++i)
    if (!snap.elem_dropped[i] && ip.elems[i].empty() && !m.elems[i].items.empty()) return mismatch("an element segment the snapshot has live is dropped");
  for (size_t i = 0; i < m.datas.size(); ++i)
    if (!snap.data_dropped[i] && ip.data_dropped[i]) return mismatch("a data segment the snapshot has live is dropped");

  for (size_t i = 0; i < snap.memories.size(); ++i) {
    const auto& sm = snap.memories[i];
    MemInst& mem = *ip.memories[i];
    uint64_t old_pages = 0;
    switch (grow_memory(store, mem, sm.pages - mem.size / kPage, &old_pages)) {
      case GrowResult::kGrown: break;
      case GrowResult::kRefused: return make_error("snapshot_over_budget", "the snapshot's memory does not fit the RAM budget");
      case GrowResult::kHostFault: return make_error("host_resource", "cannot map the snapshot's memory");
    }
    // Zero what instantiation wrote (data segments): a private anonymous mapping reads zeros
    // after MADV_DONTNEED without touching the pages; then the snapshot's non-zero runs.
    if (mem.size && madvise(mem.base, mem.size, MADV_DONTNEED) != 0) std::memset(mem.base, 0, mem.size);
    for (const auto& [off, bytes] : sm.runs) std::memcpy(mem.base + off, bytes.data(), bytes.size());
  }
  for (size_t i = 0; i < snap.globals.size(); ++i) {
    GlobalInst* g = ip.globals[m.num_imported_globals + i];
    g->bits = snap.globals[i].bits;
    g->hi = snap.globals[i].hi;
  }
  for (size_t i = 0; i < snap.tables.size(); ++i) {
    TableInst& t = *ip.tables[i];
    uint64_t old = 0;
    if (!grow_table(store, t, snap.tables[i].size() - t.elems.size(), 0, &old))
      return make_error("snapshot_over_budget", "the snapshot's table does not fit the RAM budget");
    for (size_t k = 0; k < t.elems.size(); ++k) {
      uint32_t e = snap.tables[i][k];
      t.elems[k] = e ? reinterpret_cast<uint64_t>(ip.funcs[e - 1]) : 0;
    }
  }
  for (size_t i = 0; i < m.elems.size(); ++i)
    if (snap.elem_dropped[i]) ip.elems[i].clear();
  for (size_t i = 0; i < m.datas.size(); ++i) ip.data_dropped[i] = snap.data_dropped[i];
  return {};
}

}  // namespace

std::vector<uint8_t> InstanceSnapshot::serialize() const {
  Writer w;
  w.bytes(reinterpret_cast<const uint8_t*>(kMagic), sizeof kMagic);
  w.bytes(module_blake3.data(), module_blake3.size());
  w.u32(uint32_t(memories.size()));
  for (const Memory& mem : memories) {
    w.u64(mem.pages);
    w.u32(uint32_t(mem.runs.size()));
    for (const auto& [off, bytes] : mem.runs) {
      w.u64(off);
      w.u64(bytes.size());
      w.bytes(bytes.data(), bytes.size());
    }
  }
  w.u32(uint32_t(globals.size()));
  for (const Value& g : globals) {
    w.u8(uint8_t(g.type));
    w.u64(g.bits);
    w.u64(g.hi);
  }
  w.u32(uint32_t(tables.size()));
  for (const auto& t : tables) {
    w.u32(uint32_t(t.size()));
    for (uint32_t e : t) w.u32(e);
  }
  for (const auto* flags : {&elem_dropped, &data_dropped}) {
    w.u32(uint32_t(flags->size()));
    for (bool b : *flags) w.u8(b ? 1 : 0);
  }
  return std::move(w.out);
}

Result<InstanceSnapshot> InstanceSnapshot::parse(std::span<const uint8_t> bytes) {
  auto view = parse_view(bytes);
  if (!view) return view.take_error();
  InstanceSnapshot s;
  s.module_blake3 = view->module_blake3;
  for (auto& vm : view->memories) {
    Memory mem;
    mem.pages = vm.pages;
    for (const auto& [off, run] : vm.runs) mem.runs.emplace_back(off, std::vector<uint8_t>(run.begin(), run.end()));
    s.memories.push_back(std::move(mem));
  }
  s.globals = std::move(view->globals);
  s.tables = std::move(view->tables);
  s.elem_dropped = std::move(view->elem_dropped);
  s.data_dropped = std::move(view->data_dropped);
  return s;
}

namespace {

Result<SnapshotView> parse_view(std::span<const uint8_t> bytes) {
  Reader r{bytes};
  auto bad = [](const char* why) { return make_error("snapshot_malformed", why); };
  if (!r.need(sizeof kMagic) || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return bad("not an instance snapshot");
  r.pos += sizeof kMagic;
  SnapshotView s;
  if (!r.need(32)) return bad("truncated");
  std::memcpy(s.module_blake3.data(), bytes.data() + r.pos, 32);
  r.pos += 32;
  uint64_t nmem = r.count(12);
  for (uint64_t i = 0; i < nmem && r.ok; ++i) {
    SnapshotView::Memory mem;
    mem.pages = r.u64();
    if (mem.pages > 65536) return bad("a memory larger than 4 GiB");
    uint64_t nruns = r.count(16);
    for (uint64_t k = 0; k < nruns && r.ok; ++k) {
      uint64_t off = r.u64(), len = r.u64();
      if (!r.need(len)) break;
      mem.runs.emplace_back(off, bytes.subspan(r.pos, len));
      r.pos += len;
    }
    s.memories.push_back(std::move(mem));
  }
  uint64_t nglob = r.count(17);
  for (uint64_t i = 0; i < nglob && r.ok; ++i) {
    Value v;
    v.type = ValType(r.u8());
    v.bits = r.u64();
    v.hi = r.u64();
    s.globals.push_back(v);
  }
  uint64_t ntab = r.count(4);
  for (uint64_t i = 0; i < ntab && r.ok; ++i) {
    std::vector<uint32_t> t(r.count(4));
    for (uint32_t& e : t) e = r.u32();
    s.tables.push_back(std::move(t));
  }
  for (auto* flags : {&s.elem_dropped, &s.data_dropped}) {
    uint64_t n = r.count(1);
    for (uint64_t i = 0; i < n && r.ok; ++i) flags->push_back(r.u8() != 0);
  }
  if (!r.ok) return bad("truncated");
  if (r.pos != bytes.size()) return bad("trailing bytes");
  return s;
}

}  // namespace

}  // namespace genvm::wasm
