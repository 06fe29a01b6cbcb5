// Runtime: Module::load, Store, runtime objects, Linker::instantiate, Instance accessors.
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdio>

#include "wasm/jit/jit.h"
#include "wasm/runtime.h"

namespace genvm::wasm {

namespace {
constexpr uint64_t kPage = 65536;
constexpr uint64_t kTableElemCost = 64;  // bytes of RAM budget per table element
}  // namespace

const char* val_type_name(ValType t) {
  switch (t) {
    case ValType::I32: return "i32";
    case ValType::I64: return "i64";
    case ValType::F32: return "f32";
    case ValType::F64: return "f64";
    case ValType::V128: return "v128";
    case ValType::FuncRef: return "funcref";
    case ValType::ExternRef: return "externref";
  }
  return "?";
}

std::string FuncType::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < params.size(); ++i) s += (i ? " " : "") + std::string(val_type_name(params[i]));
  s += "] -> [";
  for (size_t i = 0; i < results.size(); ++i) s += (i ? " " : "") + std::string(val_type_name(results[i]));
  return s + "]";
}

const char* trap_kind_name(TrapKind k) {
  switch (k) {
    case TrapKind::kUnreachable: return "unreachable";
    case TrapKind::kMemoryOutOfBounds: return "memory_out_of_bounds";
    case TrapKind::kTableOutOfBounds: return "table_out_of_bounds";
    case TrapKind::kIndirectCallToNull: return "indirect_call_to_null";
    case TrapKind::kBadSignature: return "bad_signature";
    case TrapKind::kIntegerOverflow: return "integer_overflow";
    case TrapKind::kIntegerDivideByZero: return "integer_divide_by_zero";
    case TrapKind::kBadConversionToInteger: return "bad_conversion_to_integer";
    case TrapKind::kStackOverflow: return "stack_overflow";
    case TrapKind::kOutOfFuel: return "out_of_fuel";
    case TrapKind::kInterrupt: return "interrupt";
    case TrapKind::kNondetInstruction: return "nondet_instruction";
    case TrapKind::kHostExit: return "host_exit";
    case TrapKind::kHostError: return "host_error";
  }
  return "unknown";
}

Value slot_to_value(ValType t, uint64_t bits) {
  switch (t) {
    case ValType::I32:
    case ValType::F32:
      return Value{t, uint32_t(bits), 0};
    default:
      return Value{t, bits, 0};
  }
}

uint64_t reservation_pages(const RamBudget& ram, uint64_t need_pages, uint64_t max_pages, uint64_t own_reserved) {
  // Headroom beyond `need_pages`: what the budget has left, and what its limit leaves once the
  // other live memories' reservations and this need are counted, so a run's reservations
  // together stay within its budget (nested sub-VMs no longer map 4 GiB each).
  uint64_t others = ram.reserved() - std::min(own_reserved, ram.reserved());
  uint64_t taken = others + need_pages * kPage;
  uint64_t free_space = ram.limit() > taken ? ram.limit() - taken : 0;
  uint64_t headroom_pages = std::min(ram.left(), free_space) / kPage;
  return std::min(max_pages, need_pages + headroom_pages);
}

MemInst::~MemInst() {
  if (base && reserved) munmap(base, reserved);
}

// ---------------------------------------------------------------------------------------------
// Module

Module::Module(std::unique_ptr<ModuleImpl> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;
std::span<const uint8_t> Module::bytes() const { return impl_->bytes; }

Result<std::shared_ptr<const Module>> Module::load(std::span<const uint8_t> bytes, const LoadOptions& opts) {
  auto r = read_module(bytes);
  if (!r) return r.take_error();
  std::unique_ptr<ModuleImpl> m = std::move(*r);
  m->options = opts;
  Status v = validate_module(*m);
  if (!v) return v.take_error();
  Status c = compile_functions(*m);
  if (!c) return c.take_error();
  if (opts.engine == Engine::kJit) m->jit_code = jit::compile_module(*m, &m->jit_note);
  return std::shared_ptr<const Module>(std::make_shared<Module>(std::move(m)));
}

std::vector<Module::ImportDesc> Module::imports() const {
  std::vector<ImportDesc> out;
  for (const auto& i : impl_->imports)
    out.push_back({i.module, i.name, i.kind, i.kind == 'f' ? impl_->types[i.func_type] : FuncType{}});
  return out;
}

std::vector<Module::ExportDesc> Module::exports() const {
  std::vector<ExportDesc> out;
  for (const auto& e : impl_->exports) {
    out.push_back({e.name, e.kind, e.kind == 'f' ? impl_->types[impl_->funcs[e.index]] : FuncType{}});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Store

Store::Store(StoreConfig cfg)
    : cfg_(cfg),
      impl_(std::make_unique<Impl>()),
      ram_(cfg_.shared_ram ? cfg_.shared_ram : std::make_shared<RamBudget>(cfg_.ram_budget)) {
  calls_left_ = cfg_.call_stack_limit;
  values_left_ = cfg_.value_stack_limit;
  fuel_ = int64_t(std::min<uint64_t>(cfg_.fuel, uint64_t(INT64_MAX)));
}

// Everything this store charged goes back to the (maybe shared) budget, and so does the
// address space of its memories, which Impl unmaps right after.
Store::~Store() {
  for (const auto& m : impl_->memories) ram_->remove_reserved(m->reserved);
  ram_->release(ram_used_);
}

bool Store::charge_ram(uint64_t bytes) {
  if (!ram_->charge(bytes)) return false;
  ram_used_ += bytes;
  return true;
}

FuncInst* Store::new_host_func(const FuncType& type, HostFunc fn) {
  auto f = std::make_unique<FuncInst>();
  f->type = type;
  f->type_id = canonical_type_id(type);
  f->host = std::move(fn);
  impl_->funcs.push_back(std::move(f));
  return impl_->funcs.back().get();
}

Result<TableInst*> Store::new_table(ValType elem, uint32_t min, std::optional<uint32_t> max) {
  if (!charge_ram(uint64_t(min) * kTableElemCost)) return make_error(InstantiateError::kResourceExhausted, "resource_exhausted", "table exceeds the RAM budget");
  auto t = std::make_unique<TableInst>();
  t->elem = elem;
  t->elems.assign(min, 0);
  t->max = max ? *max : 0xffffffffull;
  impl_->tables.push_back(std::move(t));
  return impl_->tables.back().get();
}

Result<MemInst*> Store::new_memory(uint32_t min_pages, std::optional<uint32_t> max_pages) {
  uint64_t max = max_pages ? *max_pages : 65536;
  if (max > 65536) max = 65536;
  if (min_pages > max) return make_error("invalid", "memory minimum exceeds maximum");
  if (!charge_ram(uint64_t(min_pages) * kPage)) return make_error(InstantiateError::kResourceExhausted, "resource_exhausted", "memory exceeds the RAM budget");
  auto mem = std::make_unique<MemInst>();
  mem->max_pages = max;
  mem->size = uint64_t(min_pages) * kPage;
  mem->reserved = reservation_pages(*ram_, min_pages, max, 0) * kPage;
  if (mem->reserved) {
    void* p = mmap(nullptr, mem->reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      refund_ram(uint64_t(min_pages) * kPage);
      mem->reserved = 0;
      // The host, not the contract, ran out: never the budget refusal (a deterministic result).
      return make_error(InstantiateError::kHostResource, "host_resource",
                        std::string("cannot reserve address space for a memory: ") + std::strerror(errno));
    }
    mem->base = static_cast<uint8_t*>(p);
    ram_->add_reserved(mem->reserved);
  }
  impl_->memories.push_back(std::move(mem));
  return impl_->memories.back().get();
}

GlobalInst* Store::new_global(ValType type, bool mut, Value init) {
  auto g = std::make_unique<GlobalInst>();
  g->type = type;
  g->mut = mut;
  g->bits = init.bits;
  g->hi = init.hi;
  impl_->globals.push_back(std::move(g));
  return impl_->globals.back().get();
}

GrowResult grow_memory(Store& s, MemInst& m, uint64_t delta, uint64_t* old_pages) {
  uint64_t old = m.size / kPage;
  *old_pages = old;
  if (delta == 0) return GrowResult::kGrown;
  if (old + delta > m.max_pages) return GrowResult::kRefused;
  if (!s.charge_ram(delta * kPage)) return GrowResult::kRefused;
  uint64_t want = (old + delta) * kPage;
  if (want > m.reserved) {
    // Past the reservation (other memories of the budget hold the address space): the mapping
    // moves to a new one sized as a fresh memory's would be. The interpreter reloads the base
    // after every memory.grow, so no pointer into the old mapping survives.
    RamBudget& ram = s.ram();
    uint64_t bytes = reservation_pages(ram, old + delta, m.max_pages, m.reserved) * kPage;
    void* p = m.reserved ? mremap(m.base, m.reserved, bytes, MREMAP_MAYMOVE)
                         : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      s.refund_ram(delta * kPage);
      return GrowResult::kHostFault;
    }
    ram.remove_reserved(m.reserved);
    ram.add_reserved(bytes);
    m.base = static_cast<uint8_t*>(p);
    m.reserved = bytes;
  }
  m.size = want;
  return GrowResult::kGrown;
}

bool grow_table(Store& s, TableInst& t, uint64_t delta, uint64_t init, uint64_t* old_size) {
  uint64_t old = t.elems.size();
  *old_size = old;
  if (old + delta > t.max) return false;
  if (!s.charge_ram(delta * kTableElemCost)) return false;
  t.elems.resize(old + delta, init);
  return true;
}

Result<Outcome> Store::call(const Extern& e, std::span<const Value> args) {
  if (e.kind != Extern::kFunc || !e.func) return make_error("not_a_function", "extern is not a function");
  return call(e.func, args);
}

Result<Outcome> Store::call(FuncInst* f, std::span<const Value> args) {
  const FuncType& ft = f->type;
  if (args.size() != ft.params.size())
    return make_error("bad_arguments", "expected " + std::to_string(ft.params.size()) + " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].type != ft.params[i])
      return make_error("bad_arguments", "argument " + std::to_string(i) + " has type " + val_type_name(args[i].type) + ", expected " + val_type_name(ft.params[i]));
  Outcome out;
  if (f->host) {
    std::vector<Value> res(ft.results.size());
    for (size_t k = 0; k < res.size(); ++k) res[k] = Value::zero(ft.results[k]);
    Caller caller(*this, nullptr);
    out.trap = f->host(caller, args, res);
    if (!out.trap) out.values = std::move(res);
    return out;
  }
  if (impl_->running) return make_error("reentrant_call", "calling into a store that is already running is not supported");
  size_t need = size_t(cfg_.value_stack_limit) * 2 + 4096 + ft.params.size() + ft.results.size();
  if (impl_->stack.size() < need) impl_->stack.assign(need, 0);
  for (size_t i = 0; i < args.size(); ++i) impl_->stack[i] = args[i].bits;
  calls_left_ = cfg_.call_stack_limit;
  values_left_ = cfg_.value_stack_limit;
  impl_->running = true;
  out.trap = f->instance->jit ? jit::run(*this, f, jit::StoreAccess{&fuel_, &calls_left_, &values_left_, &interrupt_})
                              : interpret(*this, f);
  impl_->running = false;
  if (!out.trap) {
    for (size_t i = 0; i < ft.results.size(); ++i) out.values.push_back(slot_to_value(ft.results[i], impl_->stack[i]));
  }
  return out;
}

const FuncType& func_type(const FuncInst* f) { return f->type; }

// ---------------------------------------------------------------------------------------------
// Caller

std::span<uint8_t> Caller::memory() {
  if (!inst_ || inst_->impl().memories.empty()) return {};
  MemInst* m = inst_->impl().memories[0];
  return {m->base, size_t(m->size)};
}

bool Caller::read(uint64_t addr, void* out, uint64_t len) {
  auto mem = memory();
  if (addr > mem.size() || len > mem.size() - addr) return false;
  if (len) std::memcpy(out, mem.data() + addr, len);
  return true;
}

bool Caller::write(uint64_t addr, const void* in, uint64_t len) {
  auto mem = memory();
  if (addr > mem.size() || len > mem.size() - addr) return false;
  if (len) std::memcpy(mem.data() + addr, in, len);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Instance

Instance::Instance(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Instance::~Instance() = default;

std::optional<Extern> Instance::get_export(const std::string& name) const {
  for (const auto& e : impl_->m->exports) {
    if (e.name != name) continue;
    Extern x;
    x.kind = Extern::Kind(e.kind);
    switch (e.kind) {
      case 'f': x.func = impl_->funcs[e.index]; break;
      case 't': x.table = impl_->tables[e.index]; break;
      case 'm': x.memory = impl_->memories[e.index]; break;
      case 'g': x.global = impl_->globals[e.index]; break;
    }
    return x;
  }
  return std::nullopt;
}

FuncInst* Instance::get_func(const std::string& name) const {
  auto e = get_export(name);
  return e && e->kind == Extern::kFunc ? e->func : nullptr;
}

std::optional<Value> Instance::get_global(const std::string& name) const {
  auto e = get_export(name);
  if (!e || e->kind != Extern::kGlobal) return std::nullopt;
  return slot_to_value(e->global->type, e->global->bits);
}

Status Instance::set_global(const std::string& name, const Value& v) {
  auto e = get_export(name);
  if (!e || e->kind != Extern::kGlobal) return make_error("unknown_export", name);
  if (!e->global->mut) return make_error("immutable_global", name);
  if (e->global->type != v.type) return make_error("type_mismatch", name);
  e->global->bits = v.bits;
  e->global->hi = v.hi;
  return {};
}

size_t Instance::memory_count() const { return impl_->memories.size(); }

std::span<uint8_t> Instance::memory(size_t index) const {
  if (index >= impl_->memories.size()) return {};
  MemInst* m = impl_->memories[index];
  return {m->base, size_t(m->size)};
}

std::string Instance::name_section_func_name(uint32_t index) const {
  const auto& names = impl_->m->func_names;
  auto it = std::lower_bound(names.begin(), names.end(), index,
                             [](const auto& p, uint32_t i) { return p.first < i; });
  return it != names.end() && it->first == index ? it->second : std::string();
}

std::string Instance::func_name(uint32_t index) const {
  std::string n = name_section_func_name(index);
  return n.empty() ? "func[" + std::to_string(index) + "]" : n;
}

std::string format_backtrace(const std::vector<TrapFrame>& frames) {
  std::string out;
  for (size_t i = 0; i < frames.size(); ++i) {
    const TrapFrame& f = frames[i];
    char off[32];
    std::snprintf(off, sizeof off, "0x%x", f.code_offset);
    out += "  #" + std::to_string(i) + " " + (f.module.empty() ? std::string() : f.module + "!") +
           (f.func_name.empty() ? "func[" + std::to_string(f.func_index) + "]" : f.func_name) +
           " (func " + std::to_string(f.func_index) + ") at offset " + off + "\n";
  }
  return out;
}

std::vector<MemoryView> memories_for_fingerprint(const Store& s) {
  std::vector<MemoryView> out;
  for (const auto& [name, inst] : s.instances()) {
    const auto& mems = inst->impl().memories;
    for (uint32_t i = 0; i < mems.size(); ++i)
      out.push_back({name, i, std::span<const uint8_t>(mems[i]->base, size_t(mems[i]->size))});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Linker

void Linker::define(const std::string& module, const std::string& name, Extern e) { defs_[{module, name}] = e; }

void Linker::define_host(Store& s, const std::string& module, const std::string& name, const FuncType& type, HostFunc fn) {
  Extern e;
  e.kind = Extern::kFunc;
  e.func = s.new_host_func(type, std::move(fn));
  define(module, name, e);
}

void Linker::define_instance(const std::string& module, const Instance& inst) {
  for (const auto& e : inst.impl().m->exports) {
    auto x = inst.get_export(e.name);
    if (x) define(module, e.name, *x);
  }
}

std::optional<Extern> Linker::lookup(const std::string& module, const std::string& name) const {
  auto it = defs_.find({module, name});
  if (it == defs_.end()) return std::nullopt;
  return it->second;
}

namespace {

uint64_t eval_const(const ConstExpr& e, const Instance::Impl& inst) {
  const ConstInstr& ci = e.instrs[0];
  switch (ci.op) {
    case 0x41: case 0x42: case 0x43: case 0x44: return ci.imm;
    case 0xd0: return 0;
    case 0xd2: return reinterpret_cast<uint64_t>(inst.funcs[ci.imm]);
    case 0x23: return inst.globals[ci.imm]->bits;
  }
  return 0;
}

bool limits_match(uint64_t actual_min, std::optional<uint64_t> actual_max, const Limits& want) {
  if (actual_min < want.min) return false;
  if (want.max) {
    if (!actual_max || *actual_max > *want.max) return false;
  }
  return true;
}

}  // namespace

Result<Instance*> Linker::instantiate(Store& s, const std::shared_ptr<const Module>& module, const std::string& name) {
  const ModuleImpl& m = module->impl();
  auto impl = std::make_unique<Instance::Impl>();
  impl->store = &s;
  impl->module = module;
  impl->m = &m;
  impl->code = m.slot_code().data();
  impl->name = name;
  Instance::Impl* ip = impl.get();

  for (const auto& im : m.imports) {
    auto e = lookup(im.module, im.name);
    if (!e) return make_error(InstantiateError::kUnlinkable, "unlinkable", "unknown import " + im.module + "." + im.name);
    if (e->kind != im.kind) return make_error(InstantiateError::kUnlinkable, "unlinkable", "incompatible import type for " + im.module + "." + im.name);
    switch (im.kind) {
      case 'f':
        if (!(e->func->type == m.types[im.func_type]))
          return make_error(InstantiateError::kUnlinkable, "unlinkable", "incompatible import type for " + im.module + "." + im.name + ": expected " +
                                              m.types[im.func_type].to_string() + ", got " + e->func->type.to_string());
        ip->funcs.push_back(e->func);
        break;
      case 't': {
        TableInst* t = e->table;
        std::optional<uint64_t> mx;
        if (t->max != 0xffffffffull) mx = t->max;
        if (t->elem != im.table.elem || !limits_match(t->elems.size(), mx, im.table.limits))
          return make_error(InstantiateError::kUnlinkable, "unlinkable", "incompatible import type for " + im.module + "." + im.name);
        ip->tables.push_back(t);
        break;
      }
      case 'm': {
        MemInst* mem = e->memory;
        std::optional<uint64_t> mx;
        if (mem->max_pages != 65536 || mem->has_declared_max) mx = mem->max_pages;
        if (!limits_match(mem->size / kPage, mx, im.memory.limits))
          return make_error(InstantiateError::kUnlinkable, "unlinkable", "incompatible import type for " + im.module + "." + im.name);
        ip->memories.push_back(mem);
        break;
      }
      case 'g':
        if (e->global->type != im.global.type || e->global->mut != im.global.mut)
          return make_error(InstantiateError::kUnlinkable, "unlinkable", "incompatible import type for " + im.module + "." + im.name);
        ip->globals.push_back(e->global);
        break;
    }
  }
  for (uint32_t i = 0; i < m.compiled.size(); ++i) {
    auto f = std::make_unique<FuncInst>();
    const CompiledFunc& cf = m.compiled[i];
    f->type = m.types[cf.type_index];
    f->type_id = cf.type_id;
    f->instance = ip;
    f->code = &cf;
    f->index = m.num_imported_funcs + i;
    ip->funcs.push_back(f.get());
    s.impl().funcs.push_back(std::move(f));
  }
  for (size_t i = m.num_imported_tables; i < m.tables.size(); ++i) {
    const auto& tt = m.tables[i];
    std::optional<uint32_t> mx;
    if (tt.limits.max) mx = uint32_t(*tt.limits.max);
    auto t = s.new_table(tt.elem, uint32_t(tt.limits.min), mx);
    if (!t) {
      return instantiate_error(t.error()) == InstantiateError::kResourceExhausted
                 ? make_error(InstantiateError::kTableOverBudget, "table_over_budget", t.error().message)
                 : make_error(InstantiateError::kUninstantiable, "uninstantiable", t.error().message);
    }
    ip->tables.push_back(*t);
  }
  for (size_t i = m.num_imported_memories; i < m.memories.size(); ++i) {
    const auto& mt = m.memories[i];
    std::optional<uint32_t> mx;
    if (mt.limits.max) mx = uint32_t(*mt.limits.max);
    auto mem = s.new_memory(uint32_t(mt.limits.min), mx);
    if (!mem) {
      auto why = instantiate_error(mem.error());
      if (why == InstantiateError::kHostResource) return mem.take_error();
      return why == InstantiateError::kResourceExhausted
                 ? make_error(InstantiateError::kMemoryOverBudget, "memory_over_budget", mem.error().message)
                 : make_error(InstantiateError::kUninstantiable, "uninstantiable", mem.error().message);
    }
    (*mem)->has_declared_max = mt.limits.max.has_value();
    ip->memories.push_back(*mem);
  }
  ip->mem0 = ip->memories.empty() ? &s.impl().empty_memory : ip->memories[0];
  for (size_t i = 0; i < m.global_inits.size(); ++i) {
    const GlobalType& gt = m.globals[m.num_imported_globals + i];
    GlobalInst* g = s.new_global(gt.type, gt.mut, Value::zero(gt.type));
    g->bits = eval_const(m.global_inits[i], *ip);
    ip->globals.push_back(g);
  }
  for (const auto& seg : m.elems) {
    std::vector<uint64_t> items;
    items.reserve(seg.items.size());
    for (const auto& it : seg.items) items.push_back(eval_const(it, *ip));
    ip->elems.push_back(std::move(items));
  }
  ip->data_dropped.assign(m.datas.size(), false);
  ip->jit = jit::attach_instance(*ip, m.jit_code);  // before the segments and the start function

  auto instance = std::make_unique<Instance>(std::move(impl));
  ip->self = instance.get();
  Instance* result = instance.get();
  s.impl().instances.push_back(std::move(instance));

  auto trap_error = [](TrapKind k) { return make_error(InstantiateError::kUninstantiable, "uninstantiable", std::string("wasm_trap ") + trap_kind_name(k)); };
  for (size_t i = 0; i < m.elems.size(); ++i) {
    const auto& seg = m.elems[i];
    if (seg.mode == ElemSegment::kActive) {
      uint64_t off = uint32_t(eval_const(seg.offset, *ip));
      TableInst* t = ip->tables[seg.table];
      auto& items = ip->elems[i];
      if (off + items.size() > t->elems.size()) return trap_error(TrapKind::kTableOutOfBounds);
      std::copy(items.begin(), items.end(), t->elems.begin() + off);
    }
    if (seg.mode != ElemSegment::kPassive) ip->elems[i].clear();
  }
  for (size_t i = 0; i < m.datas.size(); ++i) {
    const auto& d = m.datas[i];
    if (!d.active) continue;
    uint64_t off = uint32_t(eval_const(d.offset, *ip));
    MemInst* mem = ip->memories[d.memory];
    if (off + d.bytes.size() > mem->size) return trap_error(TrapKind::kMemoryOutOfBounds);
    if (!d.bytes.empty()) std::memcpy(mem->base + off, d.bytes.data(), d.bytes.size());
    ip->data_dropped[i] = true;
  }
  if (m.start) {
    auto out = s.call(ip->funcs[*m.start], {});
    if (!out) return make_error(InstantiateError::kUninstantiable, "uninstantiable", out.error().message);
    if (out->trap) {
      Error e = make_error(InstantiateError::kUninstantiable, "uninstantiable", out->trap->public_string());
      return e;
    }
  }
  s.instances_.emplace_back(name, result);
  return result;
}

}  // namespace genvm::wasm
