#include "node/readable_error.h"

#include <vector>

namespace genvm::node {

namespace {

struct Meaning {
  std::string_view code;
  std::string_view sentence;
};

// One row per public code of common/vm_error.h (readable_error_test checks that every code has
// one). The seed alias `oom ram limit` is published as `out_of nondet_blocks`, so it has none.
constexpr Meaning kMeanings[] = {
    {"timeout", "The run did not finish within the node's time limit and was stopped."},
    {"malformed_entry", "The call's entry data (method name and arguments) could not be decoded."},
    {"leader_fault nondet_output absent",
     "The leader's result had no output for a non-deterministic block this run reached."},
    {"leader_fault nondet_output malformed", "The leader's output for a non-deterministic block is not well-formed."},
    {"leader_fault nondet_output uses_this_error",
     "The leader's non-deterministic output is an error code that a leader may not report."},
    {"leader_fault nondet_output extra", "The leader's result has more non-deterministic outputs than the run used."},
    {"exit_code",
     "The contract's process exited with a non-zero status (a Python contract does so on an uncaught exception)."},
    {"wasm_trap", "The contract's WebAssembly code trapped."},
    {"wasm_trap unreachable", "The contract executed an `unreachable` instruction (an abort or a panic)."},
    {"wasm_trap stack_overflow", "The contract's call stack grew past its limit (runaway recursion)."},
    {"wasm_trap memory_out_of_bounds", "The contract read or wrote memory outside its linear memory."},
    {"wasm_trap table_out_of_bounds", "The contract used a function table index outside the table."},
    {"wasm_trap indirect_call_to_null", "The contract called through a function table entry that is empty."},
    {"wasm_trap bad_signature", "The contract called a function through a pointer of the wrong type."},
    {"wasm_trap integer_overflow", "An integer operation in the contract overflowed where WebAssembly traps."},
    {"wasm_trap integer_divide_by_zero", "The contract divided an integer by zero."},
    {"wasm_trap bad_conversion_to_integer", "The contract converted a float that has no integer value (NaN or out of range)."},
    {"wasm_trap heap_misaligned", "The contract made a misaligned atomic memory access."},
    {"wasm_trap atomic_wait_non_shared_memory", "The contract waited on memory that is not shared."},
    {"wasm_trap out_of_fuel", "The contract used up its computation budget (fuel)."},
    {"wasm_trap interrupt", "The run was interrupted from outside."},
    {"wasm_trap nondet_instruction", "The contract used a non-deterministic instruction outside a non-deterministic block."},
    {"wasm_trap fault", "The contract's WebAssembly code faulted."},
    {"out_of memory", "The run needed more memory than it may use."},
    {"out_of memory wasm_memory", "The contract's linear memory would grow past its limit."},
    {"out_of memory wasm_table", "The contract's function table would grow past its limit."},
    {"out_of storage", "The contract would store more than its storage limit."},
    {"out_of receipt nondet_output", "The non-deterministic outputs would make the receipt larger than allowed."},
    {"out_of receipt message", "The messages the contract posts would make the receipt larger than allowed."},
    {"out_of receipt event", "The events the contract emits would make the receipt larger than allowed."},
    {"out_of message_fee total", "The messages the contract posts would cost more than the transaction's message fees."},
    {"out_of message_fee node", "A posted message would cost more than the fee one node may spend."},
    {"out_of vm_recursion", "Contract-to-contract calls nested deeper than allowed."},
    {"out_of nondet_blocks", "The run started more non-deterministic blocks than allowed."},
    {"out_of locked_slots", "The contract locked more storage slots than allowed."},
    {"out_of upgraders", "The contract named more upgraders than allowed."},
    {"out_of fds", "The contract held more open handles than allowed."},
    {"fee no_matching_node", "No node's fee terms match what the transaction offers."},
    {"fee below_minimum", "The fee the transaction offers is below the minimum."},
    {"fee too_many_rounds", "The transaction asks for more rounds than its fees pay for."},
    {"forbidden", "The contract asked for something its permissions do not allow (e.g. a write in a view)."},
    {"evm reverted", "A call the contract made to an EVM contract reverted."},
    {"invalid_contract", "The contract's code is not a valid GenVM contract."},
    {"invalid_contract runner absent", "The contract names a runner that does not exist."},
    {"invalid_contract runner malformed", "The contract's runner description is malformed."},
    {"invalid_contract not_utf8_text", "The contract's source text is not valid UTF-8."},
    {"invalid_contract major_mismatch", "The contract was built for another major GenVM version."},
    {"invalid_contract wasm validating", "The contract's WebAssembly module does not validate."},
    {"invalid_contract wasm linking", "The contract's WebAssembly module imports something GenVM does not provide."},
    {"invalid_contract wasm entrypoint", "The contract's WebAssembly module has no usable entry point."},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\n')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at <= s.size();) {
    std::size_t nl = s.find('\n', at);
    if (nl == std::string_view::npos) nl = s.size();
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

}  // namespace

std::string_view vm_error_meaning(std::string_view code) {
  for (int pass = 0; pass < 2; ++pass) {
    for (const Meaning& m : kMeanings) {
      if (m.code == code) return m.sentence;
    }
    // A code that takes a parameter (`exit_code 3`): its row is the code without it.
    std::size_t sp = code.rfind(' ');
    if (sp == std::string_view::npos) break;
    code = code.substr(0, sp);
  }
  return {};
}

std::optional<PythonException> parse_python_traceback(std::string_view text) {
  constexpr std::string_view kHead = "Traceback (most recent call last):";
  std::size_t at = text.rfind(kHead);
  if (at == std::string_view::npos) return std::nullopt;
  // A chained exception's "During handling ..." line comes before its own Traceback head, so the
  // last head starts the exception that ended the run.
  PythonException e;
  std::vector<std::string_view> lines = lines_of(text.substr(at + kHead.size()));
  std::size_t i = 0;
  for (; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (l.empty()) continue;
    if (l.front() == ' ') {
      std::string_view t = trim(l);
      if (t.substr(0, 6) == "File \"") {
        std::size_t q = t.find('"', 6);
        if (q == std::string_view::npos) continue;
        e.file = std::string(t.substr(6, q - 6));
        e.line = 0;
        e.function.clear();
        std::string_view rest = t.substr(q + 1);
        if (std::size_t ln = rest.find("line "); ln != std::string_view::npos) {
          int n = 0;
          for (std::size_t k = ln + 5; k < rest.size() && rest[k] >= '0' && rest[k] <= '9' && n < 100000000; ++k) {
            n = n * 10 + (rest[k] - '0');
          }
          e.line = n;
        }
        if (std::size_t in = rest.find(", in "); in != std::string_view::npos) e.function = std::string(trim(rest.substr(in + 5)));
      }
      continue;  // a source line, a caret line, or "[Previous line repeated N more times]"
    }
    break;  // the first line at column 0: the exception
  }
  if (i >= lines.size()) return std::nullopt;
  std::string_view head = trim(lines[i]);
  std::size_t colon = head.find(": ");
  if (colon == std::string_view::npos) {
    e.type = std::string(head.substr(0, head.size() && head.back() == ':' ? head.size() - 1 : head.size()));
  } else {
    e.type = std::string(head.substr(0, colon));
    e.message = std::string(head.substr(colon + 2));
  }
  // A message of several lines continues up to the end of the text.
  for (++i; i < lines.size(); ++i) {
    if (lines[i].empty() && i + 1 == lines.size()) break;
    e.message += "\n";
    e.message += lines[i];
  }
  while (!e.message.empty() && (e.message.back() == '\n' || e.message.back() == '\r')) e.message.pop_back();
  if (e.type.empty() || e.type.find(' ') != std::string::npos) return std::nullopt;
  return e;
}

std::optional<ReadableError> readable_error(ResultCode kind, std::string_view data_text, std::string_view stderr_text) {
  if (kind == ResultCode::kReturn) return std::nullopt;
  ReadableError r;
  r.raw = std::string(data_text);
  r.exception = parse_python_traceback(stderr_text);
  if (kind == ResultCode::kUserError) {
    r.kind = "UserError";
    r.summary = r.raw;
  } else if (kind == ResultCode::kInternalError) {
    r.kind = "InternalError";
    r.summary = "the node failed to run the contract (not a verdict on it): " + r.raw;
  } else {
    r.kind = "VmError";
    std::string_view code = data_text.substr(0, data_text.find(" # "));
    r.code = std::string(trim(code));
    r.meaning = std::string(vm_error_meaning(r.code));
    r.summary = r.code + (r.meaning.empty() ? "" : ": " + r.meaning);
  }
  if (r.exception) {
    const PythonException& e = *r.exception;
    std::string first_line = e.message.substr(0, e.message.find('\n'));
    r.summary = e.type + (first_line.empty() ? "" : ": " + first_line);
    if (e.line > 0) r.summary += " (line " + std::to_string(e.line) + (e.function.empty() ? "" : ", in " + e.function) + ")";
  }
  return r;
}

}  // namespace genvm::node
