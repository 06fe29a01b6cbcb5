// The JIT's single-pass compiler: wasm bytes of a validated module -> x86-64 (xbyak), one walk
// per function. See DESIGN.md "JIT" for the model; in short: every wasm operand lives in the
// interpreter's 8-byte slot for its stack height (fp[params + locals + height]); constants and
// local.get stay virtual until a consumer takes them or a block boundary writes them; a result
// stays in one of six pool registers until its consumer reads it, or something needs it in its
// slot (a block boundary, a call or helper, a branch, a full pool). Each instruction loads its
// operands into scratch registers, computes, and leaves its result in a pool register.
// An instruction outside the supported set refuses the whole module, which then runs on the
// interpreter.
#define XBYAK_NO_EXCEPTION
#include <xbyak/xbyak.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include <sys/mman.h>

#include "wasm/byte_cursor.h"
#include "wasm/jit/abi.h"

namespace genvm::wasm::jit {
namespace {

using namespace Xbyak;
using namespace Xbyak::util;

// Thrown inside the compiler only; compile_module turns it into the module's note.
struct Refuse {
  size_t at;
  std::string why;
};

constexpr size_t kHugePageBytes = size_t(2) << 20;

// Code is generated straight into the mapping that will run it: an anonymous read-write
// mapping per buffer (never executable while written), which CodeBuffer::seal turns read+execute
// once the code is complete, so the code is neither copied nor its pages faulted twice.
// Buffers of 2 MiB or more are advised as huge pages (where the kernel allows them): a large
// module's code otherwise takes one page fault per 4 KiB written.
class CodeMappings : public Allocator {
 public:
  ~CodeMappings() {
    for (const auto& [p, size] : mapped_) munmap(p, size);
  }
  uint8_t* alloc(size_t size) override {
    size = round_up(size);
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    if (size >= kHugePageBytes) madvise(p, size, MADV_HUGEPAGE);
    mapped_.emplace_back(static_cast<uint8_t*>(p), size);
    return static_cast<uint8_t*>(p);
  }
  // The buffer at p, at least `size` bytes now, its contents kept (the pages move, no copy).
  uint8_t* grow(uint8_t* p, size_t size) {
    size = round_up(size);
    for (auto& [q, old] : mapped_) {
      if (q != p) continue;
      void* fresh = mremap(p, old, size, MREMAP_MAYMOVE);
      if (fresh == MAP_FAILED) return nullptr;
      if (size >= kHugePageBytes) madvise(fresh, size, MADV_HUGEPAGE);
      q = static_cast<uint8_t*>(fresh);
      old = size;
      return q;
    }
    return nullptr;
  }
  void free(uint8_t* p) override {
    for (size_t i = 0; i < mapped_.size(); ++i) {
      if (mapped_[i].first != p) continue;
      munmap(p, mapped_[i].second);
      mapped_.erase(mapped_.begin() + std::ptrdiff_t(i));
      return;
    }
  }
  // Hands the buffer at p over to the caller (its mapped size; 0 when p is not one of ours):
  // neither free() nor the destructor unmaps it afterwards.
  size_t release(uint8_t* p) {
    for (size_t i = 0; i < mapped_.size(); ++i) {
      if (mapped_[i].first != p) continue;
      const size_t size = mapped_[i].second;
      mapped_.erase(mapped_.begin() + std::ptrdiff_t(i));
      return size;
    }
    return 0;
  }
  bool useProtect() const override { return false; }

 private:
  static size_t round_up(size_t n) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    return (std::max<size_t>(n, 1) + page - 1) / page * page;
  }
  std::vector<std::pair<uint8_t*, size_t>> mapped_;
};

// A module larger than this refuses (a hostile module cannot make the JIT allocate without bound).
constexpr size_t kMaxCodeBytes = size_t(256) << 20;

// Float instructions that deterministic mode replaces by a trap (compile.cc's is_float_op): the
// arity of each, or 0 when `op` is not one.
int nondet_arity(uint32_t op) {
  if (op >= 0x5b && op <= 0x66) return 2;  // float compares
  if ((op >= 0x8b && op <= 0x91) || (op >= 0x99 && op <= 0x9f)) return 1;
  if ((op >= 0x92 && op <= 0x98) || (op >= 0xa0 && op <= 0xa6)) return 2;
  if ((op >= 0xa8 && op <= 0xab) || (op >= 0xae && op <= 0xbb)) return 1;  // conversions
  return 0;
}

// The body being compiled, read as a ByteCursor reads it, with the common short forms inline
// (ByteCursor's out-of-line calls were a tenth of the compile): LEB128 integers of up to 4
// bytes, which no rule can reject; longer ones are read by a ByteCursor at the same position,
// which checks every rule, so errors (and their offsets) are ByteCursor's.
class BodyCursor {
 public:
  BodyCursor() = default;
  BodyCursor(const uint8_t* data, size_t begin, size_t end) : d_(data), pos_(begin), end_(end) {}
  size_t pos() const { return pos_; }
  uint8_t u8() {
    if (pos_ >= end_) unexpected_end();
    return d_[pos_++];
  }
  uint8_t peek() const {
    if (pos_ >= end_) unexpected_end();
    return d_[pos_];
  }
  void skip(size_t n) {
    if (n > end_ - pos_) unexpected_end();
    pos_ += n;
  }
  uint32_t u32() {
    const size_t n = std::min<size_t>(4, end_ - pos_);
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t b = d_[pos_ + i];
      v |= uint32_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        pos_ += i + 1;
        return v;
      }
    }
    return long_u32();
  }
  // Signed, `bits` bits, sign-extended to 64.
  int64_t sleb(int bits) {
    const size_t n = std::min<size_t>(4, end_ - pos_);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t b = d_[pos_ + i];
      v |= uint64_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        if (b & 0x40) v |= ~uint64_t(0) << (7 * (i + 1));
        pos_ += i + 1;
        return int64_t(v);
      }
    }
    return long_sleb(bits);
  }
  uint32_t fixed32() {
    if (end_ - pos_ < 4) unexpected_end();
    uint32_t v;
    std::memcpy(&v, d_ + pos_, 4);
    pos_ += 4;
    return v;
  }
  uint64_t fixed64() {
    if (end_ - pos_ < 8) unexpected_end();
    uint64_t v;
    std::memcpy(&v, d_ + pos_, 8);
    pos_ += 8;
    return v;
  }

 private:
  [[noreturn]] void unexpected_end() const { throw DecodeError{pos_, "unexpected end"}; }
  [[gnu::noinline]] uint32_t long_u32() {
    ByteCursor c(d_, pos_, end_);
    const uint32_t v = c.u32();
    pos_ = c.pos();
    return v;
  }
  [[gnu::noinline]] int64_t long_sleb(int bits) {
    ByteCursor c(d_, pos_, end_);
    const int64_t v = c.sleb(bits);
    pos_ = c.pos();
    return v;
  }
  const uint8_t* d_ = nullptr;
  size_t pos_ = 0, end_ = 0;
};

class ModuleCompiler : public CodeGenerator {
 public:
  ModuleCompiler(const ModuleImpl& m, CodeMappings* alloc)
      : CodeGenerator(initial_buffer_bytes(m), AutoGrow, alloc), m_(m), alloc_(alloc) {
    setDefaultJmpNEAR(true);
  }

  // The code buffer is sized from the function bodies (x86-64 runs to 4.7-5.9 bytes per byte of
  // wasm on CPython and bench/realworld, fuel charges included; 8 leaves room), so a module's
  // code is rarely copied by the buffer growing; pages are only touched as code is written.
  static size_t initial_buffer_bytes(const ModuleImpl& m) {
    size_t wasm = 0;
    for (const FuncBody& b : m.bodies) wasm += b.body_end - b.body_offset;
    return std::min(kMaxCodeBytes, size_t(4096) * 16 + wasm * 8);
  }

  void compile_all() {
    const size_t n = m_.compiled.size();
    func_targets_.resize(n);
    func_start_.resize(n);
    // Shared tails first, so every jump to them is backwards (resolved when emitted, never
    // queued in the assembler's table of pending labels): a trap site jumps to trap_common_
    // with kind in esi and wasm offset in edx; a prologue whose stack check fails jumps to
    // overflow_common_ (rsp at the return address).
    bind(trap_common_);
    mov(rdi, r15);
    mov(rcx, rsp);
    mov(r8, r12);
    call(qword[r15 + kCtxTrap]);
    jmp(qword[r15 + kCtxUnwind]);
    bind(overflow_common_);
    mov(rdi, r15);
    mov(rsi, rsp);
    sub(rsp, 8);
    call(qword[r15 + kCtxOverflow]);
    jmp(qword[r15 + kCtxUnwind]);
    bind(unwind_);
    jmp(qword[r15 + kCtxUnwind]);
    for (uint32_t i = 0; i < n; ++i) {
      compile_function(i);
      if (getSize() > kMaxCodeBytes) throw Refuse{m_.bodies[i].body_offset, "module too large for the JIT"};
    }
  }

  // After ready(): the fuel charges are written into their instructions (the jump tables'
  // entries are offsets from their table already: the code is position-independent).
  void finish(ModuleCode& out) {
    uint8_t* code = const_cast<uint8_t*>(getCode());
    for (const auto& [pos, count] : fuel_patches_) {
      int32_t v = int32_t(count);
      std::memcpy(code + pos, &v, 4);
    }
    for (const auto& [pos, entries] : tables_) out.data_ranges.emplace_back(uint32_t(pos), uint32_t(8 * entries));
    out.func_start = func_start_;
    out.call_sites = std::move(call_sites_);
  }

 private:
  enum Kind : uint8_t { kBlock, kLoop, kIf, kElse, kFunc };
  using LabelId = uint32_t;  // a label of the function being compiled (see new_label)
  static constexpr LabelId kNoLabel = UINT32_MAX;
  // An operand: in its slot, a constant not yet written anywhere, or a reference to a local
  // (local.get) read from the local's slot until that local is written (local.set/tee write
  // pending references to their own slots first) or a block boundary writes it.
  // 16 bytes (local.set/tee and block starts walk the whole stack). Local indices fit int32: a
  // frame is below 2^28 slots (compile_function refuses larger). `reg` >= 0: the value is in
  // that pool register (kPool) and not in its slot.
  struct Entry {
    uint64_t c = 0;
    int32_t local = -1;
    bool is_const = false;
    int8_t reg = -1;
  };
  // The register pool: results wait here for their consumer instead of going through their slot.
  // No instruction uses these as scratch (rax, rcx, rdx are), but calls, helpers and `rep movsq`
  // do, so everything in the pool is written to its slot before those (spill_regs). A value is
  // only ever in the pool inside straight-line code: every block boundary writes the operands
  // to their slots (materialize_from), so at every label the pool is empty, and a trap discards
  // the frame's values (nothing to write).
  static constexpr int kPool[6] = {6, 7, 8, 9, 10, 11};  // rsi rdi r8 r9 r10 r11
  struct Ctrl {
    Kind kind;
    uint32_t height;  // operand height below the block's params
    uint32_t nparams, nresults;
    LabelId label = kNoLabel;       // branch target: the loop head, or the end
    LabelId else_label = kNoLabel;  // if: where the condition jumps when false
    bool else_bound = false;
    bool unreachable = false;     // after br/return/unreachable: the rest of the block is dead
    int outer_region = -1;        // loop: the enclosing fuel region
  };
  struct TrapStub {
    TrapKind kind;
    uint32_t at;
  };

  // ---- labels, ours rather than xbyak's (whose hash tables per label were most of the compile
  // time of a large module): a target's offset once bound and the fields that wait for it. The
  // jumps are encoded as xbyak encodes them (with setDefaultJmpNEAR): to a bound target within
  // rel8 reach the 2-byte form, otherwise rel32; calls always rel32 ----
  struct Target {
    int64_t pos = -1;
    std::vector<uint32_t> rel32_sites;                       // rel32 fields (end = site + 4)
    std::vector<std::pair<uint32_t, uint32_t>> table_sites;  // (jump-table entry, its table)
  };
  static constexpr uint8_t kJmp = 0x10;  // beside the condition codes: an unconditional jump

  // A label of the function being compiled: all are bound by its end, and their slots are
  // reused by the next function.
  LabelId new_label() {
    if (labels_used_ == labels_.size()) labels_.emplace_back();
    Target& t = labels_[labels_used_];
    t.pos = -1;
    t.rel32_sites.clear();
    t.table_sites.clear();
    return LabelId(labels_used_++);
  }
  Target& lbl(LabelId id) { return labels_[id]; }

  // Room for n more bytes (an instruction is at most 15), in pages already faulted in.
  void ensure(size_t n) {
    if (size_ + n > populated_) [[unlikely]] make_room(n);
  }
  // A buffer below huge-page size is populated a chunk ahead of the code (MADV_POPULATE_WRITE:
  // a page costs about half of what its first write's fault costs); chunks grow with the code
  // (16 to 256 KiB, half the code so far), so at most one is left unused, populated, in the
  // code's mapping (CodeBuffer::seal keeps it whole). Huge pages fault once per 2 MiB anyway.
  // (Bytes xbyak writes itself just fault as they come.)
  [[gnu::noinline]] void make_room(size_t n) {
    if (size_ + n > maxSize_) grow(n);
    if (size_ + n <= populated_) return;
    if (maxSize_ >= kHugePageBytes) {
      populated_ = maxSize_;
      return;
    }
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t from = populated_ / page * page;
    const size_t chunk = std::clamp<size_t>(populated_ / 2, size_t(16) << 10, size_t(256) << 10);
    const size_t to = std::min(maxSize_, std::max(size_ + n, populated_ + chunk));
    const size_t len = (to + page - 1) / page * page - from;
    populated_ = madvise(top_ + from, len, MADV_POPULATE_WRITE) == 0 ? to : maxSize_;  // else: faults
  }
  // As xbyak's growMemory (twice the size), but the mapping is remapped rather than copied.
  [[gnu::noinline]] void grow(size_t n) {
    const size_t bigger = std::max<size_t>(maxSize_ * 2, size_ + n);
    uint8_t* fresh = alloc_->grow(top_, bigger);
    if (!fresh) throw Refuse{op_at_, "out of memory for the JIT's code"};
    top_ = fresh;
    maxSize_ = bigger;
  }
  void put8(uint32_t b) { top_[size_++] = uint8_t(b); }
  void put32(uint32_t v) {
    std::memcpy(top_ + size_, &v, 4);
    size_ += 4;
  }
  // jcc (cc: the condition nibble) or jmp (kJmp) to t.
  void jump(uint8_t cc, Target& t) {
    ensure(16);
    if (t.pos >= 0) {
      const int64_t disp = t.pos - int64_t(size_);
      if (disp - 2 >= -128 && disp - 2 <= 127) {
        put8(cc == kJmp ? 0xeb : 0x70 | cc);
        put8(uint32_t(disp - 2));
      } else if (cc == kJmp) {
        put8(0xe9);
        put32(uint32_t(disp - 5));
      } else {
        put8(0x0f);
        put8(0x80 | cc);
        put32(uint32_t(disp - 6));
      }
      return;
    }
    if (cc == kJmp) {
      put8(0xe9);
    } else {
      put8(0x0f);
      put8(0x80 | cc);
    }
    t.rel32_sites.push_back(uint32_t(size_));
    put32(0);
  }
  void call_to(Target& t) {
    ensure(16);
    put8(0xe8);
    if (t.pos >= 0) {
      put32(uint32_t(t.pos - int64_t(size_) - 4));
      return;
    }
    t.rel32_sites.push_back(uint32_t(size_));
    put32(0);
  }
  // lea rcx, [rip + t]
  void lea_rcx_rip(Target& t) {
    ensure(16);
    put8(0x48);
    put8(0x8d);
    put8(0x0d);
    t.rel32_sites.push_back(uint32_t(size_));
    put32(0);
  }
  // A jump-table entry: t's offset from the table at `table`.
  void table_entry(Target& t, size_t table) {
    ensure(16);
    int64_t rel = 0;
    if (t.pos >= 0) rel = t.pos - int64_t(table);
    else t.table_sites.emplace_back(uint32_t(size_), uint32_t(table));
    std::memcpy(top_ + size_, &rel, 8);
    size_ += 8;
  }
  void bind(Target& t) {
    t.pos = int64_t(size_);
    for (uint32_t site : t.rel32_sites) {
      const int32_t rel = int32_t(t.pos - int64_t(site) - 4);
      std::memcpy(top_ + site, &rel, 4);
    }
    for (const auto& [site, table] : t.table_sites) {
      const int64_t rel = t.pos - int64_t(table);
      std::memcpy(top_ + site, &rel, 8);
    }
    t.rel32_sites.clear();
    t.table_sites.clear();
  }
  void bind(LabelId id) { bind(lbl(id)); }
  void jump(uint8_t cc, LabelId id) { jump(cc, lbl(id)); }

  // ---- decoding ----
  void block_type(uint32_t& np, uint32_t& nr) {
    uint8_t b = in_.peek();
    np = nr = 0;
    if (b == 0x40) { in_.skip(1); return; }
    if (b == 0x7f || b == 0x7e || b == 0x7d || b == 0x7c || b == 0x7b || b == 0x70 || b == 0x6f) {
      in_.skip(1);
      nr = 1;
      return;
    }
    int64_t idx = in_.sleb(33);
    const FuncType& t = m_.types[size_t(idx)];
    np = uint32_t(t.params.size());
    nr = uint32_t(t.results.size());
  }

  // Skips the immediates of `op` (dead code: decoded to find its end, never compiled).
  void skip_immediates(uint32_t op, size_t at) {
    switch (op) {
      case 0x02: case 0x03: case 0x04: { uint32_t a, b; block_type(a, b); break; }
      case 0x0c: case 0x0d: case 0x10: case 0x12: case 0xd2:
      case 0x20: case 0x21: case 0x22: case 0x23: case 0x24: case 0x25: case 0x26:
        in_.u32();
        break;
      case 0x0e: { uint32_t n = in_.u32(); for (uint64_t k = 0; k <= n; ++k) in_.u32(); break; }
      case 0x11: case 0x13: in_.u32(); in_.u32(); break;
      case 0x1c: { uint32_t n = in_.u32(); in_.skip(n); break; }
      case 0x3f: case 0x40: case 0xd0: in_.u8(); break;
      case 0x41: in_.sleb(32); break;
      case 0x42: in_.sleb(64); break;
      case 0x43: in_.skip(4); break;
      case 0x44: in_.skip(8); break;
      case 0xfc: {
        uint32_t sub = in_.u32();
        switch (sub) {
          case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: break;
          case 8: in_.u32(); in_.u8(); break;
          case 10: in_.u8(); in_.u8(); break;
          case 11: in_.u8(); break;
          case 9: case 13: case 15: case 16: case 17: in_.u32(); break;
          case 12: case 14: in_.u32(); in_.u32(); break;
          default: throw Refuse{at, "unknown 0xfc instruction"};
        }
        break;
      }
      default:
        if (op >= 0x28 && op <= 0x3e) { in_.u32(); in_.u32(); break; }
        if (op > 0xc4 && op != 0xd1) throw Refuse{at, "unknown instruction"};
        break;
    }
  }

  // ---- operands ----
  uint32_t h() const { return uint32_t(stack_.size()); }
  // Slot-based reads (src) are for operands that are not in a register.
  uint32_t home(uint32_t i) const { return L_ + i; }
  // Where operand i is read from: its slot, or the local it refers to (not for constants).
  uint32_t src(uint32_t i) const { return stack_[i].local >= 0 ? uint32_t(stack_[i].local) : home(i); }
  Address q(uint32_t s) const { return qword[rbx + int32_t(s) * 8]; }
  Address d(uint32_t s) const { return dword[rbx + int32_t(s) * 8]; }

  // ---- the most frequent instructions, encoded here byte for byte as xbyak encodes them
  // (building xbyak's operand objects was most of the compile time left after labels) ----
  static bool fits8(int64_t v) { return v >= -128 && v <= 127; }
  // ModRM (and SIB, disp) of `reg` with [base + disp]: no disp when 0 (but for rbp/r13), disp8
  // when it fits, else disp32; rsp/r12 take a SIB byte.
  void modrm_base(int reg, int base, int32_t disp) {
    const uint32_t r = uint32_t(reg & 7) << 3, b = uint32_t(base & 7);
    const uint32_t mod = disp == 0 && b != 5 ? 0 : fits8(disp) ? 0x40 : 0x80;
    put8(mod | r | b);
    if (b == 4) put8(0x24);
    if (mod == 0x40) put8(uint32_t(disp));
    else if (mod == 0x80) put32(uint32_t(disp));
  }
  // `opcode` with reg and [base + disp]: mov r, [m] (0x8b), mov [m], r (0x89), add 0x03, sub 0x2b,
  // and 0x23, or 0x0b, xor 0x33, cmp 0x3b; 64-bit when w.
  void base_op(uint32_t opcode, bool w, int reg, int base, int32_t disp) {
    ensure(16);
    const uint32_t rex = 0x40 | (w ? 8 : 0) | (reg >= 8 ? 4 : 0) | (base >= 8 ? 1 : 0);
    if (rex != 0x40) put8(rex);
    put8(opcode);
    modrm_base(reg, base, disp);
  }
  // An ALU operation (ext as in alu_imm) on dword [base + disp] with an immediate.
  void mem_alu_imm(int ext, int base, int32_t disp, uint32_t imm) {
    ensure(16);
    const bool imm8 = fits8(int32_t(imm));
    if (base >= 8) put8(0x41);
    put8(imm8 ? 0x83 : 0x81);
    modrm_base(ext, base, disp);
    if (imm8) put8(imm);
    else put32(imm);
  }
  // The same with slot s ([rbx + 8 s]).
  void slot_op(uint32_t opcode, bool w, int reg, uint32_t s) { base_op(opcode, w, reg, 3, int32_t(s) * 8); }
  // An ALU operation with an immediate (ext: add 0, or 1, and 4, sub 5, xor 6, cmp 7) on reg:
  // 0x83 /ext imm8 when it fits, else the accumulator's short form or 0x81 /ext imm32.
  void alu_imm(int ext, bool w, int reg, uint32_t imm) {
    ensure(16);
    const bool imm8 = fits8(int32_t(imm));
    const uint32_t rex = 0x40 | (w ? 8 : 0) | (reg >= 8 ? 1 : 0);
    if (rex != 0x40) put8(rex);
    if (reg == 0 && !imm8) {
      put8(uint32_t(ext) << 3 | 5);
      put32(imm);
      return;
    }
    put8(imm8 ? 0x83 : 0x81);
    put8(0xc0 | uint32_t(ext) << 3 | uint32_t(reg & 7));
    if (imm8) put8(imm);
    else put32(imm);
  }
  // `op` (one byte, or 0x0f and a second) with reg and wasm memory [r13 + rax + disp]; p66: the
  // operand-size prefix (16-bit stores).
  void heap_op(bool p66, bool w, uint32_t op0, int op1, int reg, int32_t disp) {
    ensure(16);
    if (p66) put8(0x66);
    put8(0x41 | (w ? 8 : 0) | (reg >= 8 ? 4 : 0));
    put8(op0);
    if (op1 >= 0) put8(uint32_t(op1));
    const bool d8 = fits8(disp);
    put8((d8 ? 0x40 : 0x80) | uint32_t(reg & 7) << 3 | 4);
    put8(0x05);  // SIB: base r13, index rax, scale 1
    if (d8) put8(uint32_t(disp));
    else put32(uint32_t(disp));
  }
  void load_slot64(const Reg& r, uint32_t s) { slot_op(0x8b, true, r.getIdx(), s); }
  void load_slot32(const Reg& r, uint32_t s) { slot_op(0x8b, false, r.getIdx(), s); }
  void store_slot64(uint32_t s, const Reg& r) { slot_op(0x89, true, r.getIdx(), s); }
  // mov qword [s], imm32 (sign-extended)
  void store_slot_imm(uint32_t s, uint32_t imm) {
    ensure(16);
    put8(0x48);
    put8(0xc7);
    modrm_base(0, 3, int32_t(s) * 8);
    put32(imm);
  }
  // mov r32, imm32 (zero-extends)
  void mov_imm32(int reg, uint32_t v) {
    ensure(16);
    if (reg >= 8) put8(0x41);
    put8(0xb8 | (reg & 7));
    put32(v);
  }
  // reg-reg forms: mov (0x89 with dst in r/m), or `opcode` (reg, r/m form: add 0x03, sub 0x2b,
  // and 0x23, or 0x0b, xor 0x33, cmp 0x3b) with reg and rm; 64-bit when w.
  void reg_op(uint32_t opcode, bool w, int reg, int rm) {
    ensure(16);
    const uint32_t rex = 0x40 | (w ? 8 : 0) | (reg >= 8 ? 4 : 0) | (rm >= 8 ? 1 : 0);
    if (rex != 0x40) put8(rex);
    put8(opcode);
    put8(0xc0 | uint32_t(reg & 7) << 3 | uint32_t(rm & 7));
  }
  void mov_reg(bool w, int dst, int src) { reg_op(0x89, w, src, dst); }
  void free_reg(uint32_t i) {
    if (stack_[i].reg < 0) return;
    reg_owner_[stack_[i].reg] = -1;
    stack_[i].reg = -1;
  }
  // Every operand in the pool to its slot (before anything that clobbers the pool registers).
  void spill_regs() {
    for (int r : kPool) {
      if (reg_owner_[r] < 0) continue;
      const uint32_t i = uint32_t(reg_owner_[r]);
      store_slot64(home(i), Reg64(r));
      stack_[i].reg = -1;
      reg_owner_[r] = -1;
    }
  }
  // A free pool register for operand i; when none is, the deepest operand in the pool (the one
  // whose consumer comes last) is written to its slot and gives its register up.
  int take_reg(uint32_t i) {
    int victim = -1;
    for (int r : kPool) {
      if (reg_owner_[r] < 0) {
        victim = r;
        break;
      }
      if (victim < 0 || reg_owner_[r] < reg_owner_[victim]) victim = r;
    }
    if (reg_owner_[victim] >= 0) {
      const uint32_t j = uint32_t(reg_owner_[victim]);
      store_slot64(home(j), Reg64(victim));
      stack_[j].reg = -1;
    }
    reg_owner_[victim] = int32_t(i);
    stack_[i].reg = int8_t(victim);
    return victim;
  }
  void push_slot() {
    stack_.push_back(Entry{});
    if (L_ + h() > frame_slots_) throw Refuse{op_at_, "operand stack deeper than the interpreter's frame"};
  }
  void push_const(uint64_t v) {
    push_slot();
    stack_.back() = Entry{v, -1, true};
  }
  void pop_n(uint32_t n) {
    for (uint32_t i = h() - n; i < h(); ++i) free_reg(i);
    stack_.erase(stack_.end() - n, stack_.end());  // (resize's grow path stays out)
  }
  // The operand stack cut to `height` (a block's end, else, or dead code).
  void drop_to(uint32_t height) {
    for (uint32_t i = height; i < h(); ++i) free_reg(i);
    stack_.resize(height);
  }
  void load_imm(const Reg64& r, uint64_t v) {
    if (v <= 0xffffffffull) {
      mov_imm32(r.getIdx(), uint32_t(v));
      return;
    }
    // mov r64, imm: imm32 sign-extended (REX.W C7 /0) when it fits, else imm64 (REX.W B8+r)
    ensure(16);
    const int reg = r.getIdx();
    put8(0x48 | (reg >= 8 ? 1 : 0));
    if (int64_t(v) == int64_t(int32_t(uint32_t(v)))) {
      put8(0xc7);
      put8(0xc0 | (reg & 7));
      put32(uint32_t(v));
    } else {
      put8(0xb8 | (reg & 7));
      put32(uint32_t(v));
      put32(uint32_t(v >> 32));
    }
  }
  void store_const(uint32_t s, uint64_t v) {
    if (int64_t(v) == int64_t(int32_t(uint32_t(v)))) {
      store_slot_imm(s, uint32_t(v));  // imm32, sign-extended
    } else {
      load_imm(rax, v);
      store_slot64(s, rax);
    }
  }
  void load32(const Reg32& r, uint32_t i) {
    if (stack_[i].is_const) mov_imm32(r.getIdx(), uint32_t(stack_[i].c));
    else if (stack_[i].reg >= 0) mov_reg(false, r.getIdx(), stack_[i].reg);
    else load_slot32(r, src(i));
  }
  void load64(const Reg64& r, uint32_t i) {
    if (stack_[i].is_const) load_imm(r, stack_[i].c);
    else if (stack_[i].reg >= 0) mov_reg(true, r.getIdx(), stack_[i].reg);
    else load_slot64(r, src(i));
  }
  void materialize(uint32_t i) {
    if (stack_[i].reg >= 0) {
      store_slot64(home(i), Reg64(stack_[i].reg));
      free_reg(i);
      return;
    }
    if (stack_[i].local >= 0) {
      load_slot64(rax, uint32_t(stack_[i].local));
      store_slot64(home(i), rax);
      stack_[i].local = -1;
      return;
    }
    if (!stack_[i].is_const) return;
    store_const(home(i), stack_[i].c);
    stack_[i].is_const = false;
  }
  void materialize_from(uint32_t from) {
    for (uint32_t i = from; i < h(); ++i) materialize(i);
  }
  // Operand-stack entries walked whole (block starts, local.set/tee): a few per instruction in
  // real code, quadratic in a hostile body (a deep stack, then many blocks or local writes).
  // Past the budget (64 per body byte) the module runs on the interpreter, whose compiler
  // keeps these walks linear (src/wasm/DESIGN.md "Limits").
  void charge_stack_walk(uint64_t entries) {
    stack_walk_ += entries;
    if (stack_walk_ > stack_walk_budget_) throw Refuse{op_at_, "operand stack walks beyond the JIT's compile budget"};
  }
  uint64_t stack_walk_ = 0, stack_walk_budget_ = 0;
  // Replaces the top `pops` operands by one result, from rax, in a pool register.
  void result_rax(uint32_t pops) {
    pop_n(pops);
    push_slot();
    mov_reg(true, take_reg(h() - 1), 0);
  }

  // ---- traps ----
  // The function's stub for (k, at), made on first use: its index in traps_. Stubs are made in
  // instruction order, so while their offsets ascend an existing one is among the last ones (those
  // at `at`); otherwise every stub is searched.
  uint32_t stub(TrapKind k, size_t at) {
    const uint32_t a = uint32_t(at);
    for (size_t i = traps_.size(); i > 0; --i) {
      const TrapStub& t = traps_[i - 1];
      if (t.at == a && t.kind == k) return uint32_t(i - 1);
      if (traps_sorted_ && t.at < a) break;
    }
    if (!traps_.empty() && traps_.back().at > a) traps_sorted_ = false;
    traps_.push_back(TrapStub{k, a});
    return uint32_t(traps_.size() - 1);
  }
  // Condition codes of trap_if (the low nibble of the 0x0f 0x8X jcc opcode).
  enum Cc : uint8_t {
    kCcB = 0x2, kCcAe = 0x3, kCcE = 0x4, kCcNe = 0x5, kCcBe = 0x6, kCcA = 0x7, kCcS = 0x8, kCcP = 0xa,
    kCcL = 0xc, kCcGe = 0xd, kCcLe = 0xe, kCcG = 0xf,
  };
  // A jump (jcc rel32, or jmp rel32 for kJmp) to a trap stub, patched when the stub is emitted
  // (at the function's end: every jump to a stub is forwards).
  void trap_if(uint8_t cc, TrapKind k, size_t at) {
    const uint32_t t = stub(k, at);
    ensure(16);
    if (cc == kJmp) {
      put8(0xe9);
    } else {
      put8(0x0f);
      put8(0x80 | cc);
    }
    trap_sites_.emplace_back(t, uint32_t(size_));
    put32(0);
  }
  void emit_trap_stubs() {
    stub_pos_.clear();
    for (const TrapStub& t : traps_) {
      stub_pos_.push_back(uint32_t(getSize()));
      if (t.kind == TrapKind::kOutOfFuel) mov(qword[r15 + kCtxFuel], 0);  // as the interpreter: fuel is 0
      mov_imm32(6, uint32_t(t.kind));  // esi
      mov_imm32(2, t.at);               // edx
      jump(kJmp, trap_common_);
    }
    for (const auto& [t, site] : trap_sites_) {
      const int32_t rel = int32_t(int64_t(stub_pos_[t]) - int64_t(site + 4));
      std::memcpy(top_ + site, &rel, 4);
    }
    traps_.clear();
    traps_sorted_ = true;
    trap_sites_.clear();
  }

  // ---- fuel (DESIGN.md "Fuel": a region is charged its instruction count on entry) ----
  void begin_region(size_t at) {
    cur_region_ = -1;
    if (!m_.options.metering) return;
    sub(qword[r15 + kCtxFuel], 0x7fffffff);  // imm32 placeholder, patched with the count
    fuel_patches_.emplace_back(getSize() - 4, 0);
    cur_region_ = int(fuel_patches_.size() - 1);
    trap_if(kCcS, TrapKind::kOutOfFuel, at);
    mov(rax, qword[r15 + kCtxInterrupt]);
    cmp(byte[rax], 0);
    trap_if(kCcNe, TrapKind::kInterrupt, at);
  }
  void count_instruction() {
    if (cur_region_ < 0) return;
    if (++fuel_patches_[size_t(cur_region_)].second > uint64_t(INT32_MAX)) throw Refuse{op_at_, "fuel region too large"};
  }

  // ---- control ----
  void set_unreachable() {
    ctrls_.back().unreachable = true;
    drop_to(ctrls_.back().height);
  }
  uint32_t arity(const Ctrl& c) const { return c.kind == kLoop ? c.nparams : c.nresults; }
  bool needs_copies(const Ctrl& t) const {
    uint32_t n = arity(t);
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t src = h() - n + k;
      if (stack_[src].is_const || stack_[src].reg >= 0 || this->src(src) != home(t.height + k)) return true;
    }
    return false;
  }
  // The branch values (top arity(t) operands) to the slots label t expects them in.
  void branch_copies(const Ctrl& t) { copy_values(h() - arity(t), arity(t), home(t.height)); }

  // Operands [first, first + n) to slots [dst0, dst0 + n), without changing the compile-time
  // stack (a br_if's fallthrough still sees it). Ascending order is safe: a slot operand's own
  // slot is never below its destination, and a local that a destination would overwrite first
  // is copied to its operand's unused slot. Runs of 8 or more consecutive slots are one
  // `rep movsq`, so code grows with the number of runs, not of values.
  // An operand in a register is written straight to its destination (a constant's rule);
  // when there are enough values for a `rep movsq` run, which clobbers rsi and rdi, it goes to
  // its own slot first and is copied as a slot operand.
  void copy_values(uint32_t first, uint32_t n, uint32_t dst0) {
    constexpr uint32_t kConst = UINT32_MAX, kReg = UINT32_MAX - 1;
    std::vector<uint32_t>& from = copy_from_;  // a member: no allocation per branch
    from.assign(n, 0);
    const bool runs = n >= 8;
    for (uint32_t k = 0; k < n; ++k) {
      const Entry& e = stack_[first + k];
      if (e.is_const) {
        from[k] = kConst;
      } else if (e.reg >= 0 && !runs) {
        from[k] = kReg;
      } else if (e.reg >= 0) {
        store_slot64(home(first + k), Reg64(e.reg));
        from[k] = home(first + k);
      } else {
        from[k] = src(first + k);
      }
      if (e.local >= 0 && uint64_t(e.local) >= dst0 && uint64_t(e.local) < uint64_t(dst0) + n) {
        load_slot64(rax, uint32_t(e.local));
        store_slot64(home(first + k), rax);
        from[k] = home(first + k);
      }
    }
    for (uint32_t k = 0; k < n;) {
      if (from[k] == kConst) {
        store_const(dst0 + k, stack_[first + k].c);
        ++k;
        continue;
      }
      if (from[k] == kReg) {
        store_slot64(dst0 + k, Reg64(stack_[first + k].reg));
        ++k;
        continue;
      }
      uint32_t end = k + 1;
      while (end < n && from[end] < kReg && from[end] == from[end - 1] + 1) ++end;
      if (from[k] != dst0 + k) {
        if (end - k >= 8) {
          lea(rsi, ptr[rbx + int32_t(from[k]) * 8]);
          lea(rdi, ptr[rbx + int32_t(dst0 + k) * 8]);
          mov(ecx, end - k);
          rep();
          movsq();
        } else {
          for (uint32_t j = k; j < end; ++j) {
            load_slot64(rax, from[j]);
            store_slot64(dst0 + j, rax);
          }
        }
      }
      k = end;
    }
  }
  // Many branch values: written to their own slots before the branch (on both paths of a br_if;
  // the writes are movs, so a pending compare's flags survive), so the copies become runs.
  void settle_branch_values(uint32_t n, uint32_t below = 0) {
    if (n > 8) {
      for (uint32_t i = h() - below - n; i < h() - below; ++i) materialize(i);
    }
  }
  // Results (the top n operands) to slots [0, n), give back the frame's charge, return.
  void emit_return() {
    uint32_t n = nresults_;
    // A result read from a local that an earlier result overwrites (slots [0, n) are both locals
    // and the result area) is copied to its own slot first.
    copy_values(h() - n, n, 0);
    mem_alu_imm(0, 15, kCtxCallsLeft, 1);       // add dword [r15 + calls_left], 1
    mem_alu_imm(0, 15, kCtxValuesLeft, cost_);  // add dword [r15 + values_left], cost
    alu_imm(0, true, 4, 8);                     // add rsp, 8
    ensure(16);
    put8(0xc3);                                 // ret
  }
  // A branch to label depth `depth` (copies included); `br` to the function label returns.
  void emit_branch(uint32_t depth) {
    Ctrl& t = ctrls_[ctrls_.size() - 1 - depth];
    settle_branch_values(arity(t));
    if (t.kind == kFunc) return emit_return();
    branch_copies(t);
    jump(kJmp, t.label);
  }
  void reload_memory() {
    base_op(0x8b, true, 0, 12, kStMem0);     // mov rax, [r12 + mem0]
    base_op(0x8b, true, 13, 0, kMemBase);    // mov r13, [rax + base]
    base_op(0x8b, true, 14, 0, kMemSize);    // mov r14, [rax + size]
  }
  // After a call: this frame's own instance (a tail call in the callee may have left another's).
  void reload_instance() { base_op(0x8b, true, 12, 4, 0); }  // mov r12, [rsp]

  void compile_function(uint32_t def) {
    const FuncBody& body = m_.bodies[def];
    const CompiledFunc& cf = m_.compiled[def];
    const FuncType& ft = m_.types[cf.type_index];
    in_ = BodyCursor(m_.bytes.data(), body.body_offset, body.body_end);
    L_ = cf.num_params + cf.num_locals;
    frame_slots_ = cf.frame_slots;
    cost_ = cf.cost;
    nresults_ = uint32_t(ft.results.size());
    if (uint64_t(frame_slots_) * 8 > uint64_t(INT32_MAX)) throw Refuse{body.body_offset, "frame too large"};
    stack_.clear();
    std::fill(std::begin(reg_owner_), std::end(reg_owner_), -1);
    ctrls_.clear();
    dead_depth_ = 0;
    flags_cc_ = -1;
    stack_walk_ = 0;
    stack_walk_budget_ = uint64_t(body.body_end - body.body_offset) * 64 + (uint64_t(1) << 20);

    bind(func_targets_[def]);
    func_start_[def] = uint32_t(getSize());
    // Entry: the stack rule's charge (a failure is reported at the caller's call), then the
    // frame (InstanceState word), declared locals zeroed, the function region's fuel.
    mem_alu_imm(7, 15, kCtxCallsLeft, 0);  // cmp dword [r15 + calls_left], 0
    jump(kCcE, overflow_common_);
    mem_alu_imm(7, 15, kCtxValuesLeft, cost_);
    jump(kCcB, overflow_common_);
    base_op(0x8d, true, 0, 3, int32_t(frame_slots_) * 8);  // lea rax, [rbx + frame]
    base_op(0x3b, true, 0, 15, kCtxStackEnd);              // cmp rax, [r15 + stack_end]
    jump(kCcA, overflow_common_);
    mem_alu_imm(5, 15, kCtxCallsLeft, 1);  // sub
    mem_alu_imm(5, 15, kCtxValuesLeft, cost_);
    ensure(16);
    put8(0x41);  // push r12
    put8(0x54);
    if (cf.num_locals <= 8) {
      for (uint32_t k = 0; k < cf.num_locals; ++k) store_slot_imm(cf.num_params + k, 0);
    } else {
      xor_(eax, eax);
      lea(rdi, ptr[rbx + int32_t(cf.num_params) * 8]);
      mov(ecx, cf.num_locals);
      rep();
      stosq();
    }
    Ctrl fc{kFunc, 0, 0, nresults_};
    ctrls_.push_back(fc);
    op_at_ = body.body_offset;
    begin_region(body.body_offset);
    while (!ctrls_.empty()) step();
    emit_trap_stubs();
    labels_used_ = 0;
  }

  void step() {
    op_at_ = in_.pos();
    const size_t at = op_at_;
    uint32_t op = in_.u8();
    // One instruction emits at most ~65535 slot copies (a branch carrying a whole frame), so
    // checking here bounds the buffer near kMaxCodeBytes even for hostile modules.
    if (getSize() > kMaxCodeBytes) throw Refuse{at, "module too large for the JIT"};
    if (op != 0x0d && op != 0x04) materialize_flags();
    if (ctrls_.back().unreachable) {
      // Dead code: only its nesting matters (it emits nothing and is charged nothing).
      if (op == 0x02 || op == 0x03 || op == 0x04) {
        skip_immediates(op, at);
        ++dead_depth_;
        return;
      }
      if (op == 0x0b && dead_depth_) { --dead_depth_; return; }
      if (op == 0x05 && dead_depth_) return;
      if (op != 0x0b && op != 0x05) { skip_immediates(op, at); return; }
    }
    if (op != 0x0b && op != 0x05) count_instruction();
    if (op >= 0x45 && op <= 0xc4) return numeric(op, at);
    if (op >= 0x28 && op <= 0x3e) {
      in_.u32();
      uint32_t offset = in_.u32();
      return op <= 0x35 ? load(op, offset, at) : store(op, offset, at);
    }
    switch (op) {
      case 0x00:
        trap_if(kJmp, TrapKind::kUnreachable, at);
        set_unreachable();
        return;
      case 0x01: return;
      case 0x02: case 0x03: case 0x04: {
        uint32_t np, nr;
        block_type(np, nr);
        charge_stack_walk(h());
        materialize_from(0);
        Ctrl c{op == 0x02 ? kBlock : op == 0x03 ? kLoop : kIf, 0, np, nr};
        if (op == 0x04) {
          uint32_t k = pop_condition();  // the writes above are movs: the flags survive them
          c.else_label = new_label();
          jcc(negate(k), c.else_label);
        }
        c.height = h() - np;
        c.label = new_label();
        if (op == 0x03) {
          bind(c.label);
          c.outer_region = cur_region_;
          ctrls_.push_back(c);
          begin_region(at);
        } else {
          ctrls_.push_back(c);
        }
        return;
      }
      case 0x05: {
        Ctrl& c = ctrls_.back();
        if (!c.unreachable) {
          materialize_from(c.height);
          jump(kJmp, c.label);
        }
        bind(c.else_label);
        c.else_bound = true;
        c.kind = kElse;
        c.unreachable = false;
        drop_to(c.height);
        for (uint32_t k = 0; k < c.nparams; ++k) push_slot();
        return;
      }
      case 0x0b: {
        Ctrl c = ctrls_.back();
        if (!c.unreachable) materialize_from(c.height);
        ctrls_.pop_back();
        if (c.kind == kFunc) {
          if (!c.unreachable) emit_return();
          return;
        }
        if (c.kind == kIf && !c.else_bound) bind(c.else_label);
        if (c.kind != kLoop) bind(c.label);
        else cur_region_ = c.outer_region;
        drop_to(c.height);
        for (uint32_t k = 0; k < c.nresults; ++k) push_slot();
        return;
      }
      case 0x0c:
        emit_branch(in_.u32());
        set_unreachable();
        return;
      case 0x0d: {
        uint32_t depth = in_.u32();
        uint32_t k = pop_condition();
        Ctrl& t = ctrls_[ctrls_.size() - 1 - depth];
        settle_branch_values(arity(t));
        if (t.kind == kFunc || needs_copies(t)) {
          const LabelId skip = new_label();
          jcc(negate(k), skip);
          emit_branch(depth);  // slot copies (movs) then the jump or the return
          bind(skip);
        } else {
          jcc(k, t.label);
        }
        return;
      }
      case 0x0e: return br_table(at);
      case 0x0f:
        settle_branch_values(nresults_);
        emit_return();
        set_unreachable();
        return;
      case 0x10: return wasm_call(in_.u32(), at);
      case 0x11: return call_indirect(at);
      case 0x12: return tail_call(in_.u32(), at);
      case 0x13: return tail_call_indirect(at);
      case 0x1a: pop_n(1); return;
      case 0x1c: {
        uint32_t n = in_.u32();
        in_.skip(n);
        [[fallthrough]];
      }
      case 0x1b: {
        uint32_t a = h() - 3;
        load64(rax, a);
        load64(rcx, a + 1);
        load32(edx, a + 2);
        test(edx, edx);
        cmovz(rax, rcx);
        return result_rax(3);
      }
      case 0x20: {
        uint32_t x = in_.u32();
        push_slot();
        stack_.back().local = int32_t(x);
        return;
      }
      case 0x21: case 0x22: {
        uint32_t x = in_.u32();
        uint32_t top = h() - 1;
        // Operands still reading x get their own copy before x changes (the top one too: a
        // local.tee leaves it on the stack).
        charge_stack_walk(h());
        for (uint32_t i = 0; i < h(); ++i)
          if (stack_[i].local == int64_t(x)) materialize(i);
        if (stack_[top].is_const) store_const(x, stack_[top].c);
        else if (stack_[top].reg >= 0) store_slot64(x, Reg64(stack_[top].reg));
        else if (src(top) != x) { load_slot64(rax, src(top)); store_slot64(x, rax); }
        if (op == 0x21) pop_n(1);
        return;
      }
      case 0x23: case 0x24: {
        uint32_t g = in_.u32();
        if (g >= (1u << 24)) throw Refuse{at, "too many globals"};
        base_op(0x8b, true, 1, 12, kStGlobals);        // mov rcx, [r12 + globals]
        base_op(0x8b, true, 1, 1, int32_t(g) * 8);     // mov rcx, [rcx + 8 g]
        if (op == 0x23) {
          base_op(0x8b, true, 0, 1, 0);                // mov rax, [rcx]
          result_rax(0);
        } else {
          load64(rax, h() - 1);
          base_op(0x89, true, 0, 1, 0);                // mov [rcx], rax
          pop_n(1);
        }
        return;
      }
      case 0x3f: {
        in_.u8();
        mov(rax, r14);
        shr(rax, 16);
        return result_rax(0);
      }
      case 0x40: {
        in_.u8();
        spill_regs();
        load32(edx, h() - 1);
        mov(rdi, r15);
        mov(rsi, r12);
        call(qword[r15 + kCtxGrow]);
        bt(rax, 32);
        trap_if(kCcB, TrapKind::kHostError, at);
        mov(eax, eax);
        result_rax(1);
        reload_memory();
        return;
      }
      case 0x25: return segment_op(kSegTableGet, in_.u32(), 0, 1, true, at);
      case 0x26: return segment_op(kSegTableSet, in_.u32(), 0, 2, false, at);
      case 0xd0: in_.u8(); push_const(0); return;  // ref.null: the null reference is 0
      case 0xd1: load64(rax, h() - 1); test(rax, rax); return result_in_flags(1, 0);
      case 0xd2: return segment_op(kSegRefFunc, in_.u32(), 0, 0, true, at);
      case 0x41: push_const(uint32_t(int32_t(in_.sleb(32)))); return;
      case 0x42: push_const(uint64_t(in_.sleb(64))); return;
      case 0x43: push_const(in_.fixed32()); return;
      case 0x44: push_const(in_.fixed64()); return;
      case 0xfc: {
        uint32_t sub = in_.u32();
        if (sub <= 7 && m_.options.deterministic) return nondet(1, at);
        if (sub <= 7) return truncate(sub & 2, sub & 4, !(sub & 1), at, true);
        if (sub == 10 || sub == 11) {
          // memory.copy / memory.fill: operands as u32 (the interpreter's reading), the work in C.
          if (sub == 10) in_.u8();
          in_.u8();
          spill_regs();
          const uint32_t a = h() - 3;
          mov(rdi, r12);
          mov(esi, sub == 10 ? 0 : 1);
          load32(edx, a);
          load32(ecx, a + 1);
          load32(r8d, a + 2);
          call(qword[r15 + kCtxBulk]);
          test(eax, eax);
          trap_if(kCcNe, TrapKind::kMemoryOutOfBounds, at);
          pop_n(3);
          return;
        }
        switch (sub) {
          case 8: { uint32_t seg = in_.u32(); in_.u8(); return segment_op(kSegMemoryInit, seg, 0, 3, false, at); }
          case 9: return segment_op(kSegDataDrop, in_.u32(), 0, 0, false, at);
          case 12: { uint32_t elem = in_.u32(), table = in_.u32(); return segment_op(kSegTableInit, table, elem, 3, false, at); }
          case 13: return segment_op(kSegElemDrop, in_.u32(), 0, 0, false, at);
          case 14: { uint32_t dst = in_.u32(), src = in_.u32(); return segment_op(kSegTableCopy, dst, src, 3, false, at); }
          case 15: return segment_op(kSegTableGrow, in_.u32(), 0, 2, true, at);
          case 16: return segment_op(kSegTableSize, in_.u32(), 0, 0, true, at);
          case 17: return segment_op(kSegTableFill, in_.u32(), 0, 3, false, at);
          default: break;
        }
        throw Refuse{at, "instruction 0xfc " + std::to_string(sub) + " not supported by the JIT yet"};
      }
      default: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "instruction 0x%02x not supported by the JIT yet", op);
        throw Refuse{at, buf};
      }
    }
  }

  // A table, segment or ref.func instruction: its `pops` operands written to their slots, the
  // work done by segment_helper (jit.cc), which leaves the result (if any) in the lowest
  // operand's slot (the slot the result takes when there are no operands).
  void segment_op(SegOp k, uint32_t x, uint32_t y, uint32_t pops, bool result, size_t at) {
    spill_regs();
    materialize_from(h() - pops);
    const uint32_t first = h() - pops;
    if (result && pops == 0) push_slot();
    mov(rdi, r15);
    mov(rsi, r12);
    mov(edx, uint32_t(k));
    mov(ecx, x);
    mov(r8d, y);
    lea(r9, ptr[rbx + int32_t(home(first)) * 8]);
    call(qword[r15 + kCtxSegment]);
    const LabelId ok = new_label();
    test(eax, eax);
    jump(kCcE, ok);
    lea(esi, ptr[rax - 1]);
    mov(edx, uint32_t(at));
    jump(kJmp, trap_common_);
    bind(ok);
    if (pops) {
      pop_n(pops);
      if (result) push_slot();
    }
  }

  // Deterministic mode: the instruction traps when reached; the code after it stays live, as in
  // the interpreter (it is compiled and charged, though never run).
  void nondet(uint32_t pops, size_t at) {
    trap_if(kJmp, TrapKind::kNondetInstruction, at);
    pop_n(pops);
    push_slot();
  }

  void numeric(uint32_t op, size_t at) {
    if (int ar = nondet_arity(op)) {
      if (m_.options.deterministic) return nondet(uint32_t(ar), at);
      return float_op(op, at);
    }
    const uint32_t top = h() - 1;
    switch (op) {
      case 0x45: load32(eax, top); test(eax, eax); return result_in_flags(1, 0);
      case 0x50: load64(rax, top); test(rax, rax); return result_in_flags(1, 0);
      case 0x67: load32(eax, top); lzcnt(eax, eax); return result_rax(1);
      case 0x68: load32(eax, top); tzcnt(eax, eax); return result_rax(1);
      case 0x69: load32(eax, top); popcnt(eax, eax); return result_rax(1);
      case 0x79: load64(rax, top); lzcnt(rax, rax); return result_rax(1);
      case 0x7a: load64(rax, top); tzcnt(rax, rax); return result_rax(1);
      case 0x7b: load64(rax, top); popcnt(rax, rax); return result_rax(1);
      case 0xa7: load32(eax, top); return result_rax(1);                         // i32.wrap_i64
      case 0xac: load64(rax, top); movsxd(rax, eax); return result_rax(1);       // i64.extend_i32_s
      case 0xad: load32(eax, top); return result_rax(1);                         // i64.extend_i32_u
      case 0xbc: case 0xbe: load32(eax, top); return result_rax(1);              // reinterprets: bits
      case 0xbd: case 0xbf: load64(rax, top); return result_rax(1);
      case 0xc0: load32(eax, top); movsx(eax, al); return result_rax(1);
      case 0xc1: load32(eax, top); movsx(eax, ax); return result_rax(1);
      case 0xc2: load64(rax, top); movsx(rax, al); return result_rax(1);
      case 0xc3: load64(rax, top); movsx(rax, ax); return result_rax(1);
      case 0xc4: load64(rax, top); movsxd(rax, eax); return result_rax(1);
      default: break;
    }
    if (op >= 0x46 && op <= 0x4f) return compare(op - 0x46, false);
    if (op >= 0x51 && op <= 0x5a) return compare(op - 0x51, true);
    if (op >= 0x6a && op <= 0x78) return binary(op - 0x6a, false, at);
    if (op >= 0x7c && op <= 0x8a) return binary(op - 0x7c, true, at);
    throw Refuse{at, "numeric instruction not supported by the JIT yet"};
  }

  // ---- floats (outside deterministic mode), exactly interp_numeric.inc: arithmetic results
  // that are NaN become the canonical NaN, min/max order -0 below +0 and give the canonical NaN
  // for any NaN operand, abs/neg/copysign are bit operations, nearest rounds ties to even (the
  // default MXCSR mode the interpreter's nearbyint uses), trapping truncations check NaN first
  // (bad conversion) then the range (integer overflow) ----
  // Operand i (an f32 when !wide) into x.
  void loadf(const Xmm& x, uint32_t i, bool wide) {
    if (stack_[i].is_const) {
      load_imm(rax, stack_[i].c);
      if (wide) movq(x, rax);
      else movd(x, eax);
    } else if (stack_[i].reg >= 0) {
      if (wide) movq(x, Reg64(stack_[i].reg));
      else movd(x, Reg32(stack_[i].reg));
    } else if (wide) {
      movsd(x, q(src(i)));
    } else {
      movss(x, d(src(i)));
    }
  }
  // Calls emit with operand i as an xmm operand: its slot, or xmm1 holding a constant or a
  // register's value.
  template <class F>
  void with_fop(uint32_t i, bool wide, F emit) {
    if (stack_[i].is_const || stack_[i].reg >= 0) {
      loadf(xmm1, i, wide);
      emit(static_cast<const Operand&>(xmm1));
    } else {
      emit(static_cast<const Operand&>(wide ? q(src(i)) : d(src(i))));
    }
  }
  // xmm0 (bits) to rax; when `canon`, a NaN becomes the canonical NaN (the flags of an
  // unordered self-compare select it, no branch).
  void xmm0_to_rax(bool wide, bool canon) {
    if (canon) {
      if (wide) ucomisd(xmm0, xmm0);
      else ucomiss(xmm0, xmm0);
    }
    if (wide) movq(rax, xmm0);
    else movd(eax, xmm0);
    if (!canon) return;
    if (wide) {
      mov(rcx, uint64_t(0x7ff8000000000000ull));
      cmovp(rax, rcx);
    } else {
      mov(ecx, 0x7fc00000u);
      cmovp(eax, ecx);
    }
  }
  void fcompare(const Xmm& x, const Operand& o, bool wide) {
    if (wide) ucomisd(x, o);
    else ucomiss(x, o);
  }

  void float_op(uint32_t op, size_t at) {
    const uint32_t top = h() - 1;
    // Compares: eq ne lt gt le ge (f32 0x5b.., f64 0x61..). Unordered sets ZF, PF and CF, so
    // "above"/"above or equal" with the operands ordered as below are false on NaN.
    if (op >= 0x5b && op <= 0x66) {
      const bool wide = op >= 0x61;
      const uint32_t k = op - (wide ? 0x61 : 0x5b), a = h() - 2, b = h() - 1;
      if (k == 0 || k == 1) {
        loadf(xmm0, a, wide);
        with_fop(b, wide, [&](const Operand& o) { fcompare(xmm0, o, wide); });
        if (k == 0) { sete(al); setnp(cl); and_(al, cl); }
        else { setne(al); setp(cl); or_(al, cl); }
        movzx(eax, al);
        return result_rax(2);
      }
      // lt, le: b above (or equal) a; gt, ge: a above (or equal) b.
      const bool swap = k == 2 || k == 4;
      loadf(xmm0, swap ? b : a, wide);
      with_fop(swap ? a : b, wide, [&](const Operand& o) { fcompare(xmm0, o, wide); });
      return result_in_flags(2, k <= 3 ? 5 : 9);  // ja / jae
    }
    switch (op) {
      case 0x8b: load32(eax, top); and_(eax, 0x7fffffff); return result_rax(1);
      case 0x8c: load32(eax, top); xor_(eax, 0x80000000u); return result_rax(1);
      case 0x99: load64(rax, top); btr(rax, 63); return result_rax(1);
      case 0x9a: load64(rax, top); btc(rax, 63); return result_rax(1);
      case 0x98: case 0xa6: {  // copysign
        const bool wide = op == 0xa6;
        load64(rax, h() - 2);
        load64(rcx, h() - 1);
        if (wide) {
          btr(rax, 63);
          shr(rcx, 63);
          shl(rcx, 63);
          or_(rax, rcx);
        } else {
          and_(eax, 0x7fffffff);
          and_(ecx, 0x80000000u);
          or_(eax, ecx);
        }
        return result_rax(2);
      }
      case 0x8d: case 0x8e: case 0x8f: case 0x90: case 0x9b: case 0x9c: case 0x9d: case 0x9e: {
        // ceil floor trunc nearest: roundss/sd with the mode in the immediate (8: no precision
        // exception; 0 nearest-even, 1 down, 2 up, 3 toward zero).
        const bool wide = op >= 0x9b;
        static const uint8_t kMode[4] = {2, 1, 3, 0};
        const uint8_t imm = uint8_t(8 | kMode[op - (wide ? 0x9b : 0x8d)]);
        loadf(xmm0, top, wide);
        if (wide) roundsd(xmm0, xmm0, imm);
        else roundss(xmm0, xmm0, imm);
        xmm0_to_rax(wide, true);
        return result_rax(1);
      }
      case 0x91: case 0x9f: {
        const bool wide = op == 0x9f;
        loadf(xmm0, top, wide);
        if (wide) sqrtsd(xmm0, xmm0);
        else sqrtss(xmm0, xmm0);
        xmm0_to_rax(wide, true);
        return result_rax(1);
      }
      case 0x92: case 0x93: case 0x94: case 0x95: case 0xa0: case 0xa1: case 0xa2: case 0xa3: {
        const bool wide = op >= 0xa0;
        const uint32_t k = op - (wide ? 0xa0 : 0x92);
        loadf(xmm0, h() - 2, wide);
        with_fop(h() - 1, wide, [&](const Operand& o) {
          switch (k) {
            case 0: if (wide) addsd(xmm0, o); else addss(xmm0, o); break;
            case 1: if (wide) subsd(xmm0, o); else subss(xmm0, o); break;
            case 2: if (wide) mulsd(xmm0, o); else mulss(xmm0, o); break;
            default: if (wide) divsd(xmm0, o); else divss(xmm0, o); break;
          }
        });
        xmm0_to_rax(wide, true);
        return result_rax(2);
      }
      case 0x96: case 0x97: case 0xa4: case 0xa5: return min_max(op == 0x97 || op == 0xa5, op >= 0xa4);
      case 0xa8: return truncate(false, false, true, at, false);
      case 0xa9: return truncate(false, false, false, at, false);
      case 0xaa: return truncate(true, false, true, at, false);
      case 0xab: return truncate(true, false, false, at, false);
      case 0xae: return truncate(false, true, true, at, false);
      case 0xaf: return truncate(false, true, false, at, false);
      case 0xb0: return truncate(true, true, true, at, false);
      case 0xb1: return truncate(true, true, false, at, false);
      case 0xb2: case 0xb3: case 0xb4: case 0xb5: case 0xb7: case 0xb8: case 0xb9: case 0xba: {
        // int -> float: cvtsi2ss/sd rounds to nearest (as the C++ conversions); u64 with the top
        // bit set is halved keeping the low bit (round to odd), converted, doubled.
        const bool wide = op >= 0xb7;
        const uint32_t k = op - (wide ? 0xb7 : 0xb2);  // i32_s i32_u i64_s i64_u
        if (k == 0) { load32(eax, top); movsxd(rax, eax); }
        else if (k == 1) load32(eax, top);
        else load64(rax, top);
        xorps(xmm0, xmm0);
        auto cvt = [&](const Reg64& r) {
          if (wide) cvtsi2sd(xmm0, r);
          else cvtsi2ss(xmm0, r);
        };
        if (k == 3) {
          const LabelId big = new_label();
          const LabelId done = new_label();
          test(rax, rax);
          jump(kCcS, big);
          cvt(rax);
          jump(kJmp, done);
          bind(big);
          mov(rcx, rax);
          shr(rcx, 1);
          and_(eax, 1);
          or_(rcx, rax);
          cvt(rcx);
          if (wide) addsd(xmm0, xmm0);
          else addss(xmm0, xmm0);
          bind(done);
        } else {
          cvt(rax);
        }
        xmm0_to_rax(wide, false);
        return result_rax(1);
      }
      case 0xb6:  // f32.demote_f64
        loadf(xmm0, top, true);
        cvtsd2ss(xmm0, xmm0);
        xmm0_to_rax(false, true);
        return result_rax(1);
      case 0xbb:  // f64.promote_f32
        loadf(xmm0, top, false);
        cvtss2sd(xmm0, xmm0);
        xmm0_to_rax(true, true);
        return result_rax(1);
      default: break;
    }
    throw Refuse{at, "float instruction not supported by the JIT"};
  }

  // fmin/fmax of interp.cc: any NaN -> canonical NaN; equal operands (so also +0 and -0): min
  // ORs the bits (-0 wins), max ANDs them (+0 wins); otherwise minss/maxss (exact when ordered
  // and different).
  void min_max(bool is_max, bool wide) {
    const LabelId nan = new_label();
    const LabelId ne = new_label();
    const LabelId done = new_label();
    loadf(xmm0, h() - 2, wide);
    loadf(xmm1, h() - 1, wide);
    fcompare(xmm0, xmm1, wide);
    jump(kCcP, nan);
    jump(kCcNe, ne);
    if (is_max) andps(xmm0, xmm1);
    else orps(xmm0, xmm1);
    jump(kJmp, done);
    bind(ne);
    if (wide) { if (is_max) maxsd(xmm0, xmm1); else minsd(xmm0, xmm1); }
    else { if (is_max) maxss(xmm0, xmm1); else minss(xmm0, xmm1); }
    jump(kJmp, done);
    bind(nan);
    if (wide) { mov(rax, uint64_t(0x7ff8000000000000ull)); movq(xmm0, rax); }
    else { mov(eax, 0x7fc00000u); movd(xmm0, eax); }
    bind(done);
    xmm0_to_rax(wide, false);
    result_rax(2);
  }

  // float -> integer truncation, the interpreter's bounds: signed i32 from f32 and signed i64
  // take x >= INT_MIN; the others x > lo (-1, or -2^31-1 for f64 -> i32); all x < 2^width
  // (unsigned) or 2^(width-1) (signed). Trapping (0xa8..0xb1): NaN is a bad conversion, out of
  // range an integer overflow. Saturating (0xfc 0..7): NaN 0, below the minimum, above the maximum.
  void truncate(bool from64, bool to64, bool is_signed, size_t at, bool saturating) {
    const uint32_t top = h() - 1;
    double lo, hi;
    bool lo_inclusive;
    if (is_signed) {
      hi = to64 ? 9223372036854775808.0 : 2147483648.0;
      lo_inclusive = to64 || !from64;
      lo = to64 ? -9223372036854775808.0 : (from64 ? -2147483649.0 : -2147483648.0);
    } else {
      hi = to64 ? 18446744073709551616.0 : 4294967296.0;
      lo_inclusive = false;
      lo = -1.0;
    }
    auto load_bound = [&](double v) {
      if (from64) { uint64_t b; std::memcpy(&b, &v, 8); mov(rax, b); movq(xmm1, rax); }
      else { float f = float(v); uint32_t b; std::memcpy(&b, &f, 4); mov(eax, b); movd(xmm1, eax); }
    };
    // The three ways out: labels of the saturating results, or the trap stubs.
    const LabelId done = new_label();
    const LabelId nan = saturating ? new_label() : kNoLabel;
    const LabelId below = saturating ? new_label() : kNoLabel;
    const LabelId above = saturating ? new_label() : kNoLabel;
    auto out = [&](uint8_t cc, LabelId l, TrapKind k) {
      if (saturating) jump(cc, l);
      else trap_if(cc, k, at);
    };
    loadf(xmm0, top, from64);
    fcompare(xmm0, xmm0, from64);
    out(kCcP, nan, TrapKind::kBadConversionToInteger);
    load_bound(lo);
    fcompare(xmm0, xmm1, from64);
    out(lo_inclusive ? kCcB : kCcBe, below, TrapKind::kIntegerOverflow);
    load_bound(hi);
    fcompare(xmm0, xmm1, from64);
    out(kCcAe, above, TrapKind::kIntegerOverflow);
    auto cvt = [&](const auto& r) {
      if (from64) cvttsd2si(r, xmm0);
      else cvttss2si(r, xmm0);
    };
    if (!to64 && is_signed) {
      cvt(eax);
    } else if (!to64 || is_signed) {
      cvt(rax);
      if (!to64) mov(eax, eax);
    } else {
      // u64: values from 2^63 are reduced by 2^63 (exact), converted, and get the top bit back.
      const LabelId small = new_label();
      load_bound(9223372036854775808.0);
      fcompare(xmm0, xmm1, from64);
      jump(kCcB, small);
      if (from64) subsd(xmm0, xmm1);
      else subss(xmm0, xmm1);
      cvt(rax);
      btc(rax, 63);
      jump(kJmp, done);
      bind(small);
      cvt(rax);
    }
    if (saturating) {
      const uint64_t vmin = is_signed ? (to64 ? uint64_t(1) << 63 : 0x80000000ull) : 0;
      const uint64_t vmax = is_signed ? (to64 ? (uint64_t(1) << 63) - 1 : 0x7fffffffull) : (to64 ? ~uint64_t(0) : 0xffffffffull);
      jump(kJmp, done);
      bind(nan);
      xor_(eax, eax);
      jump(kJmp, done);
      bind(below);
      load_imm(rax, vmin);
      jump(kJmp, done);
      bind(above);
      load_imm(rax, vmax);
    }
    bind(done);
    result_rax(1);
  }

  // eq ne lt_s lt_u gt_s gt_u le_s le_u ge_s ge_u
  void compare(uint32_t k, bool wide) {
    const uint32_t a = h() - 2, b = h() - 1;
    if (wide) {
      load64(rax, a);
      if (stack_[b].is_const && int64_t(stack_[b].c) == int64_t(int32_t(uint32_t(stack_[b].c))))
        alu_imm(7, true, 0, uint32_t(stack_[b].c));
      else if (stack_[b].is_const) { load_imm(rcx, stack_[b].c); cmp(rax, rcx); }
      else if (stack_[b].reg >= 0) reg_op(0x3b, true, 0, stack_[b].reg);
      else slot_op(0x3b, true, 0, src(b));
    } else {
      load32(eax, a);
      if (stack_[b].is_const) alu_imm(7, false, 0, uint32_t(stack_[b].c));
      else if (stack_[b].reg >= 0) reg_op(0x3b, false, 0, stack_[b].reg);
      else slot_op(0x3b, false, 0, src(b));
    }
    result_in_flags(2, k);
  }

  // ---- a compare's result kept in the flags (condition k: eq ne lt_s lt_u gt_s gt_u le_s le_u
  // ge_s ge_u) until the next instruction: br_if and if jump on it, anything else writes it ----
  void result_in_flags(uint32_t pops, uint32_t k) {
    pop_n(pops);
    push_slot();
    flags_cc_ = int(k);
  }
  static uint32_t negate(uint32_t k) {
    static const uint8_t kNot[10] = {1, 0, 8, 9, 6, 7, 4, 5, 2, 3};
    return kNot[k];
  }
  void jcc(uint32_t k, LabelId l) {
    static const uint8_t kCc[10] = {kCcE, kCcNe, kCcL, kCcB, kCcG, kCcA, kCcLe, kCcBe, kCcGe, kCcAe};
    jump(kCc[k], l);
  }
  void materialize_flags() {
    if (flags_cc_ < 0) return;
    switch (flags_cc_) {
      case 0: sete(al); break;
      case 1: setne(al); break;
      case 2: setl(al); break;
      case 3: setb(al); break;
      case 4: setg(al); break;
      case 5: seta(al); break;
      case 6: setle(al); break;
      case 7: setbe(al); break;
      case 8: setge(al); break;
      default: setae(al); break;
    }
    movzx(eax, al);
    mov(q(home(h() - 1)), rax);
    flags_cc_ = -1;
  }
  // The condition on top of the stack (popped) as a flags condition that is true when it is
  // nonzero: a pending compare's, or a test of the value.
  uint32_t pop_condition() {
    if (flags_cc_ >= 0) {
      uint32_t k = uint32_t(flags_cc_);
      flags_cc_ = -1;
      pop_n(1);
      return k;
    }
    load32(eax, h() - 1);
    pop_n(1);
    ensure(16);
    put8(0x85);  // test eax, eax
    put8(0xc0);
    return 1;  // ne
  }

  // add sub mul div_s div_u rem_s rem_u and or xor shl shr_s shr_u rotl rotr
  void binary(uint32_t k, bool wide, size_t at) {
    const uint32_t a = h() - 2, b = h() - 1;
    const Reg64 A = rax, B = rcx;
    const Reg32 A32 = eax, B32 = ecx;
    if (wide) load64(A, a);
    else load32(A32, a);
    const bool bconst = stack_[b].is_const;
    const uint64_t bc = stack_[b].c;
    const bool b_imm32 = bconst && (!wide || int64_t(bc) == int64_t(int32_t(uint32_t(bc))));
    // The right operand for and/or/xor/add/sub: an immediate, or its slot.
    // slot_opcode: the reg, r/m form (its ext for an immediate is slot_opcode >> 3).
    auto alu = [&](auto op64, uint32_t slot_opcode) {
      if (b_imm32) {
        alu_imm(int(slot_opcode >> 3), wide, A.getIdx(), uint32_t(bc));
      } else if (bconst) {
        load_imm(B, bc);
        op64(A, B);
      } else if (stack_[b].reg >= 0) {
        reg_op(slot_opcode, wide, A.getIdx(), stack_[b].reg);
      } else {
        slot_op(slot_opcode, wide, A.getIdx(), src(b));
      }
    };
    auto loadb = [&]() {
      if (wide) load64(B, b);
      else load32(B32, b);
    };
    switch (k) {
      case 0: alu([&](const Reg& r, const Reg& v) { add(r, v); }, 0x03); break;
      case 1: alu([&](const Reg& r, const Reg& v) { sub(r, v); }, 0x2b); break;
      case 2:
        loadb();
        if (wide) imul(A, B);
        else imul(A32, B32);
        break;
      case 3: case 4: case 5: case 6: {
        loadb();
        const LabelId done = new_label();
        if (wide) test(B, B);
        else test(B32, B32);
        trap_if(kCcE, TrapKind::kIntegerDivideByZero, at);
        if (k == 3 || k == 5) {
          // INT_MIN / -1 overflows (a trap for div_s; rem_s of it is 0); x86 would fault on both.
          const LabelId regular = new_label();
          if (wide) cmp(B, -1);
          else cmp(B32, -1);
          jump(kCcNe, regular);
          if (k == 5) {
            xor_(eax, eax);
            jump(kJmp, done);
          } else {
            if (wide) {
              mov(rdx, uint64_t(1) << 63);
              cmp(A, rdx);
            } else {
              cmp(A32, 0x80000000u);
            }
            trap_if(kCcE, TrapKind::kIntegerOverflow, at);
          }
          bind(regular);
          if (wide) { cqo(); idiv(B); }
          else { cdq(); idiv(B32); }
        } else {
          xor_(edx, edx);
          if (wide) div(B);
          else div(B32);
        }
        if (k == 5 || k == 6) mov(A, rdx);
        bind(done);
        break;
      }
      case 7: alu([&](const Reg& r, const Reg& v) { and_(r, v); }, 0x23); break;
      case 8: alu([&](const Reg& r, const Reg& v) { or_(r, v); }, 0x0b); break;
      case 9: alu([&](const Reg& r, const Reg& v) { xor_(r, v); }, 0x33); break;
      default: {
        // Shifts and rotates: the count is taken modulo the width by the hardware, as in wasm.
        const Reg& R = wide ? static_cast<const Reg&>(A) : static_cast<const Reg&>(A32);
        if (bconst) {
          int n = int(bc & (wide ? 63 : 31));
          switch (k) {
            case 10: shl(R, n); break;
            case 11: sar(R, n); break;
            case 12: shr(R, n); break;
            case 13: rol(R, n); break;
            default: ror(R, n); break;
          }
        } else {
          load32(B32, b);
          switch (k) {
            case 10: shl(R, cl); break;
            case 11: sar(R, cl); break;
            case 12: shr(R, cl); break;
            case 13: rol(R, cl); break;
            default: ror(R, cl); break;
          }
        }
        break;
      }
    }
    // (every 32-bit operation above zero-extends into rax: i32 slots hold zero-extended values)
    result_rax(2);
  }

  // ea = uint32(addr) + offset; trap when ea + size > memory size (the interpreter's check).
  // Leaves ea in rax and returns the displacement to add.
  int32_t bounds_check(uint32_t addr_index, uint32_t offset, uint32_t size, size_t at) {
    load32(eax, addr_index);
    if (offset > 0x7fff0000u) {
      mov(ecx, offset);
      add(rax, rcx);
      offset = 0;
    }
    base_op(0x8d, true, 1, 0, int32_t(offset + size));  // lea rcx, [rax + offset + size]
    ensure(16);
    put8(0x4c);  // cmp rcx, r14
    put8(0x39);
    put8(0xf1);
    trap_if(kCcA, TrapKind::kMemoryOutOfBounds, at);
    return int32_t(offset);
  }

  void load(uint32_t op, uint32_t offset, size_t at) {
    static const uint8_t kSize[14] = {4, 8, 4, 8, 1, 1, 2, 2, 1, 1, 2, 2, 4, 4};
    const uint32_t a = h() - 1;
    int32_t disp = bounds_check(a, offset, kSize[op - 0x28], at);
    switch (op) {
      case 0x28: case 0x2a: case 0x35: heap_op(false, false, 0x8b, -1, 0, disp); break;  // mov eax, dword
      case 0x29: case 0x2b: heap_op(false, true, 0x8b, -1, 0, disp); break;              // mov rax, qword
      case 0x2c: heap_op(false, false, 0x0f, 0xbe, 0, disp); break;                      // movsx eax, byte
      case 0x2d: case 0x31: heap_op(false, false, 0x0f, 0xb6, 0, disp); break;           // movzx eax, byte
      case 0x2e: heap_op(false, false, 0x0f, 0xbf, 0, disp); break;                      // movsx eax, word
      case 0x2f: case 0x33: heap_op(false, false, 0x0f, 0xb7, 0, disp); break;           // movzx eax, word
      case 0x30: heap_op(false, true, 0x0f, 0xbe, 0, disp); break;                       // movsx rax, byte
      case 0x32: heap_op(false, true, 0x0f, 0xbf, 0, disp); break;                       // movsx rax, word
      default: heap_op(false, true, 0x63, -1, 0, disp); break;                           // movsxd rax (0x34)
    }
    result_rax(1);
  }

  void store(uint32_t op, uint32_t offset, size_t at) {
    static const uint8_t kSize[9] = {4, 8, 4, 8, 1, 2, 1, 2, 4};
    const uint32_t a = h() - 2, v = h() - 1;
    int32_t disp = bounds_check(a, offset, kSize[op - 0x36], at);
    load64(rdx, v);
    switch (op) {
      case 0x36: case 0x38: case 0x3e: heap_op(false, false, 0x89, -1, 2, disp); break;  // mov dword, edx
      case 0x37: case 0x39: heap_op(false, true, 0x89, -1, 2, disp); break;              // mov qword, rdx
      case 0x3a: case 0x3c: heap_op(false, false, 0x88, -1, 2, disp); break;             // mov byte, dl
      default: heap_op(true, false, 0x89, -1, 2, disp); break;                           // mov word, dx
    }
    pop_n(2);
  }

  void br_table(size_t at) {
    uint32_t n = in_.u32();
    std::vector<uint32_t> depths(size_t(n) + 1);
    for (auto& dd : depths) dd = in_.u32();
    settle_branch_values(arity(ctrls_[ctrls_.size() - 1 - depths.back()]), 1);
    load32(eax, h() - 1);
    pop_n(1);
    // i >= n selects the default (the last entry), as the interpreter's clamp.
    mov(ecx, n);
    cmp(eax, ecx);
    cmovae(eax, ecx);
    const LabelId table = new_label();
    lea_rcx_rip(lbl(table));
    mov(rax, qword[rcx + rax * 8]);
    add(rax, rcx);
    jmp(rax);
    // One stub per distinct target that needs copies (or returns), so the code grows with the
    // nesting depth, not with the table.
    std::map<uint32_t, LabelId> stub;
    std::vector<LabelId> dest;
    for (uint32_t dd : depths) {
      Ctrl& t = ctrls_[ctrls_.size() - 1 - dd];
      if (t.kind != kFunc && !needs_copies(t)) { dest.push_back(t.label); continue; }
      auto it = stub.find(dd);
      if (it == stub.end()) it = stub.emplace(dd, new_label()).first;
      dest.push_back(it->second);
    }
    align(8);
    bind(table);
    const size_t table_pos = getSize();
    tables_.emplace_back(table_pos, uint32_t(dest.size()));
    for (LabelId l : dest) table_entry(lbl(l), table_pos);
    for (const auto& [dd, l] : stub) {
      bind(l);
      emit_branch(dd);
      if (getSize() > kMaxCodeBytes) throw Refuse{at, "module too large for the JIT"};
    }
    set_unreachable();
  }

  void wasm_call(uint32_t f, size_t at) {
    const FuncType& ft = m_.types[m_.funcs[f]];
    const uint32_t np = uint32_t(ft.params.size()), nr = uint32_t(ft.results.size());
    spill_regs();
    materialize_from(h() - np);
    const int32_t base = int32_t(home(h() - np)) * 8;  // the callee's frame starts at its arguments
    if (f >= m_.num_imported_funcs) {
      if (base) alu_imm(0, true, 3, uint32_t(base));  // add rbx, base
      call_to(func_targets_[f - m_.num_imported_funcs]);
      call_sites_.emplace_back(uint32_t(getSize()), uint32_t(at));
      reload_instance();
      if (base) alu_imm(5, true, 3, uint32_t(base));  // sub rbx, base
    } else {
      if (uint64_t(f) * kTargetSize > uint64_t(INT32_MAX) / 2) throw Refuse{at, "too many imports"};
      mov(rax, qword[r12 + kStTargets]);
      add(rax, int32_t(f) * kTargetSize);
      call_target(base, at);
    }
    reload_memory();
    pop_n(np);
    for (uint32_t k = 0; k < nr; ++k) push_slot();
  }

  // A call through the CallTarget in rax: JIT code directly (r12 switched to the callee's
  // instance and restored from this frame after), anything else through the call_out helper.
  void call_target(int32_t base, size_t at) {
    const LabelId out = new_label();
    const LabelId done = new_label();
    mov(rcx, qword[rax + kTargetCode]);
    test(rcx, rcx);
    jump(kCcE, out);
    if (base) alu_imm(0, true, 3, uint32_t(base));  // add rbx, base
    mov(r12, qword[rax + kTargetState]);
    call(rcx);
    call_sites_.emplace_back(uint32_t(getSize()), uint32_t(at));
    reload_instance();
    if (base) alu_imm(5, true, 3, uint32_t(base));  // sub rbx, base
    jump(kJmp, done);
    bind(out);
    mov(rdi, r15);
    mov(rsi, r12);
    mov(rdx, rax);
    lea(rcx, ptr[rbx + base]);
    mov(r8, rsp);
    mov(r9d, uint32_t(at));
    call(qword[r15 + kCtxCallOut]);
    test(eax, eax);
    jump(kCcNe, unwind_);
    bind(done);
  }

  // ---- tail calls (return_call, return_call_indirect), as the interpreter's do_tail_call: the
  // caller's charge is refunded before the callee's is checked; the check fails at the
  // return_call, in the caller's frame; then the callee runs in the caller's frame (arguments
  // moved to slot 0) and returns to the caller's caller. A JIT callee is jumped to (its prologue
  // repeats the check, which now passes, and charges); any other goes through call_out, which
  // refunds (see abi.h) ----

  // The stack rule with this frame's charge refunded, against a callee of cost ecx and frame
  // size edi slots; commits the refund when it passes (rax is kept).
  void tail_check(size_t at) {
    mov(edx, dword[r15 + kCtxCallsLeft]);
    add(edx, 1);
    trap_if(kCcE, TrapKind::kStackOverflow, at);
    mov(esi, dword[r15 + kCtxValuesLeft]);
    add(esi, cost_);
    cmp(esi, ecx);
    trap_if(kCcB, TrapKind::kStackOverflow, at);
    lea(rdi, ptr[rbx + rdi * 8]);
    cmp(rdi, qword[r15 + kCtxStackEnd]);
    trap_if(kCcA, TrapKind::kStackOverflow, at);
    mov(dword[r15 + kCtxCallsLeft], edx);
    mov(dword[r15 + kCtxValuesLeft], esi);
  }

  void tail_call(uint32_t f, size_t at) {
    const FuncType& ft = m_.types[m_.funcs[f]];
    const uint32_t np = uint32_t(ft.params.size());
    copy_values(h() - np, np, 0);
    if (f >= m_.num_imported_funcs) {
      const CompiledFunc& cf = m_.compiled[f - m_.num_imported_funcs];
      mov(ecx, cf.cost);
      mov(edi, cf.frame_slots);
      tail_check(at);
      add(rsp, 8);
      jump(kJmp, func_targets_[f - m_.num_imported_funcs]);
    } else {
      if (uint64_t(f) * kTargetSize > uint64_t(INT32_MAX) / 2) throw Refuse{at, "too many imports"};
      mov(rax, qword[r12 + kStTargets]);
      add(rax, int32_t(f) * kTargetSize);
      tail_call_target(at);
    }
    set_unreachable();
  }

  // Pops the element index, spills the np arguments below it to their slots and leaves the
  // callee's CallTarget in rax; a null, out-of-range or mistyped entry traps at `at` with the
  // kind the lookup helper left pending.
  void lookup_indirect_target(uint32_t table, uint32_t type_index, uint32_t np, size_t at) {
    spill_regs();
    load32(r8d, h() - 1);  // the element index
    pop_n(1);
    materialize_from(h() - np);
    mov(rdi, r15);
    mov(rsi, r12);
    mov(edx, table);
    mov(ecx, type_index);
    call(qword[r15 + kCtxIndirect]);
    const LabelId found = new_label();
    test(rax, rax);
    jump(kCcNe, found);
    mov(esi, dword[r15 + kCtxPendingTrap]);
    mov(edx, uint32_t(at));
    jump(kJmp, trap_common_);
    bind(found);
  }

  void tail_call_indirect(size_t at) {
    const uint32_t type_index = in_.u32(), table = in_.u32();
    const uint32_t np = uint32_t(m_.types[type_index].params.size());
    const uint32_t index_slot = home(h() - 1);  // above every argument's slot and slot np
    lookup_indirect_target(table, type_index, np, at);
    store_slot64(index_slot, rax);
    copy_values(h() - np, np, 0);
    load_slot64(rax, index_slot);
    tail_call_target(at);
    set_unreachable();
  }

  // The arguments are in slots [0, np); rax is the CallTarget.
  void tail_call_target(size_t at) {
    const LabelId out = new_label();
    cmp(qword[rax + kTargetCode], 0);
    jump(kCcE, out);
    mov(ecx, dword[rax + kTargetCost]);
    mov(edi, dword[rax + kTargetFrameSlots]);
    tail_check(at);
    mov(r12, qword[rax + kTargetState]);
    add(rsp, 8);
    jmp(qword[rax + kTargetCode]);
    bind(out);
    mov(rdi, r15);
    mov(rsi, r12);
    mov(rdx, rax);
    mov(rcx, rbx);
    mov(r8, rsp);
    mov(r9, (uint64_t(cost_) + 1) << 32 | uint32_t(at));
    call(qword[r15 + kCtxCallOut]);
    test(eax, eax);
    jump(kCcNe, unwind_);
    // The results are in slots [0, results); the helper refunded the charge.
    add(rsp, 8);
    ret();
  }

  void call_indirect(size_t at) {
    const uint32_t type_index = in_.u32(), table = in_.u32();
    const FuncType& ft = m_.types[type_index];
    const uint32_t np = uint32_t(ft.params.size()), nr = uint32_t(ft.results.size());
    lookup_indirect_target(table, type_index, np, at);
    const int32_t base = int32_t(home(h() - np)) * 8;
    call_target(base, at);
    reload_memory();
    pop_n(np);
    for (uint32_t k = 0; k < nr; ++k) push_slot();
  }

  const ModuleImpl& m_;
  CodeMappings* alloc_;  // the code buffer's (grow)
  size_t populated_ = 0;  // the buffer's first bytes whose pages are faulted in (make_room)
  std::vector<uint32_t> copy_from_;  // copy_values' sources
  std::vector<Target> labels_;  // the current function's: [0, labels_used_) in use
  size_t labels_used_ = 0;
  std::vector<Target> func_targets_;  // one per defined function's entry (calls may jump forwards)
  std::vector<uint32_t> func_start_;
  Target trap_common_, overflow_common_, unwind_;
  std::vector<std::pair<size_t, uint64_t>> fuel_patches_;  // (imm32 position, region count)
  std::vector<std::pair<size_t, uint32_t>> tables_;        // (position, entries)
  std::vector<std::pair<uint32_t, uint32_t>> call_sites_;
  // The function being compiled.
  BodyCursor in_;
  size_t op_at_ = 0;
  uint32_t L_ = 0, frame_slots_ = 0, cost_ = 0, nresults_ = 0;
  std::vector<Entry> stack_;
  int32_t reg_owner_[16];  // by register number: the operand in that pool register, or -1
  std::vector<Ctrl> ctrls_;
  uint32_t dead_depth_ = 0;
  int cur_region_ = -1;
  int flags_cc_ = -1;  // >= 0: the top operand is in the flags, condition flags_cc_
  std::vector<TrapStub> traps_;
  bool traps_sorted_ = true;  // traps_' offsets ascend
  std::vector<std::pair<uint32_t, uint32_t>> trap_sites_;  // (stub, rel32 field of a jump to it)
  std::vector<uint32_t> stub_pos_;
};

}  // namespace

std::shared_ptr<const ModuleCode> compile_module(const ModuleImpl& m, std::string* note) {
  if (!cpu_supports_jit()) {
    *note = "jit: this CPU lacks LZCNT/BMI1/POPCNT/SSE4.1; the module runs on the interpreter";
    return nullptr;
  }
  Xbyak::ClearError();
  CodeMappings alloc;
  ModuleCompiler c(m, &alloc);
  try {
    c.compile_all();
  } catch (const Refuse& r) {
    *note = "jit: the module runs on the interpreter: at offset " + std::to_string(r.at) + ": " + r.why;
    return nullptr;
  } catch (const DecodeError& e) {
    *note = "jit: the module runs on the interpreter: at offset " + std::to_string(e.offset) + ": " + e.msg;
    return nullptr;
  }
  c.ready();
  if (int err = Xbyak::GetError()) {
    Xbyak::ClearError();
    *note = std::string("jit: the module runs on the interpreter: assembler error: ") + Xbyak::ConvertErrorToString(err);
    return nullptr;
  }
  auto out = std::make_shared<ModuleCode>();
  c.finish(*out);
  uint8_t* code = const_cast<uint8_t*>(c.getCode());
  out->code = CodeBuffer::seal(code, c.getSize(), alloc.release(code));
  if (!out->code) {
    *note = "jit: the module runs on the interpreter: cannot map executable memory";
    return nullptr;
  }
  *note = "jit: " + std::to_string(m.compiled.size()) + " functions, " + std::to_string(c.getSize()) + " bytes of x86-64";
  return out;
}

}  // namespace genvm::wasm::jit
