// Compiler: compile_functions decodes each body once, type-checking it with the spec's
// operand/control-stack algorithm and, in the same walk, emitting slot-addressed internal code
// (see ops.h and DESIGN.md). Module-level validation is validate.cc.
//
// Why one walk for body validation and code generation: the compiler needs exactly what the
// validator computes (operand stack heights, label arities, reachability), so a second decode
// would duplicate the decoder without separating anything a caller could use alone.
#include <algorithm>
#include <array>
#include <deque>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "wasm/byte_cursor.h"
#include "wasm/decode_error.h"
#include "wasm/fusion.h"
#include "wasm/jump_threading.h"
#include "wasm/module.h"
#include "wasm/ops.h"
#include "wasm/validate.h"

namespace genvm::wasm {
namespace {

constexpr ValType kUnknown = ValType(0);
// GenVM's stack rule: a frame (declared locals + operand stack) of more values is invalid.
constexpr uint64_t kMaxFrameValues = 65535;

bool is_float_op(uint32_t op) {
  return (op >= 0x5b && op <= 0x66) || (op >= 0x8b && op <= 0xa6) || (op >= 0xa8 && op <= 0xab) ||
         (op >= 0xae && op <= 0xbb);
}

struct NumSig { uint8_t arity; ValType a, b, r; };

NumSig num_sig(uint32_t op) {
  using V = ValType;
  auto U = [](V a, V r) { return NumSig{1, a, a, r}; };
  auto B = [](V a, V r) { return NumSig{2, a, a, r}; };
  if (op == 0x45) return U(V::I32, V::I32);
  if (op <= 0x4f) return B(V::I32, V::I32);
  if (op == 0x50) return U(V::I64, V::I32);
  if (op <= 0x5a) return B(V::I64, V::I32);
  if (op <= 0x60) return B(V::F32, V::I32);
  if (op <= 0x66) return B(V::F64, V::I32);
  if (op <= 0x69) return U(V::I32, V::I32);
  if (op <= 0x78) return B(V::I32, V::I32);
  if (op <= 0x7b) return U(V::I64, V::I64);
  if (op <= 0x8a) return B(V::I64, V::I64);
  if (op <= 0x91) return U(V::F32, V::F32);
  if (op <= 0x98) return B(V::F32, V::F32);
  if (op <= 0x9f) return U(V::F64, V::F64);
  if (op <= 0xa6) return B(V::F64, V::F64);
  switch (op) {
    case 0xa7: return U(V::I64, V::I32);
    case 0xa8: case 0xa9: return U(V::F32, V::I32);
    case 0xaa: case 0xab: return U(V::F64, V::I32);
    case 0xac: case 0xad: return U(V::I32, V::I64);
    case 0xae: case 0xaf: return U(V::F32, V::I64);
    case 0xb0: case 0xb1: return U(V::F64, V::I64);
    case 0xb2: case 0xb3: return U(V::I32, V::F32);
    case 0xb4: case 0xb5: return U(V::I64, V::F32);
    case 0xb6: return U(V::F64, V::F32);
    case 0xb7: case 0xb8: return U(V::I32, V::F64);
    case 0xb9: case 0xba: return U(V::I64, V::F64);
    case 0xbb: return U(V::F32, V::F64);
    case 0xbc: return U(V::F32, V::I32);
    case 0xbd: return U(V::F64, V::I64);
    case 0xbe: return U(V::I32, V::F32);
    case 0xbf: return U(V::I64, V::F64);
    case 0xc0: case 0xc1: return U(V::I32, V::I32);
    default: return U(V::I64, V::I64);  // 0xc2..0xc4
  }
}

class FuncCompiler {
 public:
  FuncCompiler(ModuleImpl& m, uint32_t def_index, const std::set<uint32_t>& refs,
               std::vector<uint32_t>& local_calls)
      : m_(m), def_(def_index), refs_(refs), local_calls_(local_calls), body_(m.bodies[def_index]),
        ft_(m.types[m.funcs[m.num_imported_funcs + def_index]]), code_(m.code),
        in_(m.bytes.data(), body_.body_offset, body_.body_end) {}

  CompiledFunc run() {
    CompiledFunc cf;
    cf.type_index = m_.funcs[m_.num_imported_funcs + def_];
    cf.type_id = m_.type_ids[cf.type_index];
    cf.code = uint32_t(code_.size());
    const size_t offsets_begin = m_.code_offsets.size(), calls_begin = local_calls_.size();
    cf.num_params = uint32_t(ft_.params.size());
    cf.num_results = uint32_t(ft_.results.size());
    cf.num_locals = uint32_t(body_.locals.size());
    locals_ = ft_.params;
    locals_.insert(locals_.end(), body_.locals.begin(), body_.locals.end());
    L_ = uint32_t(locals_.size());
    refs_of_.resize(L_);
    Ctrl fc;
    fc.kind = kFunc;
    fc.results = &ft_.results;
    fc.height = 0;
    ctrls_.push_back(std::move(fc));
    new_region();
    // The entry fuel check (if any) belongs to the function's first instruction.
    if (code_.size() > cf.code) m_.code_offsets.emplace_back(cf.code, uint32_t(body_.body_offset));
    while (!ctrls_.empty()) {
      if (in_.at_end()) throw DecodeError{in_.pos(), "unexpected end of section or function", true};
      step();
    }
    if (!in_.at_end()) throw DecodeError{in_.pos(), "section size mismatch: operators after function end", true};
    uint64_t cost = uint64_t(cf.num_locals) + max_height_;
    if (cost > kMaxFrameValues) frame_too_large();
    cf.cost = uint32_t(cost);
    cf.frame_slots = L_ + max_height_;
    // Twice: a run copied in the first pass may end in a branch to another short run (an
    // interpreter's shared `sp++` tail, then its loop head).
    for (int pass = 0; pass < (on(FuseFamily::kJumpThreading) ? 2 : 0); ++pass)
      thread_jumps(m_, cf.code, offsets_begin, local_calls_, calls_begin, uint32_t(body_.body_offset));
    return cf;
  }

 private:
  enum Kind : uint8_t { kBlock, kLoop, kIf, kElse, kFunc };
  // An operand: in its home slot, or virtual: a reference to a local (local >= 0) or a
  // constant (is_const) not yet written anywhere.
  struct Opd { ValType t; int32_t local; bool is_const = false; uint64_t cval = 0; };
  // One per open block (a hostile body nests 10^6 deep): the block type's params and results
  // point at the module's types (or at block_type's one-value lists), not copies.
  static inline const std::vector<ValType> kNoTypes;
  struct Ctrl {
    const std::vector<ValType>* params = &kNoTypes;
    const std::vector<ValType>* results = &kNoTypes;
    std::vector<uint32_t> patches;
    size_t outer_fuel_pos = SIZE_MAX;  // loops: the enclosing region's fuel word
    uint32_t height = 0;
    uint32_t start_pc = 0;
    uint32_t else_patch = UINT32_MAX;
    Kind kind = kBlock;
    bool unreachable = false;  // validation: the stack is polymorphic after br/return/...
    bool dead = false;         // code generation: the block was entered in unreachable code
  };

  // --- decoding (the bytes come from in_) ---
  ValType valtype() {
    size_t at = in_.pos();
    uint8_t b = in_.u8();
    switch (b) {
      case 0x7f: case 0x7e: case 0x7d: case 0x7c: case 0x70: case 0x6f: return ValType(b);
      default: throw DecodeError{at, "malformed value type", true};
    }
  }
  ValType reftype() {
    size_t at = in_.pos();
    uint8_t b = in_.u8();
    if (b != 0x70 && b != 0x6f) throw DecodeError{at, "malformed reference type", true};
    return ValType(b);
  }

  void block_type(Ctrl& c) {
    static const std::vector<ValType> kOne[] = {{ValType::I32}, {ValType::I64}, {ValType::F32},
                                                {ValType::F64}, {ValType::FuncRef}, {ValType::ExternRef}};
    size_t at = in_.pos();
    uint8_t b = in_.peek();
    if (b == 0x40) { in_.skip(1); return; }
    if (b == 0x7f || b == 0x7e || b == 0x7d || b == 0x7c || b == 0x70 || b == 0x6f) {
      in_.skip(1);
      for (const auto& one : kOne)
        if (one[0] == ValType(b)) c.results = &one;
      return;
    }
    int64_t idx = in_.sleb(33);
    if (idx < 0) throw DecodeError{at, "malformed value type", true};
    if (uint64_t(idx) >= m_.types.size()) invalid(at, "unknown type");
    c.params = &m_.types[idx].params;
    c.results = &m_.types[idx].results;
  }

  // --- operand stack ---
  bool live() const { return !ctrls_.back().unreachable && !ctrls_.back().dead; }
  uint32_t home(size_t i) const { return L_ + uint32_t(i); }
  uint32_t slot(size_t i) const { return vals_[i].local >= 0 ? uint32_t(vals_[i].local) : home(i); }
  // Slot of the k-th value from the top (0 = top), or 0 if it is in the polymorphic region.
  // A virtual constant is written to its home slot first.
  uint32_t top_slot(size_t k) {
    if (vals_.size() <= ctrls_.back().height + k) return 0;
    size_t i = vals_.size() - 1 - k;
    if (vals_[i].is_const) materialize(i);
    return slot(i);
  }
  bool top_is_const(size_t k) const {
    return vals_.size() > ctrls_.back().height + k && vals_[vals_.size() - 1 - k].is_const;
  }
  uint64_t top_const(size_t k) const { return vals_[vals_.size() - 1 - k].cval; }
  void push_const(ValType t, uint64_t v) {
    push(t);
    vals_.back().is_const = true;
    vals_.back().cval = v;
    // last_dst_ stays, as for local.get: a constant emits nothing, so the value below it may
    // still fuse into their consumer (`(x << k) + imm`); users of last_dst_ check slots.
  }
  void push(ValType t) {
    vals_.push_back(Opd{t, -1});
    if (vals_.size() > max_height_) {
      max_height_ = uint32_t(vals_.size());
      // Checked as the stack grows (not only at the end), so a hostile body cannot make the
      // operand stack, and every walk over it, larger than the frame limit.
      if (uint64_t(body_.locals.size()) + max_height_ > kMaxFrameValues) frame_too_large();
    }
    virtual_from_ = std::min(virtual_from_, vals_.size() - 1);
  }
  [[noreturn]] void frame_too_large() {
    invalid(body_.body_offset, "function frame too large: locals + operand stack exceed 65535 values");
  }
  // Operand i becomes a reference to local x (local.get, local.tee); refs_of_[x] lists such
  // operands in ascending index order (entries may be stale: materialized or popped), so the
  // compiler finds the references to one local without walking the whole operand stack.
  void set_local_ref(size_t i, uint32_t x) {
    vals_[i].local = int32_t(x);
    auto& l = refs_of_[x];
    while (!l.empty() && l.back() >= i) l.pop_back();
    l.push_back(uint32_t(i));
  }
  // Whether an operand still refers to local x (drops stale entries on the way).
  bool has_local_ref(uint32_t x) {
    auto& l = refs_of_[x];
    size_t kept = 0;
    for (uint32_t i : l)
      if (i < vals_.size() && vals_[i].local == int32_t(x)) l[kept++] = i;
    l.resize(kept);
    return kept > 0;
  }
  // Validates the top values against `ts` as pop_vals would, without popping them (a branch
  // that falls through keeps its operands, virtual ones included).
  void check_top(const std::vector<ValType>& ts) {
    const Ctrl& c = ctrls_.back();
    for (size_t k = 0; k < ts.size(); ++k) {
      ValType expect = ts[ts.size() - 1 - k];
      if (vals_.size() <= c.height + k) {
        if (c.unreachable) return;
        invalid(op_at_, std::string("type mismatch: expected ") + val_type_name(expect) + " but nothing on stack");
      }
      ValType t = vals_[vals_.size() - 1 - k].t;
      if (t != kUnknown && t != expect)
        invalid(op_at_, std::string("type mismatch: expected ") + val_type_name(expect) + ", got " + val_type_name(t));
    }
  }
  // Pushes and returns the result slot.
  uint32_t push_result(ValType t) {
    push(t);
    return home(vals_.size() - 1);
  }
  ValType pop(ValType expect = kUnknown) {
    Ctrl& c = ctrls_.back();
    if (vals_.size() == c.height) {
      if (c.unreachable) return expect;
      invalid(op_at_, std::string("type mismatch: expected ") + (expect == kUnknown ? "a value" : val_type_name(expect)) + " but nothing on stack");
    }
    ValType t = vals_.back().t;
    vals_.pop_back();
    if (expect != kUnknown && t != kUnknown && t != expect)
      invalid(op_at_, std::string("type mismatch: expected ") + val_type_name(expect) + ", got " + val_type_name(t));
    return t;
  }
  void pop_vals(const std::vector<ValType>& ts) {
    for (size_t i = ts.size(); i-- > 0;) pop(ts[i]);
  }
  void push_vals(const std::vector<ValType>& ts) {
    for (ValType t : ts) push(t);
  }
  void set_unreachable() {
    Ctrl& c = ctrls_.back();
    vals_.resize(c.height);
    c.unreachable = true;
  }
  const std::vector<ValType>& label_types(const Ctrl& c) const { return c.kind == kLoop ? *c.params : *c.results; }
  Ctrl& label(uint32_t depth) {
    if (depth >= ctrls_.size()) invalid(op_at_, "unknown label");
    return ctrls_[ctrls_.size() - 1 - depth];
  }

  // --- emission ---
  void emit(std::initializer_list<uint32_t> words) {
    last_dst_ = SIZE_MAX;
    if (!live()) return;
    code_.insert(code_.end(), words);
  }
  // A "simple" instruction: reads all operands before writing dst (its last word).
  void emit_simple(std::initializer_list<uint32_t> words) {
    if (!live()) { last_dst_ = SIZE_MAX; return; }
    note_op(code_.size());
    code_.insert(code_.end(), words);
    last_dst_ = code_.size() - 1;
  }
  // The current code index. Every branch target is taken through here, so it also ends the
  // window in which the next instruction may be fused into the previous one (a fused pair
  // must not have a jump landing between its halves).
  uint32_t pc() {
    fuse_copy_at_ = SIZE_MAX;
    label_pos_ = code_.size();
    return uint32_t(code_.size());
  }
  // Records where the instruction just emitted starts (the compare that br_if / if fuses).
  void note_op(size_t pos) { last_op_pos_ = pos; }
  // What fusion.cc's rules see of the code so far.
  FusionWindow fusion_window() const { return FusionWindow{code_, fuse_off_}; }
  // Replaces the instructions from `at` to the end of the code (producers being fused into
  // their consumer; operands already read out of them) with one instruction `words..., dst`:
  // pops the consumer's operands (types in pop order, still validated), pushes its result.
  void emit_fused(size_t at, std::initializer_list<ValType> pops, ValType result,
                  std::initializer_list<uint32_t> words) {
    emit_fused(at, pops, result, std::span<const uint32_t>(words.begin(), words.size()));
  }
  void emit_fused(size_t at, std::initializer_list<ValType> pops, ValType result, std::span<const uint32_t> words) {
    code_.resize(at);
    for (ValType t : pops) pop(t);
    uint32_t d = push_result(result);
    // Several instructions replaced: the ones before `at` are no longer known contiguous.
    last_op_pos_ = at;
    code_.insert(code_.end(), words.begin(), words.end());
    code_.push_back(d);
    last_dst_ = code_.size() - 1;
  }
  // A rule's replacement: emit_fused, or when it replaces nothing (at the end of the code),
  // the consumer emitted as a simple instruction `words..., dst`.
  void apply_fused(const Fused& f, std::initializer_list<ValType> pops, ValType result) {
    if (f.at < code_.size()) {
      emit_fused(f.at, pops, result, f.words);
      return;
    }
    for (ValType t : pops) pop(t);
    uint32_t d = push_result(result);
    if (!live()) { last_dst_ = SIZE_MAX; return; }
    note_op(code_.size());
    code_.insert(code_.end(), f.words.begin(), f.words.end());
    code_.push_back(d);
    last_dst_ = code_.size() - 1;
  }
  // A slot copy. Copies in a row (a loop's rotating locals, a branch's values) become one
  // kCopy2 or kCopyN, and copies followed by `br` become kCopyBr / kCopyNBr (see emit_br): one
  // dispatch instead of several (copies were 7-20% of executed instructions in the benchmark
  // kernels; SHA-256's round ends with six).
  void emit_copy(uint32_t src, uint32_t dst) {
    last_dst_ = SIZE_MAX;
    if (!live()) return;
    switch (fusable_copies()) {
      case 1:
        code_[fuse_copy_at_] = kCopy2;
        code_.insert(code_.end(), {src, dst});
        return;
      case 2:
        code_[fuse_copy_at_] = kCopyN;
        code_.insert(code_.begin() + std::ptrdiff_t(fuse_copy_at_) + 1, 3);
        code_.insert(code_.end(), {src, dst});
        return;
      case 0: break;
      default:
        code_[fuse_copy_at_ + 1]++;
        code_.insert(code_.end(), {src, dst});
        return;
    }
    fuse_copy_at_ = code_.size();
    code_.insert(code_.end(), {kCopy, src, dst});
  }
  // How many copies the copy instruction at fuse_copy_at_ makes, if it ends the code (so the
  // next copy or branch may join it); 0 if there is none.
  uint32_t fusable_copies() const {
    if (!on(FuseFamily::kCopyRun) || fuse_copy_at_ == SIZE_MAX) return 0;
    uint32_t op = code_[fuse_copy_at_];
    if (op == kCopy && fuse_copy_at_ + 3 == code_.size()) return 1;
    if (op == kCopy2 && fuse_copy_at_ + 5 == code_.size()) return 2;
    if (op == kCopyN && fuse_copy_at_ + 2 + 2 * size_t(code_[fuse_copy_at_ + 1]) == code_.size()) return code_[fuse_copy_at_ + 1];
    return 0;
  }
  // An unconditional branch; returns the index of its target word.
  size_t emit_br(uint32_t target) {
    last_dst_ = SIZE_MAX;
    switch (fusable_copies()) {
      case 0: code_.insert(code_.end(), {kBr, target}); break;
      case 1:
        code_[fuse_copy_at_] = kCopyBr;
        code_.push_back(target);
        break;
      case 2:
        code_[fuse_copy_at_] = kCopyNBr;
        code_.insert(code_.begin() + std::ptrdiff_t(fuse_copy_at_) + 1, 2);
        code_.push_back(target);
        break;
      default:
        code_[fuse_copy_at_] = kCopyNBr;
        code_.push_back(target);
        break;
    }
    fuse_copy_at_ = SIZE_MAX;
    return code_.size() - 1;
  }
  void materialize(size_t i) {
    if (vals_[i].is_const) {
      uint64_t v = vals_[i].cval;
      vals_[i].is_const = false;
      if (vals_[i].t == ValType::I32 || vals_[i].t == ValType::F32) emit({kConst32, uint32_t(v), home(i)});
      else emit({kConst64, uint32_t(v), uint32_t(v >> 32), home(i)});
      return;
    }
    if (vals_[i].local < 0) return;
    emit_copy(uint32_t(vals_[i].local), home(i));
    vals_[i].local = -1;
  }
  // Operands below virtual_from_ are all in their home slots (values become virtual only when
  // pushed), so a block start materializes only what was pushed since the last one.
  void materialize_all() {
    if (!live()) return;
    for (size_t i = std::max<size_t>(ctrls_.back().height, virtual_from_); i < vals_.size(); ++i) materialize(i);
    // Values below this block's base may be virtual too: a block body may write their local.
    for (size_t i = virtual_from_; i < vals_.size(); ++i) materialize(i);
    virtual_from_ = vals_.size();
  }
  void materialize_top(size_t n) {
    if (!live()) return;
    size_t h = ctrls_.back().height;
    for (size_t i = vals_.size() >= n ? vals_.size() - n : 0; i < vals_.size(); ++i)
      if (i >= h) materialize(i);
  }
  void materialize_local(uint32_t x) {
    if (!live()) return;
    for (uint32_t i : refs_of_[x])
      if (i < vals_.size() && vals_[i].local == int32_t(x)) materialize(i);
    refs_of_[x].clear();
  }
  // Starts a fuel region (the function body, or a loop body): with metering, one charge
  // (kFuelCheck, which also polls the interrupt flag) whose amount every instruction of the
  // region increments, except those inside nested loops, which are regions of their own. See
  // DESIGN.md "Fuel": a region is charged its static size each time it is entered.
  void new_region() {
    fuel_pos_ = SIZE_MAX;
    if (m_.options.metering && live()) {
      emit({uint32_t(kFuelCheck), 0});
      fuel_pos_ = code_.size() - 1;
    }
  }
  void count_instr() {
    if (fuel_pos_ != SIZE_MAX && live()) code_[fuel_pos_]++;
  }
  void bind(Ctrl& c) {
    uint32_t here = pc();
    for (uint32_t p : c.patches) code_[p] = here;
    c.patches.clear();
  }
  // Moves the top n values (already in home slots) to the label's slots and jumps.
  void emit_branch(Ctrl& target, bool is_return) {
    if (!live()) return;
    size_t n = label_types(target).size();
    materialize_top(n);
    size_t from = vals_.size() - n;
    if (is_return) {
      emit({kReturn, home(from), uint32_t(n)});
      return;
    }
    for (size_t i = 0; i < n; ++i)
      if (home(from + i) != home(target.height + i)) emit_copy(home(from + i), home(target.height + i));
    if (target.kind == kLoop) {
      emit_br(target.start_pc);
    } else {
      target.patches.push_back(uint32_t(emit_br(0)));
    }
  }
  bool needs_copies(const Ctrl& target) const {
    size_t n = label_types(target).size();
    return n > 0 && vals_.size() - n != target.height;
  }

  void check_memory() {
    if (m_.memories.empty()) invalid(op_at_, "unknown memory 0");
  }
  uint32_t memarg(uint32_t natural_log2) {
    size_t at = in_.pos();
    uint32_t align = in_.u32();
    uint32_t offset = in_.u32();
    check_memory();
    if (align > natural_log2) invalid(at, "alignment must not be larger than natural");
    return offset;
  }
  void check_table(uint32_t t) {
    if (t >= m_.tables.size()) invalid(op_at_, "unknown table " + std::to_string(t));
  }
  void check_elem(uint32_t e) {
    if (e >= m_.elems.size()) invalid(op_at_, "unknown elem segment " + std::to_string(e));
  }
  void check_data(uint32_t d) {
    if (!m_.data_count) invalid(op_at_, "data count section required");
    if (d >= *m_.data_count) invalid(op_at_, "unknown data segment " + std::to_string(d));
  }

  void do_call(uint32_t type_index, std::initializer_list<uint32_t> head, bool tail) {
    const FuncType& t = m_.types[type_index];
    if (tail) {
      if (t.results != ft_.results) invalid(op_at_, "type mismatch: tail call result types differ");
    }
    materialize_top(t.params.size());
    uint32_t base = live() ? home(vals_.size() - t.params.size()) : 0;
    pop_vals(t.params);
    std::vector<uint32_t> w(head);
    w.push_back(base);
    if (live()) code_.insert(code_.end(), w.begin(), w.end());
    last_dst_ = SIZE_MAX;
    if (tail) {
      set_unreachable();
    } else {
      push_vals(t.results);
    }
  }

  void numeric(uint32_t op) {
    NumSig s = num_sig(op);
    bool nondet = m_.options.deterministic && (is_float_op(op) || is_trunc_sat(op));
    bool is_copy = op == 0xa7 || (op >= 0xbc && op <= 0xbf);
    if (s.arity == 1) {
      uint32_t a = top_slot(0);
      pop(s.a);
      uint32_t d = push_result(s.r);
      if (nondet) emit({kNondet});
      else if (is_copy) emit_simple({kCopy, a, d});
      else emit_simple({op, a, d});
    } else {
      if (fuse_ && !nondet && live()) {
        bool commutes = op == 0x46 || op == 0x47 || op == 0x6a || op == 0x6c || (op >= 0x71 && op <= 0x73) ||
                        op == 0x51 || op == 0x52 || op == 0x7c || op == 0x7e || (op >= 0x83 && op <= 0x85);
        int k = -1;  // which operand (0 = top = b) becomes the immediate
        if (top_is_const(0) && immediate_ok(op, top_const(0))) k = 0;
        else if (commutes && top_is_const(1) && immediate_ok(op, top_const(1))) k = 1;
        if (k >= 0) {
          // The constant as an immediate (fusion.cc's immediate rules: one always applies).
          uint64_t v = top_const(size_t(k));
          uint32_t a = top_slot(size_t(1 - k));
          FusionConsumer c{op, {a, 0}, {fresh_producer(size_t(1 - k)), SIZE_MAX}, v};
          if (auto f = fuse_immediate(fusion_window(), c)) {
            apply_fused(*f, {s.b, s.a}, s.r);
            return;
          }
        }
      }
      if (fuse_ && live() && !nondet && !top_is_const(0) && !top_is_const(1)) {
        // The peephole fusions into the instructions just before (fusion.cc's rule table).
        FusionConsumer c{op, {top_slot(0), top_slot(1)}, {fresh_producer(0), fresh_producer(1)}};
        if (auto f = fuse_binary(fusion_window(), c)) {
          emit_fused(f->at, {s.b, s.a}, s.r, f->words);
          return;
        }
      }
      uint32_t b = top_slot(0), a = top_slot(1);
      pop(s.b);
      pop(s.a);
      uint32_t d = push_result(s.r);
      if (nondet) emit({kNondet});
      else emit_simple({op, a, b, d});
    }
  }

  // If the last emitted instruction is a compare (or eqz) writing `cond_slot`, turns it into a
  // fused compare-and-branch and returns the index of its target word; else SIZE_MAX.
  size_t fuse_compare(uint32_t cond_slot, bool branch_if_true) {
    if (!on(FuseFamily::kCompareBranch) || !live() || last_dst_ == SIZE_MAX || last_dst_ != code_.size() - 1 || code_[last_dst_] != cond_slot) return SIZE_MAX;
    std::optional<uint32_t> fused = compare_branch_op(code_[last_op_pos_], branch_if_true);
    if (!fused) return SIZE_MAX;
    code_[last_op_pos_] = *fused;
    last_dst_ = SIZE_MAX;
    return code_.size() - 1;
  }

  void step();
  void step_inner();

  // If the value k from the top was computed by the instruction emitted last (still in its
  // home slot, nothing emitted since, no label in between), returns that instruction's
  // position; else SIZE_MAX. Such an instruction may be fused into its consumer.
  size_t fresh_producer(size_t k) const {
    if (!live() || last_dst_ == SIZE_MAX || last_dst_ + 1 != code_.size()) return SIZE_MAX;
    if (vals_.size() <= ctrls_.back().height + k) return SIZE_MAX;
    size_t i = vals_.size() - 1 - k;
    if (vals_[i].is_const || vals_[i].local >= 0 || code_[last_dst_] != home(i)) return SIZE_MAX;
    return last_op_pos_;
  }
  // After replacing the instruction at `pos` with a fused one that can trap for the current
  // wasm instruction: the backtrace offset of `pos` becomes this instruction's.
  void retag_offset(size_t pos) {
    auto& offs = m_.code_offsets;
    if (!offs.empty() && offs.back().first == pos) offs.back().second = uint32_t(op_at_);
    else offs.emplace_back(uint32_t(pos), uint32_t(op_at_));
  }

  ModuleImpl& m_;
  const bool fuse_ = m_.options.compile.fuse;  // CompileOptions::fuse: the fused forms at all
  const uint32_t fuse_off_ = m_.options.compile.fuse_off;  // the families left out
  bool on(FuseFamily f) const { return fuse_ && !(fuse_off_ & fuse_bit(f)); }
  uint32_t def_;
  const std::set<uint32_t>& refs_;
  std::vector<uint32_t>& local_calls_;  // positions of kCallLocal, completed after compilation
  const FuncBody& body_;
  const FuncType& ft_;
  std::vector<uint32_t>& code_;
  ByteCursor in_;
  size_t op_at_ = 0;
  std::vector<ValType> locals_;
  uint32_t L_ = 0;
  std::vector<Opd> vals_;
  size_t virtual_from_ = 0;  // see materialize_all
  std::vector<std::vector<uint32_t>> refs_of_;  // per local: see set_local_ref
  std::deque<Ctrl> ctrls_;  // a deque: growing it never copies the whole nest
  uint32_t max_height_ = 0;
  size_t last_dst_ = SIZE_MAX;
  size_t last_op_pos_ = SIZE_MAX;
  size_t label_pos_ = 0;  // the last code index handed out as a branch target (see pc())
  size_t fuel_pos_ = SIZE_MAX;
  size_t fuse_copy_at_ = SIZE_MAX;  // start of the last emitted kCopy while it may be fused
};

void FuncCompiler::step() {
  size_t before = code_.size();
  step_inner();
  // Backtraces map a pc back to the wasm instruction that emitted it (trap path only).
  if (code_.size() > before) m_.code_offsets.emplace_back(uint32_t(before), uint32_t(op_at_));
}

void FuncCompiler::step_inner() {
  op_at_ = in_.pos();
  uint32_t op = in_.u8();
  if (op != 0x0b && op != 0x05) count_instr();
  switch (op) {
    case 0x00:  // unreachable
      emit({kUnreachable});
      set_unreachable();
      break;
    case 0x01: break;
    case 0x02: case 0x03: case 0x04: {  // block loop if
      Ctrl c;
      c.kind = op == 0x02 ? kBlock : op == 0x03 ? kLoop : kIf;
      block_type(c);
      uint32_t cond = 0, cond_home = UINT32_MAX;
      if (op == 0x04) {
        cond = top_slot(0);
        if (vals_.size() > ctrls_.back().height) cond_home = home(vals_.size() - 1);
        pop(ValType::I32);
      }
      materialize_all();
      pop_vals(*c.params);
      push_vals(*c.params);
      if (op == 0x04 && live()) {
        size_t at = cond == cond_home ? fuse_compare(cond, false) : SIZE_MAX;
        if (at != SIZE_MAX) {
          c.else_patch = uint32_t(at);
        } else {
          emit({kBrIfZ, cond, 0});
          c.else_patch = pc() - 1;
        }
      }
      c.height = uint32_t(vals_.size() - c.params->size());
      c.dead = !live();
      // Only a loop's start is a branch target (pc() ends the fusion window); a block's or an
      // if's start is reached from the instruction before it alone.
      c.start_pc = op == 0x03 ? pc() : 0;
      ctrls_.push_back(std::move(c));
      last_dst_ = SIZE_MAX;
      if (op == 0x03) {
        ctrls_.back().outer_fuel_pos = fuel_pos_;
        new_region();
        ctrls_.back().start_pc = fuel_pos_ != SIZE_MAX ? uint32_t(fuel_pos_ - 1) : pc();
      }
      break;
    }
    case 0x05: {  // else
      Ctrl& c = ctrls_.back();
      if (c.kind != kIf) invalid(op_at_, "else without matching if");
      if (live()) {
        for (size_t i = c.height; i < vals_.size(); ++i) materialize(i);
      }
      pop_vals(*c.results);
      if (vals_.size() != c.height) invalid(op_at_, "type mismatch: values remaining on stack at end of block");
      // Fallthrough of the then-arm jumps to the end.
      if (live()) c.patches.push_back(uint32_t(emit_br(0)));
      c.kind = kElse;
      c.unreachable = false;
      if (c.else_patch != UINT32_MAX) code_[c.else_patch] = pc();
      c.else_patch = UINT32_MAX;
      push_vals(*c.params);
      last_dst_ = SIZE_MAX;
      break;
    }
    case 0x0b: {  // end
      Ctrl& c = ctrls_.back();
      // Results of the fallthrough path go to their home slots.
      if (live()) {
        for (size_t i = c.height; i < vals_.size(); ++i) materialize(i);
      }
      pop_vals(*c.results);
      if (vals_.size() != c.height) invalid(op_at_, "type mismatch: values remaining on stack at end of block");
      if (c.kind == kIf && *c.params != *c.results) invalid(op_at_, "type mismatch: if without else must have matching param and result types");
      if (c.kind == kFunc) {
        if (live()) emit({kReturn, home(c.height), uint32_t(c.results->size())});
        // A branch to the function label is a return; it was emitted as such.
        ctrls_.pop_back();
        return;
      }
      bool was_live = live();
      Ctrl done = std::move(c);
      ctrls_.pop_back();
      bool outer_live = live();
      if (done.kind == kIf && done.else_patch != UINT32_MAX) done.patches.push_back(done.else_patch);
      (void)was_live;
      if (outer_live) bind(done);
      push_vals(*done.results);
      last_dst_ = SIZE_MAX;
      // After a loop, instructions count towards the enclosing region again.
      if (done.kind == kLoop) fuel_pos_ = done.outer_fuel_pos;
      break;
    }
    case 0x0c: {  // br
      uint32_t d = in_.u32();
      Ctrl& t = label(d);
      materialize_top(label_types(t).size());
      pop_vals(label_types(t));
      push_vals(label_types(t));
      emit_branch(t, &t == &ctrls_[0]);
      set_unreachable();
      break;
    }
    case 0x0d: {  // br_if
      uint32_t d = in_.u32();
      Ctrl& t = label(d);
      uint32_t cond = top_slot(0);
      uint32_t cond_home = vals_.size() > ctrls_.back().height ? home(vals_.size() - 1) : UINT32_MAX;
      pop(ValType::I32);
      const auto& lt = label_types(t);
      materialize_top(lt.size());
      if (live()) {
        check_top(lt);
      } else {
        pop_vals(lt);
        push_vals(lt);
      }
      if (live()) {
        bool is_ret = &t == &ctrls_[0];
        if (!is_ret && !needs_copies(t)) {
          size_t at = cond == cond_home ? fuse_compare(cond, true) : SIZE_MAX;
          bool nz = at == SIZE_MAX;
          if (nz) {
            emit({kBrIfNz, cond, 0});
            at = code_.size() - 1;
          }
          if (t.kind == kLoop) code_[at] = t.start_pc;
          else t.patches.push_back(uint32_t(at));
        } else {
          emit({kBrIfZ, cond, 0});
          uint32_t skip = pc() - 1;
          emit_branch(t, is_ret);
          code_[skip] = pc();
        }
      }
      last_dst_ = SIZE_MAX;
      break;
    }
    case 0x0e: {  // br_table
      uint32_t n = in_.u32();
      if (uint64_t(n) > in_.remaining()) throw DecodeError{in_.pos(), "unexpected end", true};
      std::vector<uint32_t> depths(n + 1);
      for (uint32_t i = 0; i <= n; ++i) depths[i] = in_.u32();
      uint32_t idx = top_slot(0);
      pop(ValType::I32);
      size_t arity = label_types(label(depths[n])).size();
      // Each distinct label's types are checked once (a table may repeat a label 10^6 times).
      std::unordered_set<uint32_t> checked;
      for (uint32_t i = 0; i <= n; ++i) {
        const auto& lt = label_types(label(depths[i]));
        if (lt.size() != arity) invalid(op_at_, "type mismatch: br_table labels have inconsistent arity");
        if (arity > 0 && checked.insert(depths[i]).second) check_top(lt);
      }
      if (live()) {
        materialize_top(arity);
        emit({kBrTable, idx, n + 1});
        last_dst_ = SIZE_MAX;
        size_t table = code_.size();
        code_.resize(code_.size() + n + 1);
        // One branch stub (copies then br, or a return) per distinct label that needs one,
        // shared by every entry naming it: the code grows with the labels, not the table.
        std::unordered_map<uint32_t, uint32_t> stub_at;
        for (uint32_t i = 0; i <= n; ++i) {
          Ctrl& t = label(depths[i]);
          bool is_ret = &t == &ctrls_[0];
          if (is_ret || needs_copies(t)) {
            auto [it, fresh] = stub_at.emplace(depths[i], 0);
            if (fresh) {
              it->second = pc();
              emit_branch(t, is_ret);
            }
            code_[table + i] = it->second;
          } else if (t.kind == kLoop) {
            code_[table + i] = t.start_pc;
          } else {
            t.patches.push_back(uint32_t(table + i));
          }
        }
      }
      pop_vals(label_types(label(depths[n])));
      set_unreachable();
      break;
    }
    case 0x0f: {  // return
      materialize_top(ft_.results.size());
      pop_vals(ft_.results);
      push_vals(ft_.results);
      emit_branch(ctrls_[0], true);
      set_unreachable();
      break;
    }
    case 0x10: case 0x12: {  // call, return_call
      uint32_t f = in_.u32();
      if (f >= m_.funcs.size()) invalid(op_at_, "unknown function " + std::to_string(f));
      if (op == 0x10 && f >= m_.num_imported_funcs) {
        // A call within the module: the callee is known, so the call needs no FuncInst (see
        // kCallLocal); its code start and frame facts are filled in by compile_functions.
        bool emits = live();
        do_call(m_.funcs[f], {uint32_t(kCallLocal), f - m_.num_imported_funcs}, false);
        if (emits) {  // the call is the last 3 words (argument copies may precede it)
          local_calls_.push_back(uint32_t(code_.size() - 3));
          code_.insert(code_.end(), {0, 0, 0, 0});
        }
        break;
      }
      do_call(m_.funcs[f], {op == 0x10 ? uint32_t(kCall) : uint32_t(kReturnCall), f}, op == 0x12);
      break;
    }
    case 0x11: case 0x13: {  // call_indirect, return_call_indirect
      uint32_t ti = in_.u32();
      size_t tat = in_.pos();
      uint32_t table = in_.u32();
      (void)tat;
      if (ti >= m_.types.size()) invalid(op_at_, "unknown type " + std::to_string(ti));
      check_table(table);
      if (m_.tables[table].elem != ValType::FuncRef) invalid(op_at_, "type mismatch: call_indirect on a non-funcref table");
      uint32_t idx = top_slot(0);
      pop(ValType::I32);
      do_call(ti, {op == 0x11 ? uint32_t(kCallIndirect) : uint32_t(kReturnCallIndirect), ti, table, idx}, op == 0x13);
      break;
    }
    case 0x1a:  // drop
      pop();
      last_dst_ = SIZE_MAX;
      break;
    case 0x1b: case 0x1c: {  // select
      ValType want = kUnknown;
      if (op == 0x1c) {
        uint32_t n = in_.u32();
        if (n != 1) invalid(op_at_, "invalid result arity");
        want = valtype();
      }
      uint32_t c = top_slot(0), b = top_slot(1), a = top_slot(2);
      pop(ValType::I32);
      ValType t2 = pop(want);
      ValType t1 = pop(want);
      ValType t = want;
      if (op == 0x1b) {
        if (t1 != kUnknown && t2 != kUnknown && t1 != t2) invalid(op_at_, "type mismatch");
        t = t1 != kUnknown ? t1 : t2;
        if (t != kUnknown && is_ref(t)) invalid(op_at_, "type mismatch: select without type needs numeric operands");
      }
      uint32_t d = push_result(t);
      emit_simple({kSelect, a, b, c, d});
      break;
    }
    case 0x20: {  // local.get
      uint32_t x = in_.u32();
      if (x >= L_) invalid(op_at_, "unknown local " + std::to_string(x));
      push(locals_[x]);
      set_local_ref(vals_.size() - 1, x);
      // last_dst_ stays: local.get emits nothing, so the previous result may still be fused
      // into a later consumer (fresh_producer(1)); every user of last_dst_ also checks that
      // the slot it expects is the one written, which a local reference never is.
      break;
    }
    case 0x21: case 0x22: {  // local.set, local.tee
      uint32_t x = in_.u32();
      if (x >= L_) invalid(op_at_, "unknown local " + std::to_string(x));
      if (op == 0x21 && live() && top_is_const(0)) {
        // A constant goes straight into the local.
        uint64_t v = top_const(0);
        pop(locals_[x]);
        materialize_local(x);
        if (locals_[x] == ValType::I32 || locals_[x] == ValType::F32) emit({kConst32, uint32_t(v), x});
        else emit({kConst64, uint32_t(v), uint32_t(v >> 32), x});
        last_dst_ = SIZE_MAX;
        break;
      }
      if (live() && vals_.size() > ctrls_.back().height && vals_.back().local < 0 && !vals_.back().is_const &&
          last_dst_ != SIZE_MAX && last_dst_ == code_.size() - 1 && code_[last_dst_] == home(vals_.size() - 1)) {
        // The value was just computed into its home slot: compute it into the local instead.
        if (!has_local_ref(x)) {
          code_[last_dst_] = x;
          ValType t = pop(locals_[x]);
          if (op == 0x22) {
            push(t == kUnknown ? locals_[x] : t);
            set_local_ref(vals_.size() - 1, x);  // tee: the stack value is now local x
          }
          last_dst_ = SIZE_MAX;
          break;
        }
      }
      materialize_local(x);
      uint32_t s = top_slot(0);
      pop(locals_[x]);
      if (op == 0x21) {
        emit_copy(s, x);
      } else {
        push(locals_[x]);
        if (live() && s != x) emit_copy(s, x);
        last_dst_ = SIZE_MAX;
        // The value stays on the stack: in its home slot if it was there, otherwise (it was a
        // virtual local.get) as a reference to local x, which now holds the same value.
        if (s < L_) set_local_ref(vals_.size() - 1, x);
      }
      break;
    }
    case 0x23: {  // global.get
      uint32_t g = in_.u32();
      if (g >= m_.globals.size()) invalid(op_at_, "unknown global " + std::to_string(g));
      uint32_t d = push_result(m_.globals[g].type);
      emit_simple({kGlobalGet, g, d});
      break;
    }
    case 0x24: {  // global.set
      uint32_t g = in_.u32();
      if (g >= m_.globals.size()) invalid(op_at_, "unknown global " + std::to_string(g));
      if (!m_.globals[g].mut) invalid(op_at_, "global is immutable");
      uint32_t s = top_slot(0);
      pop(m_.globals[g].type);
      emit({kGlobalSet, g, s});
      break;
    }
    case 0x25: {  // table.get
      uint32_t t = in_.u32();
      check_table(t);
      uint32_t i = top_slot(0);
      pop(ValType::I32);
      uint32_t d = push_result(m_.tables[t].elem);
      emit_simple({kTableGet, t, i, d});
      break;
    }
    case 0x26: {  // table.set
      uint32_t t = in_.u32();
      check_table(t);
      uint32_t v = top_slot(0), i = top_slot(1);
      pop(m_.tables[t].elem);
      pop(ValType::I32);
      emit({kTableSet, t, i, v});
      break;
    }
    case 0x28: case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e: case 0x2f:
    case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: {
      static const uint8_t kNat[] = {2, 3, 2, 3, 0, 0, 1, 1, 0, 0, 1, 1, 2, 2};
      static const ValType kRes[] = {ValType::I32, ValType::I64, ValType::F32, ValType::F64,
                                     ValType::I32, ValType::I32, ValType::I32, ValType::I32,
                                     ValType::I64, ValType::I64, ValType::I64, ValType::I64,
                                     ValType::I64, ValType::I64};
      uint32_t off = memarg(kNat[op - 0x28]);
      size_t fresh = fuse_ ? fresh_producer(0) : SIZE_MAX;
      if (fresh != SIZE_MAX) {
        // The address computed just before and used only here (fusion.cc's load rules): one
        // fused load, trapping with the load's offset.
        FusionConsumer c{op, {top_slot(0), 0}, {fresh, SIZE_MAX}, off};
        if (auto f = fuse_load(fusion_window(), c)) {
          emit_fused(f->at, {ValType::I32}, kRes[op - 0x28], f->words);
          retag_offset(f->at);
          break;
        }
      }
      uint32_t a = top_slot(0);
      pop(ValType::I32);
      uint32_t d = push_result(kRes[op - 0x28]);
      emit_simple({load_op(LoadAddr::kSlot, op), a, off, d});
      break;
    }
    case 0x36: case 0x37: case 0x38: case 0x39: case 0x3a: case 0x3b: case 0x3c: case 0x3d: case 0x3e: {
      static const uint8_t kNat[] = {2, 3, 2, 3, 0, 1, 0, 1, 2};
      static const ValType kTy[] = {ValType::I32, ValType::I64, ValType::F32, ValType::F64, ValType::I32,
                                    ValType::I32, ValType::I64, ValType::I64, ValType::I64};
      uint32_t off = memarg(kNat[op - 0x36]);
      uint32_t v = top_slot(0), a = top_slot(1);
      pop(kTy[op - 0x36]);
      pop(ValType::I32);
      emit({load_op(LoadAddr::kSlot, op), a, v, off});
      break;
    }
    case 0x3f: case 0x40: {  // memory.size, memory.grow
      size_t at = in_.pos();
      if (in_.u8() != 0) throw DecodeError{at, "zero byte expected", true};
      check_memory();
      if (op == 0x3f) {
        uint32_t d = push_result(ValType::I32);
        emit_simple({kMemorySize, d});
      } else {
        uint32_t s = top_slot(0);
        pop(ValType::I32);
        uint32_t d = push_result(ValType::I32);
        emit({kMemoryGrow, s, d});
      }
      break;
    }
    case 0x41: push_const(ValType::I32, uint32_t(int32_t(in_.sleb(32)))); break;
    case 0x42: push_const(ValType::I64, uint64_t(in_.sleb(64))); break;
    case 0x43: push_const(ValType::F32, in_.fixed32()); break;
    case 0x44: push_const(ValType::F64, in_.fixed64()); break;
    case 0xd0: {  // ref.null
      ValType t = reftype();
      push_const(t, 0);
      break;
    }
    case 0xd1: {  // ref.is_null
      uint32_t s = top_slot(0);
      ValType t = pop();
      if (t != kUnknown && !is_ref(t)) invalid(op_at_, "type mismatch: ref.is_null needs a reference");
      uint32_t d = push_result(ValType::I32);
      emit_simple({kRefIsNull, s, d});
      break;
    }
    case 0xd2: {  // ref.func
      uint32_t f = in_.u32();
      if (f >= m_.funcs.size()) invalid(op_at_, "unknown function " + std::to_string(f));
      if (!refs_.count(f)) invalid(op_at_, "undeclared function reference");
      uint32_t d = push_result(ValType::FuncRef);
      emit_simple({kRefFunc, f, d});
      break;
    }
    case 0xfc: {
      uint32_t sub = in_.u32();
      if (sub <= 7) {
        static const ValType kIn[] = {ValType::F32, ValType::F32, ValType::F64, ValType::F64,
                                      ValType::F32, ValType::F32, ValType::F64, ValType::F64};
        ValType r = sub < 4 ? ValType::I32 : ValType::I64;
        uint32_t a = top_slot(0);
        pop(kIn[sub]);
        uint32_t d = push_result(r);
        if (m_.options.deterministic) emit({kNondet});
        else emit_simple({trunc_sat_op(sub), a, d});
        break;
      }
      switch (sub) {
        case 8: {  // memory.init
          uint32_t seg = in_.u32();
          size_t at = in_.pos();
          if (in_.u8() != 0) throw DecodeError{at, "zero byte expected", true};
          check_memory();
          check_data(seg);
          uint32_t n = top_slot(0), s = top_slot(1), d = top_slot(2);
          pop(ValType::I32); pop(ValType::I32); pop(ValType::I32);
          emit({kMemoryInit, seg, d, s, n});
          break;
        }
        case 9: {
          uint32_t seg = in_.u32();
          check_data(seg);
          emit({kDataDrop, seg});
          break;
        }
        case 10: {  // memory.copy
          size_t at = in_.pos();
          if (in_.u8() != 0 || in_.u8() != 0) throw DecodeError{at, "zero byte expected", true};
          check_memory();
          uint32_t n = top_slot(0), s = top_slot(1), d = top_slot(2);
          pop(ValType::I32); pop(ValType::I32); pop(ValType::I32);
          emit({kMemoryCopy, d, s, n});
          break;
        }
        case 11: {  // memory.fill
          size_t at = in_.pos();
          if (in_.u8() != 0) throw DecodeError{at, "zero byte expected", true};
          check_memory();
          uint32_t n = top_slot(0), v = top_slot(1), d = top_slot(2);
          pop(ValType::I32); pop(ValType::I32); pop(ValType::I32);
          emit({kMemoryFill, d, v, n});
          break;
        }
        case 12: {  // table.init seg table
          uint32_t seg = in_.u32();
          uint32_t t = in_.u32();
          check_elem(seg);
          check_table(t);
          if (m_.elems[seg].type != m_.tables[t].elem) invalid(op_at_, "type mismatch");
          uint32_t n = top_slot(0), s = top_slot(1), d = top_slot(2);
          pop(ValType::I32); pop(ValType::I32); pop(ValType::I32);
          emit({kTableInit, t, seg, d, s, n});
          break;
        }
        case 13: {
          uint32_t seg = in_.u32();
          check_elem(seg);
          emit({kElemDrop, seg});
          break;
        }
        case 14: {  // table.copy dst src
          uint32_t td = in_.u32();
          uint32_t ts = in_.u32();
          check_table(td);
          check_table(ts);
          if (m_.tables[td].elem != m_.tables[ts].elem) invalid(op_at_, "type mismatch");
          uint32_t n = top_slot(0), s = top_slot(1), d = top_slot(2);
          pop(ValType::I32); pop(ValType::I32); pop(ValType::I32);
          emit({kTableCopy, td, ts, d, s, n});
          break;
        }
        case 15: {  // table.grow
          uint32_t t = in_.u32();
          check_table(t);
          uint32_t n = top_slot(0), v = top_slot(1);
          pop(ValType::I32);
          pop(m_.tables[t].elem);
          uint32_t d = push_result(ValType::I32);
          emit({kTableGrow, t, v, n, d});
          break;
        }
        case 16: {  // table.size
          uint32_t t = in_.u32();
          check_table(t);
          uint32_t d = push_result(ValType::I32);
          emit_simple({kTableSize, t, d});
          break;
        }
        case 17: {  // table.fill
          uint32_t t = in_.u32();
          check_table(t);
          uint32_t n = top_slot(0), v = top_slot(1), i = top_slot(2);
          pop(ValType::I32);
          pop(m_.tables[t].elem);
          pop(ValType::I32);
          emit({kTableFill, t, i, v, n});
          break;
        }
        default:
          throw DecodeError{op_at_, "illegal opcode 0xfc " + std::to_string(sub), true};
      }
      break;
    }
    default:
      if (op >= 0x45 && op <= 0xc4) {
        numeric(op);
        break;
      }
      throw DecodeError{op_at_, "illegal opcode " + std::to_string(op), true};
  }
}

}  // namespace

Status compile_functions(ModuleImpl& m) {
  std::set<uint32_t> refs = declared_refs(m);
  m.code.clear();
  m.code_offsets.clear();
  m.compiled.clear();
  m.compiled.reserve(m.bodies.size());
  std::vector<uint32_t> local_calls;
  for (uint32_t i = 0; i < m.bodies.size(); ++i) {
    try {
      FuncCompiler fc(m, i, refs, local_calls);
      m.compiled.push_back(fc.run());
    } catch (const DecodeError& f) {
      return make_error(f.malformed ? "malformed" : "invalid",
                        "at offset " + std::to_string(f.offset) + ": " + f.msg);
    }
  }
  // Calls within the module carry their callee's facts, so the call reads its code word
  // stream only (no FuncInst, no host check, no instance switch).
  for (uint32_t at : local_calls) {
    const CompiledFunc& cf = m.compiled[m.code[at + 1]];
    m.code[at + 1] = cf.code;
    m.code[at + 3] = cf.cost;
    m.code[at + 4] = cf.frame_slots;
    m.code[at + 5] = cf.num_params;
    m.code[at + 6] = cf.num_locals;
  }
  // Fusing rewrites code already emitted, so entries can arrive out of code order or name a
  // position whose instruction was later replaced. The trap path binary-searches this table:
  // sort it by code index and keep, for each index, the entry written last (the rewrite's).
  auto& offs = m.code_offsets;
  std::stable_sort(offs.begin(), offs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = 0;
  for (size_t i = 0; i < offs.size(); ++i) {
    if (kept > 0 && offs[kept - 1].first == offs[i].first) offs[kept - 1] = offs[i];
    else offs[kept++] = offs[i];
  }
  offs.resize(kept);
  m.code.shrink_to_fit();
  m.code_offsets.shrink_to_fit();
  return {};
}

}  // namespace genvm::wasm
