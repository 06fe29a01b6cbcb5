// Internal to src/wasm/jit: the contract between generated code and the C++ runtime (jit.cc):
// the run context r15 points at, the registers, and the helpers JIT code calls through the
// context. Generated code reads these fields at the offsets below, so they are standard
// layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "wasm/jit/jit.h"

namespace genvm::wasm::jit {

// Registers of generated code (System V; all callee-saved, so C helpers keep them):
//   rbx  fp: slot 0 of the current frame (the interpreter's 8-byte slots, in Store's stack)
//   r12  InstanceState* of the running function's instance
//   r13  memory 0 base, r14 memory 0 size (reloaded after calls and memory.grow)
//   r15  RunCtx*
// rax, rcx, rdx are scratch within one wasm instruction. rsi, rdi, r8-r11 are the operand
// pool: a result waits there for its consumer within straight-line code (compiler.cc, kPool);
// calls, helpers and `rep movsq` clobber them, so the pool is written to the slots before those.
// No value is in a register at a label, a call or a trap.
//
// Native frame of every JIT function: 16 bytes, [rsp] = its InstanceState*, [rsp+8] = the
// return address into its caller. The entry trampoline's frame has 0 in the InstanceState
// word, which ends a backtrace walk.

struct RunCtx;

// Helpers (C calling convention). call_out runs a target without JIT code (a host function, or
// a wasm function of an instance on the interpreter); nonzero: a trap was recorded. For a tail
// call, bits 32.. of wasm_offset hold 1 + the caller's charge, which the helper refunds as the
// interpreter does (a wasm callee: before it runs, in the caller's frame, which leaves the
// backtrace; a host callee: after it returned).
using CallOutFn = uint32_t (*)(RunCtx*, InstanceState*, const CallTarget* target, uint64_t* args,
                               uint64_t* jit_rsp, uint64_t wasm_offset);
// call_indirect's lookup: the target, or null with RunCtx::pending_trap set to the trap kind.
using IndirectFn = const CallTarget* (*)(RunCtx*, InstanceState*, uint64_t table, uint64_t type_index,
                                         uint64_t elem);
using TrapFn = void (*)(RunCtx*, uint64_t kind, uint64_t wasm_offset, uint64_t* jit_rsp, InstanceState*);
using OverflowFn = void (*)(RunCtx*, uint64_t* entry_rsp);
// Result: the old size in pages, UINT32_MAX when refused, bit 32 set on a host fault.
using GrowFn = uint64_t (*)(RunCtx*, InstanceState*, uint64_t delta_pages);
// memory.copy (kind 0: dst, src, n) and memory.fill (kind 1: dst, byte, n) on memory 0; nonzero
// when out of bounds (nothing written, as the interpreter).
using BulkFn = uint32_t (*)(InstanceState*, uint64_t kind, uint64_t dst, uint64_t src_or_byte, uint64_t n);

// Table, element-segment and data-segment instructions and ref.func (SegOp), done in C on the
// interpreter's terms: operands in the slots at `args` (the result, if any, written to args[0]),
// immediates x, y; returns 0, or 1 + the TrapKind.
enum SegOp : uint8_t {
  kSegMemoryInit, kSegDataDrop, kSegTableGet, kSegTableSet, kSegTableSize, kSegTableGrow,
  kSegTableFill, kSegTableCopy, kSegTableInit, kSegElemDrop, kSegRefFunc,
};
using SegmentFn = uint32_t (*)(RunCtx*, InstanceState*, uint64_t op, uint64_t x, uint64_t y, uint64_t* args);

struct RunCtx {
  int64_t fuel;             // INT64_MAX when fuel is not enabled (as the interpreter)
  uint32_t calls_left;      // the stack rule's counters, synced with the store around host calls
  uint32_t values_left;
  const std::atomic<bool>* interrupt;
  const uint64_t* stack_end;
  void* entry_rsp;          // the trampoline's rsp; a trap unwinds to it
  const void* unwind;       // jump here (with r15 set) after a helper recorded a trap
  CallOutFn call_out;
  IndirectFn indirect;
  uint32_t pending_trap;    // the kind of a trap `indirect` found
  TrapFn trap;
  OverflowFn overflow;
  GrowFn grow;
  BulkFn bulk;
  SegmentFn segment;
  // Not read by generated code.
  struct RunState* run;
};

inline constexpr int kCtxFuel = offsetof(RunCtx, fuel);
inline constexpr int kCtxCallsLeft = offsetof(RunCtx, calls_left);
inline constexpr int kCtxValuesLeft = offsetof(RunCtx, values_left);
inline constexpr int kCtxInterrupt = offsetof(RunCtx, interrupt);
inline constexpr int kCtxStackEnd = offsetof(RunCtx, stack_end);
inline constexpr int kCtxEntryRsp = offsetof(RunCtx, entry_rsp);
inline constexpr int kCtxUnwind = offsetof(RunCtx, unwind);
inline constexpr int kCtxCallOut = offsetof(RunCtx, call_out);
inline constexpr int kCtxIndirect = offsetof(RunCtx, indirect);
inline constexpr int kCtxPendingTrap = offsetof(RunCtx, pending_trap);
inline constexpr int kCtxTrap = offsetof(RunCtx, trap);
inline constexpr int kCtxOverflow = offsetof(RunCtx, overflow);
inline constexpr int kCtxGrow = offsetof(RunCtx, grow);
inline constexpr int kCtxBulk = offsetof(RunCtx, bulk);
inline constexpr int kCtxSegment = offsetof(RunCtx, segment);

inline constexpr int kStMem0 = offsetof(InstanceState, mem0);
inline constexpr int kStGlobals = offsetof(InstanceState, global_bits);
inline constexpr int kStTargets = offsetof(InstanceState, targets);
inline constexpr int kMemBase = offsetof(MemInst, base);
inline constexpr int kMemSize = offsetof(MemInst, size);
inline constexpr int kTargetCode = offsetof(CallTarget, code);
inline constexpr int kTargetState = offsetof(CallTarget, state);
inline constexpr int kTargetFunc = offsetof(CallTarget, func);
inline constexpr int kTargetCost = offsetof(CallTarget, cost);
inline constexpr int kTargetFrameSlots = offsetof(CallTarget, frame_slots);
inline constexpr int kTargetSize = sizeof(CallTarget);

}  // namespace genvm::wasm::jit
