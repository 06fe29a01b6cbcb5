// Jump threading over one function's finished slot code (see jump_threading.h and DESIGN.md).
#include "wasm/jump_threading.h"

#include <algorithm>

#include "wasm/ops.h"

namespace genvm::wasm {

void thread_jumps(ModuleImpl& m, size_t start, size_t offsets_begin, std::vector<uint32_t>& local_calls,
                  size_t calls_begin, uint32_t body_offset) {
  std::vector<uint32_t>& code = m.code;
  const size_t end = code.size();
  constexpr size_t kMaxRunInstrs = 8, kMaxRunWords = 300;
  const size_t kMaxGrowth = std::max<size_t>(4096, end - start);
  // Instruction starts (index from `start`), and a sanity check that the walk is exact.
  std::vector<uint8_t> is_start(end - start + 1, 0);
  for (size_t p = start; p < end; p += instr_words(&code[p])) {
    is_start[p - start] = 1;
    if (p + instr_words(&code[p]) > end) return;
  }
  // The run starting at branch target t, if it qualifies: its end, else 0.
  auto run_end = [&](uint32_t t) -> size_t {
    if (t < start || t >= end || !is_start[t - start]) return 0;
    size_t p = t;
    for (size_t n = 0; n < kMaxRunInstrs && p < end; ++n) {
      uint32_t op = code[p];
      if (op == kCall || op == kCallIndirect || op == kCallLocal || op == kReturnCall || op == kReturnCallIndirect) return 0;
      size_t next = p + instr_words(&code[p]);
      if (next - t > kMaxRunWords) return 0;
      if (op == kBr || op == kCopyBr || op == kCopyNBr || op == kBrTable || op == kReturn) return next;
      p = next;
    }
    return 0;
  };
  bool any = false;
  for (size_t p = start; p < end && !any; p += instr_words(&code[p])) {
    uint32_t op = code[p];
    if (op == kBr || op == kCopyBr || op == kCopyNBr) any = run_end(code[p + instr_words(&code[p]) - 1]) != 0;
  }
  if (!any) return;

  // This function's trap offsets, sorted, the last written entry winning (as compile_functions
  // does for the whole table): the copies look up their originals' offsets here.
  std::vector<std::pair<uint32_t, uint32_t>> offs(m.code_offsets.begin() + std::ptrdiff_t(offsets_begin), m.code_offsets.end());
  std::stable_sort(offs.begin(), offs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto offset_of = [&](size_t p) {
    // The last entry at or before p; among equal positions the one written last (stable sort).
    auto it = std::upper_bound(offs.begin(), offs.end(), uint32_t(p), [](uint32_t v, const auto& e) { return v < e.first; });
    return it == offs.begin() ? body_offset : std::prev(it)->second;
  };

  std::vector<uint32_t> out;
  out.reserve(end - start + 64);
  std::vector<uint32_t> new_pos(end - start + 1, UINT32_MAX);
  std::vector<std::pair<uint32_t, uint32_t>> copy_offsets;
  size_t grown = 0;
  for (size_t p = start; p < end;) {
    const uint32_t op = code[p];
    const size_t n = instr_words(&code[p]);
    new_pos[p - start] = uint32_t(start + out.size());
    size_t t_end = 0;
    uint32_t t = 0;
    if (op == kBr || op == kCopyBr || op == kCopyNBr) {
      t = code[p + n - 1];
      t_end = run_end(t);
      if (t_end && grown + (t_end - t) > kMaxGrowth) t_end = 0;
    }
    if (!t_end) {
      out.insert(out.end(), code.begin() + std::ptrdiff_t(p), code.begin() + std::ptrdiff_t(p + n));
      p += n;
      continue;
    }
    // The branch's copies first, then the run. A single copy `d = s` followed by the run's
    // `add_imm d, k -> r` (`pc = next; next = pc + 1`: an interpreter's or a loop's induction
    // variable, rotated at every back-branch) is one kCopyAddImm.
    size_t run_from = t;
    size_t h = t;  // where the copy's fold looks: the run start, or past a loop head's fuel check
    if (op == kCopyBr && code[t] == kFuelCheck && t + 2 < t_end) {
      // With metering a loop head starts with its fuel charge: it goes first, then the copy
      // (the order of the two is unobservable: a trap discards the frame's slots).
      copy_offsets.emplace_back(uint32_t(start + out.size()), offset_of(t));
      out.insert(out.end(), {uint32_t(kFuelCheck), code[t + 1]});
      h = run_from = t + 2;
    }
    if (op == kCopyBr) {
      uint32_t src = code[p + 1], dst = code[p + 2];
      if (code[h] == imm_op(0x6a) && code[h + 1] == dst) {
        out.insert(out.end(), {uint32_t(kCopyAddImm), src, dst, code[h + 2], code[h + 3]});
        run_from = h + 4;
      } else {
        out.insert(out.end(), {uint32_t(kCopy), src, dst});
      }
    } else if (op == kCopyNBr) {
      uint32_t pairs = code[p + 1];
      out.push_back(pairs == 2 ? uint32_t(kCopy2) : uint32_t(kCopyN));
      if (pairs != 2) out.push_back(pairs);
      out.insert(out.end(), code.begin() + std::ptrdiff_t(p + 2), code.begin() + std::ptrdiff_t(p + 2 + 2 * pairs));
    }
    // The copy's trap offsets: the run start's, then every entry inside the run at the same
    // relative place.
    const size_t at = start + out.size();
    copy_offsets.emplace_back(uint32_t(at), offset_of(run_from));
    auto first = std::lower_bound(offs.begin(), offs.end(), uint32_t(run_from), [](const auto& e, uint32_t v) { return e.first < v; });
    for (auto it = first; it != offs.end() && it->first < t_end; ++it) copy_offsets.emplace_back(uint32_t(at + (it->first - run_from)), it->second);
    out.insert(out.end(), code.begin() + std::ptrdiff_t(run_from), code.begin() + std::ptrdiff_t(t_end));
    grown += t_end - t;
    p += n;
  }
  new_pos[end - start] = uint32_t(start + out.size());
  // Every target word (originals' and copies') still holds an old position: remap.
  for (size_t q = 0; q < out.size(); q += instr_words(&out[q])) {
    for_each_branch_target(&out[q], [&](uint32_t k) {
      uint32_t old = out[q + k];
      out[q + k] = new_pos[old - start];
    });
  }
  code.resize(start);
  code.insert(code.end(), out.begin(), out.end());
  // Trap offsets: an entry may name a position inside an instruction (fusion rewrote what
  // followed it) or past the end; it keeps its place relative to the instruction it is in.
  const size_t new_end = start + out.size();
  for (size_t i = offsets_begin; i < m.code_offsets.size(); ++i) {
    uint32_t& at = m.code_offsets[i].first;
    if (at >= end) {
      at = uint32_t(new_end + (at - end));
      continue;
    }
    size_t in = at;
    while (in > start && !is_start[in - start]) --in;
    at = new_pos[in - start] + (at - uint32_t(in));
  }
  m.code_offsets.insert(m.code_offsets.end(), copy_offsets.begin(), copy_offsets.end());
  for (size_t i = calls_begin; i < local_calls.size(); ++i) local_calls[i] = new_pos[local_calls[i] - start];
}

}  // namespace genvm::wasm
