// The interpreter: one function, threaded dispatch over the compiled slot code (ops.h).
// Why it looks like this (see DESIGN.md): operands are fp-relative slots fixed at compile time,
// so no operand stack pointer moves at run time; dispatch is `goto *L[op]` at the end of every
// handler so each handler has its own indirect branch for the predictor; memory 0's base and
// size live in locals and are reloaded only after calls, returns and memory.grow; wasm calls
// push a Frame on a heap vector, never recursing on the native stack.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>

#include "wasm/ops.h"
#include "wasm/runtime.h"

namespace genvm::wasm {
namespace {

inline float F32(uint64_t s) { float f; uint32_t b = uint32_t(s); std::memcpy(&f, &b, 4); return f; }
inline double F64(uint64_t s) { double f; std::memcpy(&f, &s, 8); return f; }
inline uint64_t B32(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }
inline uint64_t B64(double f) { uint64_t b; std::memcpy(&b, &f, 8); return b; }
// Arithmetic NaNs are made canonical so results are identical on every machine.
inline float canon32(float f) { return f != f ? std::bit_cast<float>(0x7fc00000u) : f; }
inline double canon64(double f) { return f != f ? std::bit_cast<double>(0x7ff8000000000000ull) : f; }
template <class T>
inline T fmin(T a, T b) {
  if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <class T>
inline T fmax(T a, T b) {
  if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

struct Frame {
  const uint32_t* ret_pc;
  uint64_t* fp;
  Instance::Impl* inst;
  uint32_t cost;
};

// The backtrace, innermost first: the trapping pc, then each caller's call instruction
// (a frame's ret_pc - 1 lies inside the call that pushed it). Only the trap path runs this, so
// it may search: the function by its code start, the wasm offset in code_offsets.
void collect_frames(Trap& t, uint32_t max, Instance::Impl* inst, const uint32_t* pc,
                    std::span<const Frame> frames) {
  auto add = [&](Instance::Impl* in, const uint32_t* at) {
    if (t.frames.size() >= max) return;
    const ModuleImpl& m = *in->m;
    uint32_t off = uint32_t(at - in->code);
    auto fit = std::upper_bound(m.compiled.begin(), m.compiled.end(), off,
                                [](uint32_t o, const CompiledFunc& c) { return o < c.code; });
    if (fit == m.compiled.begin()) return;
    --fit;
    TrapFrame f;
    f.module = in->name;
    f.func_index = uint32_t(m.num_imported_funcs + (fit - m.compiled.begin()));
    f.func_name = in->self->name_section_func_name(f.func_index);
    const auto offsets = m.offsets();
    auto oit = std::upper_bound(offsets.begin(), offsets.end(), off,
                                [](uint32_t o, const std::pair<uint32_t, uint32_t>& e) { return o < e.first; });
    if (oit != offsets.begin() && std::prev(oit)->first >= fit->code) f.code_offset = std::prev(oit)->second;
    t.frames.push_back(std::move(f));
  };
  if (t.frames.size() < max) add(inst, pc);
  for (size_t k = frames.size(); k-- > 0 && t.frames.size() < max;)
    if (frames[k].ret_pc) add(frames[k].inst, frames[k].ret_pc - 1);
}

#ifdef GENVM_WASM_OPSTATS
// Developer instrumentation (never in normal builds): counts executed internal ops and
// adjacent pairs, printed at exit, to choose superinstructions from measurements.
struct OpStats {
  std::vector<uint64_t> pairs = std::vector<uint64_t>(size_t(kNumOps) * kNumOps);
  uint32_t prev = 0;
  ~OpStats() {
    std::vector<std::pair<uint64_t, uint32_t>> ops(kNumOps), prs;
    uint64_t total = 0;
    for (uint32_t i = 0; i < kNumOps; ++i) ops[i].second = i;
    for (size_t i = 0; i < pairs.size(); ++i)
      if (pairs[i]) {
        ops[i % kNumOps].first += pairs[i];
        total += pairs[i];
        prs.emplace_back(pairs[i], uint32_t(i));
      }
    std::sort(ops.rbegin(), ops.rend());
    std::sort(prs.rbegin(), prs.rend());
    std::fprintf(stderr, "opstats: %llu ops\n", (unsigned long long)total);
    for (size_t i = 0; i < 30 && ops[i].first; ++i)
      std::fprintf(stderr, "  op 0x%x %.2f%%\n", ops[i].second, 100.0 * double(ops[i].first) / double(total));
    for (size_t i = 0; i < 30 && i < prs.size(); ++i)
      std::fprintf(stderr, "  pair 0x%x -> 0x%x %.2f%%\n", prs[i].second / kNumOps, prs[i].second % kNumOps,
                   100.0 * double(prs[i].first) / double(total));
  }
};
OpStats g_opstats;
inline void opstats_hit(uint32_t op) {
  g_opstats.pairs[size_t(g_opstats.prev) * kNumOps + op]++;
  g_opstats.prev = op;
}
#endif

// The wasm call stack. Calls push by bumping `top` and compare it with `cap`; growing (by
// doubling) is out of line. It is reached through one pointer that the hot handlers never use,
// so its three pointers stay in memory instead of competing for registers (as locals they
// made clang spill around branch handlers: sha256 ran 14% slower).
struct FrameStack {
  std::vector<Frame> storage = std::vector<Frame>(64);
  Frame* base = storage.data();
  Frame* top = base;
  Frame* cap = base + storage.size();
  [[gnu::noinline]] void grow() {
    size_t used = size_t(top - base);
    storage.resize(storage.size() * 2);
    base = storage.data();
    top = base + used;
    cap = base + storage.size();
  }
};

// Zeroes a callee's declared locals. Most functions have a handful: stores without the call
// into libc that std::memset with a run-time size costs.
inline void zero_locals(uint64_t* p, uint32_t n) {
  switch (n) {
    case 4: p[3] = 0; [[fallthrough]];
    case 3: p[2] = 0; [[fallthrough]];
    case 2: p[1] = 0; [[fallthrough]];
    case 1: p[0] = 0; [[fallthrough]];
    case 0: return;
    default: std::memset(p, 0, sizeof(uint64_t) * n);
  }
}

// The copies of a kCopyN / kCopyNBr [n, src1, dst1, ...], in order; returns the word after
// the last pair (the next instruction, or kCopyNBr's target word).
inline const uint32_t* copy_run(uint64_t* fp, const uint32_t* pc) {
  const uint32_t* p = pc + 2;
  const uint32_t* const end = p + 2 * pc[1];
  do {
    fp[p[1]] = fp[p[0]];
    p += 2;
  } while (p != end);
  return end;
}

// Calls a host function: arguments from the slots at `args`, results to the slots at
// `results`. Out of line: host calls are rare next to wasm calls, and inlined into the
// interpreter this conversion code made clang keep an extra copy of fp in every handler.
[[gnu::noinline]] std::optional<Trap> call_host(Store& store, FuncInst* callee, Instance::Impl* inst,
                                                const uint64_t* args, uint64_t* results) {
  const FuncType& ft = callee->type;
  Value args_buf[8], res_buf[8];
  std::vector<Value> args_v, res_v;
  std::span<Value> in(args_buf, ft.params.size() <= 8 ? ft.params.size() : 0);
  std::span<Value> out(res_buf, ft.results.size() <= 8 ? ft.results.size() : 0);
  if (ft.params.size() > 8) { args_v.resize(ft.params.size()); in = args_v; }
  if (ft.results.size() > 8) { res_v.resize(ft.results.size()); out = res_v; }
  for (size_t k = 0; k < ft.params.size(); ++k) in[k] = slot_to_value(ft.params[k], args[k]);
  for (size_t k = 0; k < ft.results.size(); ++k) out[k] = Value::zero(ft.results[k]);
  Caller caller(store, inst->self);
  std::optional<Trap> t = callee->host(caller, in, out);
  if (t) return t;
  for (size_t k = 0; k < ft.results.size(); ++k) results[k] = out[k].bits;
  return std::nullopt;
}

// The trap path, out of line and cold: records the trap and its backtrace; each trapping
// branch calls it and returns from the loop. (GCC: sha256 -5%, vm -2% against one landing
// label per trap kind; clang's code is the same either way.)
[[gnu::noinline, gnu::cold]] void trap_exit(std::optional<Trap>& result, TrapKind k, uint32_t max_frames,
                                            Instance::Impl* inst, const uint32_t* pc, const FrameStack* fs) {
  result = Trap{k, trap_kind_name(k), 0, nullptr, {}};
  if (pc) collect_frames(*result, max_frames, inst, pc, std::span<const Frame>(fs->base, fs->top));
}
// A trap a host function returned: it gets the wasm frames below it.
[[gnu::noinline, gnu::cold]] void host_trap_exit(std::optional<Trap>& result, uint32_t max_frames,
                                                 Instance::Impl* inst, const uint32_t* pc, const FrameStack* fs) {
  collect_frames(*result, max_frames, inst, pc, std::span<const Frame>(fs->base, fs->top));
}

}  // namespace

struct Interp {
  static std::optional<Trap> run(Store& s, FuncInst* entry);
  static void run_loop(Store& s, FuncInst* entry, FrameStack* fs, std::optional<Trap>& result);
};

std::optional<Trap> interpret(Store& s, FuncInst* f) { return Interp::run(s, f); }

std::optional<Trap> Interp::run(Store& store, FuncInst* entry) {
  // The frame vector lives on the heap so its three pointers stay in memory (read only by
  // calls and returns) instead of competing for registers with pc/fp/memory in every handler.
  auto frames_owner = std::make_unique<FrameStack>();
  // The stack counters are updated in the store itself (restored if the call traps): as locals
  // they were two more long-lived values competing for registers in the interpreter loop.
  const uint32_t saved_calls_left = store.calls_left_;
  const uint32_t saved_values_left = store.values_left_;
  // Without fuel enabled, metered code runs with an allowance it cannot exhaust, so the fuel
  // instructions need no "is fuel on" branch. Fuel lives in the store (one memory
  // read-modify-write per fuel instruction): as a local it made clang shuffle registers.
  const bool fuel_on = store.cfg_.fuel_enabled;
  const int64_t saved_fuel = store.fuel_;
  if (!fuel_on) store.fuel_ = INT64_MAX;
  std::optional<Trap> result;
  run_loop(store, entry, frames_owner.get(), result);
  if (result) {
    // A trap refunds nothing to the store: the counters are as before this call.
    store.calls_left_ = saved_calls_left;
    store.values_left_ = saved_values_left;
  }
  if (!fuel_on) store.fuel_ = saved_fuel;
  return result;
}

void Interp::run_loop(Store& store, FuncInst* entry, FrameStack* const fs, std::optional<Trap>& result) {
  // One handler label per opcode, in opcode order (generated by gen_ops.py from its table).
  // Dispatch reads a copy on this frame, not the static table: GCC addresses a frame array
  // from rsp, but keeps a static one's address (PIE: rip-relative) in a register for the whole
  // loop, one register fewer for every handler. That cost 4-6 % on Lua (bench/realworld),
  // against one 9 KB copy per entry into the loop.
  static void* const kDispatch[kNumOps] = {
#include "wasm/interp_dispatch.inc"
  };
  void* L[kNumOps];
  std::memcpy(L, kDispatch, sizeof L);

  Store::Impl& S_ = store.impl();
  uint32_t& calls_left = store.calls_left_;
  uint32_t& values_left = store.values_left_;
  int64_t& fuel = store.fuel_;

  Instance::Impl* inst = entry->instance;
  const uint32_t* code = inst->code;
  uint64_t* fp = S_.stack.data();
  const uint32_t* pc = nullptr;
  uint8_t* mbase = nullptr;
  uint64_t msize = 0;
  uint64_t* const stack_end = S_.stack.data() + S_.stack.size();
  FuncInst* callee = nullptr;
  uint64_t* nfp = nullptr;
  const uint32_t* ret = nullptr;

#ifdef GENVM_WASM_OPSTATS
#define NEXT()          \
  do {                  \
    opstats_hit(*pc);   \
    goto* L[*pc];       \
  } while (0)
#else
#define NEXT() goto* L[*pc]
#endif
#define S(i) fp[pc[i]]
// A trap returns from the loop through the cold trap_exit (see there why not a shared label).
#define TRAP(k)                                                      \
  do {                                                               \
    trap_exit(result, TrapKind::k, store.cfg_.max_trap_frames, inst, pc, fs);             \
    return;                                                          \
  } while (0)
#define RELOAD_MEM()          \
  do {                        \
    mbase = inst->mem0->base; \
    msize = inst->mem0->size; \
  } while (0)

  {
    const CompiledFunc* cf = entry->code;
    if (calls_left == 0 || values_left < cf->cost) TRAP(kStackOverflow);
    calls_left--;
    values_left -= cf->cost;
    *fs->top++ = Frame{nullptr, nullptr, nullptr, cf->cost};
    zero_locals(fp + cf->num_params, cf->num_locals);
    pc = code + cf->code;
    RELOAD_MEM();
    NEXT();
  }

#include "wasm/interp_numeric.inc"

op_bad:
  TRAP(kUnreachable);
op_unreachable:
  TRAP(kUnreachable);
op_nondet:
  TRAP(kNondetInstruction);
op_copy:
  S(2) = S(1);
  pc += 3;
  NEXT();
op_copy2:
  S(2) = S(1);
  S(4) = S(3);
  pc += 5;
  NEXT();
op_copy_br:
  S(2) = S(1);
  pc = code + pc[3];
  NEXT();
op_copy_n:
  pc = copy_run(fp, pc);
  NEXT();
op_copy_n_br:
  pc = code + *copy_run(fp, pc);
  NEXT();
op_add_imm_shl:
  S(4) = uint32_t((uint32_t(S(1)) << (pc[2] & 31)) + pc[3]);
  pc += 5;
  NEXT();
op_const32:
  S(2) = pc[1];
  pc += 3;
  NEXT();
op_const64:
  S(3) = uint64_t(pc[1]) | (uint64_t(pc[2]) << 32);
  pc += 4;
  NEXT();
op_br:
  pc = code + pc[1];
  NEXT();
op_br_if_nz:
  if (uint32_t(S(1)) != 0) pc = code + pc[2];
  else pc += 3;
  NEXT();
op_br_if_z:
  if (uint32_t(S(1)) == 0) pc = code + pc[2];
  else pc += 3;
  NEXT();
op_br_table: {
  uint32_t i = uint32_t(S(1));
  uint32_t n = pc[2];
  if (i >= n - 1) i = n - 1;
  pc = code + pc[3 + i];
  NEXT();
}
op_copy_add_imm: {
  uint64_t v = S(1);
  S(2) = v;
  S(4) = uint32_t(uint32_t(v) + pc[3]);
  pc += 5;
  NEXT();
}
op_select:
  S(4) = uint32_t(S(3)) ? S(1) : S(2);
  pc += 5;
  NEXT();
op_global_get:
  S(2) = inst->globals[pc[1]]->bits;
  pc += 3;
  NEXT();
op_global_set:
  inst->globals[pc[1]]->bits = S(2);
  pc += 3;
  NEXT();

// Every load: ea = uint32(ADDR) + the offset word (the wasm address wraps at 32 bits before the
// offset is added, as in the unfused instruction), one bounds check, the value converted into
// slot DST; LEN words consumed.
#define LOAD_AT(T, CONV, ADDR, OFF, DST, LEN)               \
  {                                                         \
    uint64_t ea = uint64_t(uint32_t(ADDR)) + pc[OFF];       \
    if (ea + sizeof(T) > msize) TRAP(kMemoryOutOfBounds);   \
    T v;                                                    \
    std::memcpy(&v, mbase + ea, sizeof(T));                 \
    S(DST) = CONV;                                          \
    pc += LEN;                                              \
    NEXT();                                                 \
  }
// One family: a handler per load kind, named op_<P>_<kind>, each LOAD_AT with the family's
// address (ADDR), offset word, destination word and length.
#define LOAD_FAMILY(P, ADDR, OFF, DST, LEN)                                             \
  op_##P##_i32_load: LOAD_AT(uint32_t, v, ADDR, OFF, DST, LEN)                          \
  op_##P##_i64_load: LOAD_AT(uint64_t, v, ADDR, OFF, DST, LEN)                          \
  op_##P##_i32_load8_s: LOAD_AT(int8_t, uint32_t(int32_t(v)), ADDR, OFF, DST, LEN)      \
  op_##P##_i32_load8_u: LOAD_AT(uint8_t, v, ADDR, OFF, DST, LEN)                        \
  op_##P##_i32_load16_s: LOAD_AT(int16_t, uint32_t(int32_t(v)), ADDR, OFF, DST, LEN)    \
  op_##P##_i32_load16_u: LOAD_AT(uint16_t, v, ADDR, OFF, DST, LEN)                      \
  op_##P##_i64_load8_s: LOAD_AT(int8_t, uint64_t(int64_t(v)), ADDR, OFF, DST, LEN)      \
  op_##P##_i64_load16_s: LOAD_AT(int16_t, uint64_t(int64_t(v)), ADDR, OFF, DST, LEN)    \
  op_##P##_i64_load32_s: LOAD_AT(int32_t, uint64_t(int64_t(v)), ADDR, OFF, DST, LEN)
// Plain load: [addr, offset, dst].
LOAD_FAMILY(ld, S(1), 2, 3, 4)
// Fused i32.add + load: ea = uint32(a + b) + offset, the wasm address of the unfused pair;
// b an immediate ([a, imm, offset, dst]) or a slot ([a, b, offset, dst]).
LOAD_FAMILY(ai, uint32_t(S(1)) + pc[2], 3, 4, 5)
LOAD_FAMILY(aa, uint32_t(S(1)) + uint32_t(S(2)), 3, 4, 5)
// Fused i32.add(a, i32.shl(b, k)) + load: [a, b, k, offset, dst].
LOAD_FAMILY(as, uint32_t(S(1)) + (uint32_t(S(2)) << (pc[3] & 31)), 4, 5, 6)
// Fused kAddImmShl + load: [x, k, imm, offset, dst], ea = uint32((x << k) + imm) + offset.
LOAD_FAMILY(si, (uint32_t(S(1)) << (pc[2] & 31)) + pc[3], 4, 5, 6)
#undef LOAD_FAMILY
#define STORE(T)                                            \
  {                                                         \
    uint64_t ea = uint64_t(uint32_t(S(1))) + pc[3];         \
    if (ea + sizeof(T) > msize) TRAP(kMemoryOutOfBounds);   \
    T v = T(S(2));                                          \
    std::memcpy(mbase + ea, &v, sizeof(T));                 \
    pc += 4;                                                \
    NEXT();                                                 \
  }
op_store8: STORE(uint8_t)
op_store16: STORE(uint16_t)
op_store32: STORE(uint32_t)
op_store64: STORE(uint64_t)

op_memory_size:
  S(1) = msize >> 16;
  pc += 2;
  NEXT();
op_memory_grow: {
  uint64_t old = 0;
  GrowResult grown = grow_memory(store, *inst->mem0, uint32_t(S(1)), &old);
  // The budget allowed it but the host could not map it: no result about the contract.
  if (grown == GrowResult::kHostFault) TRAP(kHostError);
  S(2) = grown == GrowResult::kGrown ? uint32_t(old) : uint32_t(-1);
  RELOAD_MEM();
  pc += 3;
  NEXT();
}
op_memory_fill: {
  uint64_t d = uint32_t(S(1)), n = uint32_t(S(3));
  if (d + n > msize) TRAP(kMemoryOutOfBounds);
  std::memset(mbase + d, int(uint8_t(S(2))), n);
  pc += 4;
  NEXT();
}
op_memory_copy: {
  uint64_t d = uint32_t(S(1)), s = uint32_t(S(2)), n = uint32_t(S(3));
  if (d + n > msize || s + n > msize) TRAP(kMemoryOutOfBounds);
  std::memmove(mbase + d, mbase + s, n);
  pc += 4;
  NEXT();
}
op_memory_init: {
  uint32_t seg = pc[1];
  uint64_t d = uint32_t(S(2)), s = uint32_t(S(3)), n = uint32_t(S(4));
  const auto& bytes = inst->m->datas[seg].bytes;
  uint64_t len = inst->data_dropped[seg] ? 0 : bytes.size();
  if (d + n > msize || s + n > len) TRAP(kMemoryOutOfBounds);
  if (n) std::memcpy(mbase + d, bytes.data() + s, n);
  pc += 5;
  NEXT();
}
op_data_drop:
  inst->data_dropped[pc[1]] = true;
  pc += 2;
  NEXT();

op_table_get: {
  TableInst* t = inst->tables[pc[1]];
  uint32_t i = uint32_t(S(2));
  if (i >= t->elems.size()) TRAP(kTableOutOfBounds);
  S(3) = t->elems[i];
  pc += 4;
  NEXT();
}
op_table_set: {
  TableInst* t = inst->tables[pc[1]];
  uint32_t i = uint32_t(S(2));
  if (i >= t->elems.size()) TRAP(kTableOutOfBounds);
  t->elems[i] = S(3);
  pc += 4;
  NEXT();
}
op_table_size:
  S(2) = uint32_t(inst->tables[pc[1]]->elems.size());
  pc += 3;
  NEXT();
op_table_grow: {
  uint64_t old = 0;
  bool ok = grow_table(store, *inst->tables[pc[1]], uint32_t(S(3)), S(2), &old);
  S(4) = ok ? uint32_t(old) : uint32_t(-1);
  pc += 5;
  NEXT();
}
op_table_fill: {
  TableInst* t = inst->tables[pc[1]];
  uint64_t i = uint32_t(S(2)), n = uint32_t(S(4));
  uint64_t v = S(3);
  if (i + n > t->elems.size()) TRAP(kTableOutOfBounds);
  for (uint64_t k = 0; k < n; ++k) t->elems[i + k] = v;
  pc += 5;
  NEXT();
}
op_table_copy: {
  TableInst* td = inst->tables[pc[1]];
  TableInst* ts = inst->tables[pc[2]];
  uint64_t d = uint32_t(S(3)), s = uint32_t(S(4)), n = uint32_t(S(5));
  if (d + n > td->elems.size() || s + n > ts->elems.size()) TRAP(kTableOutOfBounds);
  if (n) std::memmove(td->elems.data() + d, ts->elems.data() + s, n * sizeof(uint64_t));
  pc += 6;
  NEXT();
}
op_table_init: {
  TableInst* t = inst->tables[pc[1]];
  const auto& seg = inst->elems[pc[2]];
  uint64_t d = uint32_t(S(3)), s = uint32_t(S(4)), n = uint32_t(S(5));
  if (d + n > t->elems.size() || s + n > seg.size()) TRAP(kTableOutOfBounds);
  if (n) std::memcpy(t->elems.data() + d, seg.data() + s, n * sizeof(uint64_t));
  pc += 6;
  NEXT();
}
op_elem_drop:
  inst->elems[pc[1]].clear();
  inst->elems[pc[1]].shrink_to_fit();
  pc += 2;
  NEXT();
op_ref_is_null:
  S(2) = S(1) == 0 ? 1 : 0;
  pc += 3;
  NEXT();
op_ref_func:
  S(2) = reinterpret_cast<uint64_t>(inst->funcs[pc[1]]);
  pc += 3;
  NEXT();
op_fuel_check:
  fuel -= int64_t(pc[1]);
  if (fuel < 0) {
    fuel = 0;
    TRAP(kOutOfFuel);
  }
  if (store.interrupt_.load(std::memory_order_relaxed)) TRAP(kInterrupt);
  pc += 2;
  NEXT();

  // ---- calls ----
op_call:
  callee = inst->funcs[pc[1]];
  nfp = fp + pc[2];
  ret = pc + 3;
  goto do_call;
// A call to a function of the same module: everything do_call looks up is in the instruction
// (recursion at n/8: 0.67 -> 0.55-0.62 s CPU).
op_call_local: {
  const uint32_t cost = pc[3];
  if (calls_left == 0 || values_left < cost) TRAP(kStackOverflow);
  uint64_t* const callee_fp = fp + pc[2];
  if (callee_fp + pc[4] > stack_end) TRAP(kStackOverflow);
  calls_left--;
  values_left -= cost;
  if (fs->top == fs->cap) fs->grow();
  *fs->top++ = Frame{pc + 7, fp, inst, cost};
  fp = callee_fp;
  zero_locals(fp + pc[5], pc[6]);
  pc = code + pc[1];
  NEXT();
}
op_call_indirect: {
  TableInst* t = inst->tables[pc[2]];
  uint32_t i = uint32_t(S(3));
  if (i >= t->elems.size()) TRAP(kTableOutOfBounds);
  callee = reinterpret_cast<FuncInst*>(t->elems[i]);
  if (!callee) TRAP(kIndirectCallToNull);
  if (callee->type_id != inst->m->type_ids[pc[1]]) TRAP(kBadSignature);
  nfp = fp + pc[4];
  ret = pc + 5;
  goto do_call;
}
do_call: {
  if (callee->host) {
    if (!(result = call_host(store, callee, inst, nfp, nfp))) {
      RELOAD_MEM();
      pc = ret;
      NEXT();
    }
    host_trap_exit(result, store.cfg_.max_trap_frames, inst, pc, fs);
    return;
  }
  const CompiledFunc* cf = callee->code;
  if (calls_left == 0 || values_left < cf->cost) TRAP(kStackOverflow);
  // Memory safety only: the counters above already bound the stack except for pathological
  // parameter counts.
  if (nfp + cf->frame_slots > stack_end) TRAP(kStackOverflow);
  calls_left--;
  values_left -= cf->cost;
  if (fs->top == fs->cap) fs->grow();
  *fs->top++ = Frame{ret, fp, inst, cf->cost};
  fp = nfp;
  zero_locals(fp + cf->num_params, cf->num_locals);
  // A call within the instance keeps code and memory 0 (mbase/msize are current: every
  // memory.grow and host call reloads them).
  if (callee->instance != inst) {
    inst = callee->instance;
    code = inst->code;
    RELOAD_MEM();
  }
  pc = code + cf->code;
  NEXT();
}
op_return: {
  uint32_t src = pc[1], n = pc[2];
  // Most functions return one value: a store, not a call into libc's memmove.
  if (n == 1) fp[0] = fp[src];
  else if (src != 0 && n) std::memmove(fp, fp + src, n * sizeof(uint64_t));
  goto do_return;
}
do_return: {
  const Frame& f = *--fs->top;
  calls_left++;
  values_left += f.cost;
  if (!f.ret_pc) return;
  pc = f.ret_pc;
  fp = f.fp;
  // Returning within the instance: code and memory 0 are unchanged (a grow in the callee
  // reloaded mbase/msize, and it is the same memory).
  if (f.inst != inst) {
    inst = f.inst;
    code = inst->code;
    RELOAD_MEM();
  }
  NEXT();
}
op_return_call:
  callee = inst->funcs[pc[1]];
  nfp = fp + pc[2];
  goto do_tail_call;
op_return_call_indirect: {
  TableInst* t = inst->tables[pc[2]];
  uint32_t i = uint32_t(S(3));
  if (i >= t->elems.size()) TRAP(kTableOutOfBounds);
  callee = reinterpret_cast<FuncInst*>(t->elems[i]);
  if (!callee) TRAP(kIndirectCallToNull);
  if (callee->type_id != inst->m->type_ids[pc[1]]) TRAP(kBadSignature);
  nfp = fp + pc[4];
  goto do_tail_call;
}
do_tail_call: {
  if (callee->host) {
    // A host callee: call it in place, then return its results from this frame.
    ret = nullptr;
    result = call_host(store, callee, inst, nfp, fp);
    if (result) {
      host_trap_exit(result, store.cfg_.max_trap_frames, inst, pc, fs);
      return;
    }
    goto do_return;
  }
  const CompiledFunc* cf = callee->code;
  Frame& top = fs->top[-1];
  // The caller's charge is refunded before the callee charges: a tail-call chain runs at
  // constant depth.
  calls_left++;
  values_left += top.cost;
  if (calls_left == 0 || values_left < cf->cost) TRAP(kStackOverflow);
  if (fp + cf->frame_slots > stack_end) TRAP(kStackOverflow);
  calls_left--;
  values_left -= cf->cost;
  top.cost = cf->cost;
  if (cf->num_params) std::memmove(fp, nfp, cf->num_params * sizeof(uint64_t));
  zero_locals(fp + cf->num_params, cf->num_locals);
  if (callee->instance != inst) {
    inst = callee->instance;
    code = inst->code;
    RELOAD_MEM();
  }
  pc = code + cf->code;
  NEXT();
}

#undef NEXT
#undef S
#undef TRAP
#undef RELOAD_MEM
#undef STORE
#undef LOAD_AT
}

}  // namespace genvm::wasm
