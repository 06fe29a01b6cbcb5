// The JIT's runtime: executable memory, the entry trampoline, the helpers generated code calls
// (host calls, traps, stack overflow, memory.grow), backtraces from the native stack, and run().
#define XBYAK_NO_EXCEPTION
#include <xbyak/xbyak.h>

#include <pthread.h>
// glibc's CPU table header declares its functions with C's _Bool, which GCC accepts in C++ and
// clang does not: clang builds (the fuzzers) read cpuid instead.
#if __has_include(<sys/platform/x86.h>) && !defined(__clang__)
#define GENVM_JIT_GLIBC_CPU_TABLE 1
#include <sys/platform/x86.h>
#else
#define GENVM_JIT_GLIBC_CPU_TABLE 0
#include <cpuid.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "wasm/jit/abi.h"

namespace genvm::wasm::jit {

// Read from the table glibc's loader filled at start-up (<sys/platform/x86.h>) where there is
// one, else from four cpuid leaves; never xbyak's Cpu, which reads some twenty: under a
// hypervisor each cpuid is a VM exit of several microseconds, and xbyak's query was most of
// the JIT's fixed cost per process (~0.1 ms).
bool cpu_supports_jit() {
  static const bool ok = [] {
#if GENVM_JIT_GLIBC_CPU_TABLE
    return CPU_FEATURE_PRESENT(SSE4_1) && CPU_FEATURE_PRESENT(POPCNT) && CPU_FEATURE_PRESENT(BMI1) &&
           CPU_FEATURE_PRESENT(LZCNT);
#else
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    __cpuid(0, eax, ebx, ecx, edx);
    if (eax < 7) return false;  // BMI1 is reported in leaf 7
    __cpuid(1, eax, ebx, ecx, edx);
    const bool sse41 = ecx & (1u << 19), popcnt = ecx & (1u << 23);
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const bool bmi1 = ebx & (1u << 3);
    // Leaf 0x80000001 exists on every x86-64 CPU (it reports long mode).
    __cpuid(0x80000001, eax, ebx, ecx, edx);
    const bool lzcnt = ecx & (1u << 5);
    return sse41 && popcnt && bmi1 && lzcnt;
#endif
  }();
  return ok;
}

// ---- executable memory (W^X: written while read-write, then read+execute) ----

std::unique_ptr<CodeBuffer> CodeBuffer::make(const uint8_t* bytes, size_t size) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + page - 1) / page * page;
  if (mapped == 0) return nullptr;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::memcpy(p, bytes, size);
  if (mprotect(p, mapped, PROT_READ | PROT_EXEC) != 0) {
    munmap(p, mapped);
    return nullptr;
  }
  return std::unique_ptr<CodeBuffer>(new CodeBuffer(static_cast<uint8_t*>(p), size, mapped));
}

std::unique_ptr<CodeBuffer> CodeBuffer::map_file(int fd, uint64_t offset, size_t size) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + page - 1) / page * page;
  if (mapped == 0 || offset % page != 0 || offset > uint64_t(INT64_MAX)) {
    errno = EINVAL;
    return nullptr;
  }
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off_t(offset));
  if (p == MAP_FAILED) return nullptr;
  return std::unique_ptr<CodeBuffer>(new CodeBuffer(static_cast<uint8_t*>(p), size, mapped, true));
}

std::unique_ptr<CodeBuffer> CodeBuffer::seal(uint8_t* mapping, size_t size, size_t mapped) {
  if (size == 0 || size > mapped) {
    if (mapped) munmap(mapping, mapped);
    return nullptr;
  }
  // The whole mapping, tail included: one call on one VMA (unmapping the tail would split it,
  // which cost as much as the protection change); pages past the code that were never written
  // take no memory.
  if (mprotect(mapping, mapped, PROT_READ | PROT_EXEC) != 0) {
    munmap(mapping, mapped);
    return nullptr;
  }
  return std::unique_ptr<CodeBuffer>(new CodeBuffer(mapping, size, mapped));
}

CodeBuffer::~CodeBuffer() { munmap(base_, mapped_); }

// ---- code from the compiled-module cache ----

uint32_t code_abi_fingerprint() {
  // FNV-1a over every offset generated code bakes in: a change to RunCtx, InstanceState,
  // CallTarget or MemInst moves one, and blobs with the old offsets are refused without a bump.
  static constexpr int kOffsets[] = {
      kCtxFuel, kCtxCallsLeft, kCtxValuesLeft, kCtxInterrupt, kCtxStackEnd, kCtxEntryRsp, kCtxUnwind,
      kCtxCallOut, kCtxIndirect, kCtxPendingTrap, kCtxTrap, kCtxOverflow, kCtxGrow, kCtxBulk, kCtxSegment,
      kStMem0, kStGlobals, kStTargets, kMemBase, kMemSize, kTargetCode, kTargetState, kTargetFunc,
      kTargetCost, kTargetFrameSlots, kTargetSize, int(kNativeFrameBytes)};
  uint32_t h = 2166136261u;
  for (int v : kOffsets) {
    h ^= uint32_t(v);
    h *= 16777619u;
  }
  return h;
}

uint64_t code_digest(const ModuleCode& c) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  };
  mix(c.code->base(), c.code->size());
  mix(c.func_start.data(), c.func_start.size() * sizeof(uint32_t));
  for (const auto& [a, b] : c.call_sites) { mix(&a, 4); mix(&b, 4); }
  for (const auto& [a, b] : c.data_ranges) { mix(&a, 4); mix(&b, 4); }
  return h;
}

Result<std::shared_ptr<const ModuleCode>> code_from_cache(const ModuleImpl& m, ModuleCode parts,
                                                          std::span<const uint8_t> bytes, FileRegion file,
                                                          std::string* note) {
  auto refuse = [](const char* why) { return make_error("module_cache", std::string("blob JIT section: ") + why); };
  const uint64_t size = bytes.size();
  if (size == 0) return refuse("no code");
  if (parts.func_start.size() != m.compiled.size()) return refuse("function count differs from the module's");
  for (uint32_t start : parts.func_start)
    if (start >= size) return refuse("function start outside the code");
  // call_site_offset binary-searches the call sites; add_frame maps their wasm offsets to bodies.
  for (size_t i = 0; i < parts.call_sites.size(); ++i) {
    const auto& [ret, wasm_offset] = parts.call_sites[i];
    if (ret == 0 || ret > size) return refuse("call site outside the code");
    if (i > 0 && ret <= parts.call_sites[i - 1].first) return refuse("call sites not ascending");
    if (wasm_offset >= m.bytes.size()) return refuse("call site outside the module");
  }
  // The disassembler walks the jump tables in order, between instructions.
  uint64_t table_end = 0;
  for (const auto& [at, len] : parts.data_ranges) {
    if (at < table_end || len == 0 || len % 8 != 0 || uint64_t(at) + len > size) return refuse("jump table implausible");
    table_end = uint64_t(at) + len;
  }
  // Mapped from the file, only the pages a run executes are read (python.wasm's code is 17 MB,
  // a contract's start-up touches a fraction of it), and they stay shared in the page cache
  // between runs; a copy faults in and writes every page.
  if (file.fd >= 0) parts.code = CodeBuffer::map_file(file.fd, file.offset, bytes.size());
  if (!parts.code) parts.code = CodeBuffer::make(bytes.data(), bytes.size());
  if (!parts.code) return refuse("cannot map executable memory");
  *note = "jit: " + std::to_string(m.compiled.size()) + " functions, " + std::to_string(size) +
          " bytes of x86-64, from the module cache";
  return std::shared_ptr<const ModuleCode>(std::make_shared<ModuleCode>(std::move(parts)));
}

namespace {

// int enter(RunCtx*, const uint8_t* entry, uint64_t* fp, InstanceState*): saves the callee-saved
// registers, pushes the frame-walk sentinel, calls the entry function; returns 0, or 1 when a
// trap unwound to it.
struct Trampoline {
  std::unique_ptr<CodeBuffer> code;
  uint32_t unwind_offset = 0;
  using EnterFn = int (*)(RunCtx*, const uint8_t*, uint64_t*, InstanceState*);
  EnterFn enter() const { return reinterpret_cast<EnterFn>(const_cast<uint8_t*>(code->base())); }
  const void* unwind() const { return code->base() + unwind_offset; }
};

class HeapAllocator : public Xbyak::Allocator {
 public:
  uint8_t* alloc(size_t size) override { return static_cast<uint8_t*>(std::malloc(size)); }
  void free(uint8_t* p) override { std::free(p); }
  bool useProtect() const override { return false; }
};

const Trampoline* trampoline() {
  static const Trampoline* t = [] {
    using namespace Xbyak::util;
    HeapAllocator alloc;
    Xbyak::CodeGenerator g(4096, Xbyak::AutoGrow, &alloc);
    Xbyak::Label out, unwind;
    g.push(rbx);
    g.push(rbp);
    g.push(r12);
    g.push(r13);
    g.push(r14);
    g.push(r15);
    g.xor_(eax, eax);
    g.push(rax);  // sentinel: "no instance" ends a backtrace walk
    g.mov(g.qword[rdi + kCtxEntryRsp], rsp);
    g.mov(r15, rdi);
    g.mov(rbx, rdx);
    g.mov(r12, rcx);
    g.mov(rax, g.qword[r12 + kStMem0]);
    g.mov(r13, g.qword[rax + kMemBase]);
    g.mov(r14, g.qword[rax + kMemSize]);
    g.call(rsi);
    g.xor_(eax, eax);
    g.L(out);
    g.add(rsp, 8);
    g.pop(r15);
    g.pop(r14);
    g.pop(r13);
    g.pop(r12);
    g.pop(rbp);
    g.pop(rbx);
    g.ret();
    g.L(unwind);
    g.mov(rsp, g.qword[r15 + kCtxEntryRsp]);
    g.mov(eax, 1);
    g.jmp(out);
    g.ready();
    auto* tr = new Trampoline;
    if (Xbyak::GetError()) {
      Xbyak::ClearError();
      return static_cast<const Trampoline*>(tr);
    }
    tr->unwind_offset = uint32_t(unwind.getAddress() - g.getCode());
    tr->code = CodeBuffer::make(g.getCode(), g.getSize());
    return static_cast<const Trampoline*>(tr);
  }();
  return t->code ? t : nullptr;
}

}  // namespace

// Not read by generated code: what the helpers need besides RunCtx.
struct RunState {
  Store* store;
  const StoreAccess* access;
  uint32_t max_frames;
  std::optional<Trap> result;
  CallTarget scratch_target;  // what indirect_helper returns for a target without JIT code
};

namespace {

// ---- backtraces ----

// The wasm offset of the call whose return address is `ret`, in the code of `st`'s module.
uint32_t call_site_offset(const InstanceState* st, uint64_t ret) {
  const ModuleCode& mc = *st->code;
  uint64_t off = ret - reinterpret_cast<uint64_t>(mc.code->base());
  auto it = std::lower_bound(mc.call_sites.begin(), mc.call_sites.end(), off,
                             [](const std::pair<uint32_t, uint32_t>& e, uint64_t o) { return e.first < o; });
  return it != mc.call_sites.end() && it->first == off ? it->second : 0;
}

void add_frame(Trap& t, uint32_t max, const InstanceState* st, uint32_t wasm_offset) {
  if (t.frames.size() >= max) return;
  const ModuleImpl& m = *st->inst->m;
  auto it = std::upper_bound(m.bodies.begin(), m.bodies.end(), size_t(wasm_offset),
                             [](size_t o, const FuncBody& b) { return o < b.body_offset; });
  if (it == m.bodies.begin()) return;
  --it;
  TrapFrame f;
  f.module = st->inst->name;
  f.func_index = uint32_t(m.num_imported_funcs + (it - m.bodies.begin()));
  f.func_name = st->inst->self->name_section_func_name(f.func_index);
  f.code_offset = wasm_offset;
  t.frames.push_back(std::move(f));
}

// The callers of the function whose native frame is at p ([p] its InstanceState, [p+1] its
// return address), outwards, until the trampoline's sentinel.
void add_callers(Trap& t, uint32_t max, const uint64_t* p) {
  while (t.frames.size() < max) {
    auto* caller = reinterpret_cast<const InstanceState*>(p[2]);
    if (!caller) return;
    add_frame(t, max, caller, call_site_offset(caller, p[1]));
    p += 2;
  }
}

void sync_to_store(const RunCtx* ctx) {
  const StoreAccess& a = *ctx->run->access;
  *a.fuel = ctx->fuel;
  *a.calls_left = ctx->calls_left;
  *a.values_left = ctx->values_left;
}

void sync_from_store(RunCtx* ctx) {
  const StoreAccess& a = *ctx->run->access;
  ctx->fuel = *a.fuel;
  ctx->calls_left = *a.calls_left;
  ctx->values_left = *a.values_left;
}

// ---- helpers called by generated code ----

void trap_helper(RunCtx* ctx, uint64_t kind, uint64_t wasm_offset, uint64_t* jit_rsp, InstanceState* st) {
  RunState& rs = *ctx->run;
  TrapKind k = TrapKind(kind);
  rs.result = Trap{k, trap_kind_name(k), 0, nullptr, {}};
  add_frame(*rs.result, rs.max_frames, st, uint32_t(wasm_offset));
  add_callers(*rs.result, rs.max_frames, jit_rsp);
}

// A function's entry found the stack rule exhausted: reported at its caller's call, as the
// interpreter does (which checks before the callee's frame exists); none for the entry function.
void overflow_helper(RunCtx* ctx, uint64_t* entry_rsp) {
  RunState& rs = *ctx->run;
  rs.result = Trap{TrapKind::kStackOverflow, trap_kind_name(TrapKind::kStackOverflow), 0, nullptr, {}};
  auto* caller = reinterpret_cast<const InstanceState*>(entry_rsp[1]);
  if (!caller) return;
  add_frame(*rs.result, rs.max_frames, caller, call_site_offset(caller, entry_rsp[0]));
  add_callers(*rs.result, rs.max_frames, entry_rsp + 1);
}

// A wasm function of an instance on the interpreter, called from JIT code: the interpreter runs
// it on a slot stack that starts at the callee's frame and ends where the real one ends (so its
// memory-safety check sees the same room), after the checks the interpreter's call would make.
std::optional<Trap> call_interpreter(RunCtx* ctx, FuncInst* callee, uint64_t* args) {
  RunState& rs = *ctx->run;
  const CompiledFunc* cf = callee->code;
  auto overflow = [] { return Trap{TrapKind::kStackOverflow, trap_kind_name(TrapKind::kStackOverflow), 0, nullptr, {}}; };
  if (ctx->calls_left == 0 || ctx->values_left < cf->cost) return overflow();
  if (args + cf->frame_slots > ctx->stack_end) return overflow();
  std::vector<uint64_t> slots(size_t(ctx->stack_end - args));
  std::copy(args, args + cf->num_params, slots.begin());
  std::vector<uint64_t>& stack = rs.store->impl().stack;
  std::swap(stack, slots);
  sync_to_store(ctx);
  std::optional<Trap> t = interpret(*rs.store, callee);
  sync_from_store(ctx);
  std::swap(stack, slots);
  if (!t) std::copy(slots.begin(), slots.begin() + cf->num_results, args);
  return t;
}

uint32_t call_out_helper(RunCtx* ctx, InstanceState* st, const CallTarget* target, uint64_t* args,
                         uint64_t* jit_rsp, uint64_t wasm_offset) {
  RunState& rs = *ctx->run;
  FuncInst* callee = target->func;
  const uint32_t tail_cost = uint32_t(wasm_offset >> 32);  // 1 + the caller's charge, or 0
  wasm_offset = uint32_t(wasm_offset);
  if (!callee->host) {
    if (tail_cost) {
      ctx->calls_left++;
      ctx->values_left += tail_cost - 1;
      const CompiledFunc* cf = callee->code;
      if (ctx->calls_left == 0 || ctx->values_left < cf->cost || args + cf->frame_slots > ctx->stack_end) {
        // The interpreter's tail call fails its check at the return_call, in the caller's frame.
        rs.result = Trap{TrapKind::kStackOverflow, trap_kind_name(TrapKind::kStackOverflow), 0, nullptr, {}};
        add_frame(*rs.result, rs.max_frames, st, uint32_t(wasm_offset));
        add_callers(*rs.result, rs.max_frames, jit_rsp);
        return 1;
      }
    }
    std::optional<Trap> t = call_interpreter(ctx, callee, args);
    if (!t) return 0;
    rs.result = std::move(t);
    if (!tail_cost) add_frame(*rs.result, rs.max_frames, st, uint32_t(wasm_offset));
    add_callers(*rs.result, rs.max_frames, jit_rsp);
    return 1;
  }
  const FuncType& ft = callee->type;
  std::vector<Value> in(ft.params.size()), out(ft.results.size());
  for (size_t k = 0; k < in.size(); ++k) in[k] = slot_to_value(ft.params[k], args[k]);
  for (size_t k = 0; k < out.size(); ++k) out[k] = Value::zero(ft.results[k]);
  Caller caller(*rs.store, st->inst->self);
  sync_to_store(ctx);  // the host sees (and may change) fuel and counters as under the interpreter
  std::optional<Trap> t = callee->host(caller, in, out);
  sync_from_store(ctx);
  if (!t) {
    for (size_t k = 0; k < out.size(); ++k) args[k] = out[k].bits;
    if (tail_cost) {
      ctx->calls_left++;
      ctx->values_left += tail_cost - 1;
    }
    return 0;
  }
  rs.result = std::move(t);
  add_frame(*rs.result, rs.max_frames, st, uint32_t(wasm_offset));
  add_callers(*rs.result, rs.max_frames, jit_rsp);
  return 1;
}

const CallTarget* indirect_helper(RunCtx* ctx, InstanceState* st, uint64_t table, uint64_t type_index, uint64_t elem) {
  const TableInst* t = st->inst->tables[table];
  auto fail = [&](TrapKind k) -> const CallTarget* {
    ctx->pending_trap = uint32_t(k);
    return nullptr;
  };
  if (elem >= t->elems.size()) return fail(TrapKind::kTableOutOfBounds);
  FuncInst* callee = reinterpret_cast<FuncInst*>(t->elems[elem]);
  if (!callee) return fail(TrapKind::kIndirectCallToNull);
  if (callee->type_id != st->inst->m->type_ids[type_index]) return fail(TrapKind::kBadSignature);
  if (!callee->host && callee->instance->jit) return &callee->instance->jit->targets[callee->index];
  ctx->run->scratch_target = CallTarget{nullptr, nullptr, callee};
  return &ctx->run->scratch_target;
}

uint64_t grow_helper(RunCtx* ctx, InstanceState* st, uint64_t delta_pages) {
  uint64_t old = 0;
  GrowResult g = grow_memory(*ctx->run->store, *st->mem0, uint32_t(delta_pages), &old);
  if (g == GrowResult::kHostFault) return uint64_t(1) << 32;
  return g == GrowResult::kGrown ? uint32_t(old) : uint32_t(-1);
}

uint32_t bulk_helper(InstanceState* st, uint64_t kind, uint64_t dst, uint64_t src_or_byte, uint64_t n) {
  MemInst& m = *st->mem0;
  if (kind == 0) {
    if (dst + n > m.size || src_or_byte + n > m.size) return 1;
    std::memmove(m.base + dst, m.base + src_or_byte, n);
  } else {
    if (dst + n > m.size) return 1;
    std::memset(m.base + dst, int(uint8_t(src_or_byte)), n);
  }
  return 0;
}

uint32_t segment_helper(RunCtx* ctx, InstanceState* st, uint64_t op, uint64_t x, uint64_t y, uint64_t* a) {
  Instance::Impl& inst = *st->inst;
  auto fail = [](TrapKind k) { return 1 + uint32_t(k); };
  switch (SegOp(op)) {
    case kSegMemoryInit: {
      const MemInst& m = *st->mem0;
      const auto& bytes = inst.m->datas[x].bytes;
      const uint64_t d = uint32_t(a[0]), s = uint32_t(a[1]), n = uint32_t(a[2]);
      const uint64_t len = inst.data_dropped[x] ? 0 : bytes.size();
      if (d + n > m.size || s + n > len) return fail(TrapKind::kMemoryOutOfBounds);
      if (n) std::memcpy(m.base + d, bytes.data() + s, n);
      return 0;
    }
    case kSegDataDrop: inst.data_dropped[x] = true; return 0;
    case kSegTableGet: case kSegTableSet: {
      TableInst& t = *inst.tables[x];
      const uint32_t i = uint32_t(a[0]);
      if (i >= t.elems.size()) return fail(TrapKind::kTableOutOfBounds);
      if (SegOp(op) == kSegTableGet) a[0] = t.elems[i];
      else t.elems[i] = a[1];
      return 0;
    }
    case kSegTableSize: a[0] = uint32_t(inst.tables[x]->elems.size()); return 0;
    case kSegTableGrow: {
      uint64_t old = 0;
      const bool ok = grow_table(*ctx->run->store, *inst.tables[x], uint32_t(a[1]), a[0], &old);
      a[0] = ok ? uint32_t(old) : uint32_t(-1);
      return 0;
    }
    case kSegTableFill: {
      TableInst& t = *inst.tables[x];
      const uint64_t i = uint32_t(a[0]), v = a[1], n = uint32_t(a[2]);
      if (i + n > t.elems.size()) return fail(TrapKind::kTableOutOfBounds);
      std::fill_n(t.elems.begin() + int64_t(i), n, v);
      return 0;
    }
    case kSegTableCopy: {
      TableInst& td = *inst.tables[x];
      const TableInst& ts = *inst.tables[y];
      const uint64_t d = uint32_t(a[0]), s = uint32_t(a[1]), n = uint32_t(a[2]);
      if (d + n > td.elems.size() || s + n > ts.elems.size()) return fail(TrapKind::kTableOutOfBounds);
      if (n) std::memmove(td.elems.data() + d, ts.elems.data() + s, n * sizeof(uint64_t));
      return 0;
    }
    case kSegTableInit: {
      TableInst& t = *inst.tables[x];
      const auto& seg = inst.elems[y];
      const uint64_t d = uint32_t(a[0]), s = uint32_t(a[1]), n = uint32_t(a[2]);
      if (d + n > t.elems.size() || s + n > seg.size()) return fail(TrapKind::kTableOutOfBounds);
      if (n) std::memcpy(t.elems.data() + d, seg.data() + s, n * sizeof(uint64_t));
      return 0;
    }
    case kSegElemDrop:
      inst.elems[x].clear();
      inst.elems[x].shrink_to_fit();
      return 0;
    case kSegRefFunc: a[0] = reinterpret_cast<uint64_t>(inst.funcs[x]); return 0;
  }
  return fail(TrapKind::kHostError);
}

// Whether this thread's native stack holds the deepest JIT call chain the limits allow (16
// bytes per wasm call) plus room for host functions; otherwise the interpreter runs the call,
// so the depth at which a run traps never depends on the native stack.
bool native_stack_allows(uint32_t call_stack_limit) {
  constexpr uint64_t kHostReserve = uint64_t(512) << 10;
  thread_local uintptr_t stack_low = [] {
    pthread_attr_t attr;
    uintptr_t low = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) low = reinterpret_cast<uintptr_t>(addr);
      pthread_attr_destroy(&attr);
    }
    return low;
  }();
  if (!stack_low) return false;
  char here;
  uintptr_t sp = reinterpret_cast<uintptr_t>(&here);
  if (sp <= stack_low) return false;
  return sp - stack_low > uint64_t(call_stack_limit) * kNativeFrameBytes + kHostReserve;
}

}  // namespace

std::shared_ptr<InstanceJit> attach_instance(Instance::Impl& inst, std::shared_ptr<const ModuleCode> code) {
  if (!code || !trampoline()) return nullptr;
  auto j = std::make_shared<InstanceJit>();
  j->code = std::move(code);
  for (GlobalInst* g : inst.globals) j->global_bits.push_back(&g->bits);
  j->targets.resize(inst.funcs.size());
  for (size_t i = 0; i < inst.funcs.size(); ++i) {
    FuncInst* f = inst.funcs[i];
    CallTarget& t = j->targets[i];
    t.func = f;
    if (f->host || (f->instance != &inst && !f->instance->jit)) continue;  // called out of JIT code
    InstanceJit* owner = f->instance == &inst ? j.get() : f->instance->jit.get();
    const ModuleImpl& fm = *f->instance->m;
    t.code = owner->code->code->base() + owner->code->func_start[f->index - fm.num_imported_funcs];
    t.state = &owner->state;
    t.cost = f->code->cost;
    t.frame_slots = f->code->frame_slots;
  }
  j->state = InstanceState{inst.mem0, j->global_bits.data(), j->targets.data(), &inst, j->code.get()};
  return j;
}

std::optional<Trap> run(Store& s, FuncInst* f, const StoreAccess& access) {
  const StoreConfig& cfg = s.config();
  const Trampoline* tr = trampoline();
  InstanceJit* ij = f->instance->jit.get();
  if (!tr || !ij || !native_stack_allows(cfg.call_stack_limit)) return interpret(s, f);
  RunState rs{&s, &access, cfg.max_trap_frames, std::nullopt, {}};
  const bool fuel_on = cfg.fuel_enabled;
  const int64_t saved_fuel = *access.fuel;
  const uint32_t saved_calls = *access.calls_left, saved_values = *access.values_left;
  std::vector<uint64_t>& stack = s.impl().stack;
  RunCtx ctx{};
  // As the interpreter: without fuel enabled, metered code runs with an allowance it cannot
  // exhaust (and a host function sees that allowance as the store's fuel).
  ctx.fuel = fuel_on ? saved_fuel : INT64_MAX;
  if (!fuel_on) *access.fuel = INT64_MAX;
  ctx.calls_left = saved_calls;
  ctx.values_left = saved_values;
  ctx.interrupt = access.interrupt;
  ctx.stack_end = stack.data() + stack.size();
  ctx.unwind = tr->unwind();
  ctx.call_out = call_out_helper;
  ctx.indirect = indirect_helper;
  ctx.trap = trap_helper;
  ctx.overflow = overflow_helper;
  ctx.grow = grow_helper;
  ctx.bulk = bulk_helper;
  ctx.segment = segment_helper;
  ctx.run = &rs;
  const uint8_t* entry = ij->targets[f->index].code;
  int trapped = tr->enter()(&ctx, entry, stack.data(), &ij->state);
  if (trapped) {
    // A trap refunds nothing: the counters are as before this call.
    *access.calls_left = saved_calls;
    *access.values_left = saved_values;
  } else {
    *access.calls_left = ctx.calls_left;
    *access.values_left = ctx.values_left;
  }
  *access.fuel = fuel_on ? ctx.fuel : saved_fuel;
  if (trapped) return std::move(rs.result);
  return std::nullopt;
}

}  // namespace genvm::wasm::jit

namespace genvm::wasm {

JitCodeOrigin jit_code_origin(const Module& m) {
  const ModuleImpl& mi = m.impl();
  if (!mi.jit_code) return JitCodeOrigin::kNone;
  return mi.jit_from_cache ? JitCodeOrigin::kFromCache : JitCodeOrigin::kCompiled;
}

}  // namespace genvm::wasm
