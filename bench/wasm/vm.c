// vm: a bytecode interpreter inside wasm. A tiny stack machine (switch dispatch, operand
// stack in memory) runs a program that counts primes below a bound by trial division and sums
// a Collatz walk. Measures indirect branches (br_table), loads/stores to a small hot array
// and data-dependent control flow: the shape of an interpreter running inside our interpreter.
#include "bench.h"

enum Op {
  kPush,   // push imm
  kLoad,   // push var[imm]
  kStore,  // var[imm] = pop
  kAdd, kSub, kMul, kRem, kDiv,
  kLt,     // a < b
  kEq,
  kJmp,    // pc = imm
  kJz,     // if pop == 0: pc = imm
  kInc,    // var[imm] += 1
  kHalt,
};

typedef struct {
  uint8_t op;
  int32_t imm;
} Insn;

// Variables: 0 = i (candidate), 1 = d (divisor), 2 = count, 3 = limit, 4 = x (collatz),
// 5 = steps.
static const Insn kProgram[] = {
    /*  0 */ {kPush, 2}, {kStore, 0},                                  // i = 2
    /*  2 */ {kLoad, 0}, {kLoad, 3}, {kLt, 0}, {kJz, 30},              // while i < limit
    /*  6 */ {kPush, 2}, {kStore, 1},                                  //   d = 2
    /*  8 */ {kLoad, 0}, {kLoad, 1}, {kLoad, 1}, {kMul, 0}, {kLt, 0},  //   loop: if i < d*d
    /* 13 */ {kJz, 16}, {kJmp, 25},                                    //     then i is prime
    /* 15 */ {kHalt, 0},
    /* 16 */ {kLoad, 0}, {kLoad, 1}, {kRem, 0}, {kJz, 23},             //     if i % d == 0: composite
    /* 20 */ {kInc, 1}, {kJmp, 8}, {kHalt, 0},
    /* 23 */ {kJmp, 27}, {kHalt, 0},
    /* 25 */ {kInc, 2}, {kJmp, 27},                                    //   prime: count++
    /* 27 */ {kInc, 0}, {kJmp, 2}, {kHalt, 0},                         //   i++
    /* 30 */ {kLoad, 4}, {kPush, 1}, {kEq, 0}, {kJz, 35}, {kHalt, 0},  // collatz: while x != 1
    /* 35 */ {kInc, 5},                                                //   steps++
    /* 36 */ {kLoad, 4}, {kPush, 2}, {kRem, 0}, {kJz, 48},             //   if x odd
    /* 40 */ {kLoad, 4}, {kPush, 3}, {kMul, 0}, {kPush, 1}, {kAdd, 0}, {kStore, 4}, {kJmp, 30},
    /* 47 */ {kHalt, 0},
    /* 48 */ {kLoad, 4}, {kPush, 2}, {kDiv, 0}, {kStore, 4}, {kJmp, 30},
};

static int32_t run_program(const Insn* prog, int32_t* vars) {
  int32_t stack[64];
  int sp = 0;
  int32_t pc = 0;
  for (;;) {
    Insn in = prog[pc++];
    switch (in.op) {
      case kPush: stack[sp++] = in.imm; break;
      case kLoad: stack[sp++] = vars[in.imm]; break;
      case kStore: vars[in.imm] = stack[--sp]; break;
      case kAdd: sp--; stack[sp - 1] = (int32_t)((uint32_t)stack[sp - 1] + (uint32_t)stack[sp]); break;
      case kSub: sp--; stack[sp - 1] = (int32_t)((uint32_t)stack[sp - 1] - (uint32_t)stack[sp]); break;
      case kMul: sp--; stack[sp - 1] = (int32_t)((uint32_t)stack[sp - 1] * (uint32_t)stack[sp]); break;
      case kRem: sp--; stack[sp - 1] = stack[sp] ? stack[sp - 1] % stack[sp] : 0; break;
      case kDiv: sp--; stack[sp - 1] = stack[sp] ? stack[sp - 1] / stack[sp] : 0; break;
      case kLt: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
      case kEq: sp--; stack[sp - 1] = stack[sp - 1] == stack[sp]; break;
      case kJmp: pc = in.imm; break;
      case kJz: if (stack[--sp] == 0) pc = in.imm; break;
      case kInc: vars[in.imm]++; break;
      case kHalt: return sp;
      default: return -1;
    }
  }
}

static uint64_t bench_run(int n) {
  uint64_t h = 0;
  for (int it = 0; it < n; ++it) {
    int32_t vars[8] = {0};
    vars[3] = 20000 + it;   // prime bound
    vars[4] = 27 + it * 2;  // collatz start (odd)
    int32_t sp = run_program(kProgram, vars);
    h = bench_mix(h, (uint64_t)(uint32_t)vars[2]);
    h = bench_mix(h, (uint64_t)(uint32_t)vars[5]);
    h = bench_mix(h, (uint64_t)(uint32_t)sp);
  }
  return h;
}

BENCH_MAIN(130)
