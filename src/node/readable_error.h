// What a person reads of a run that ended in an error: genvm-node serve's receipts and traces
// show it beside the raw text (docs/PROTOCOLS.md, "genvm-node serve", readable errors).
//
//   ReadableError e = readable_error(ResultCode::kVmError, "exit_code 1", run_stderr);
//   e.summary   // "ValueError: amount must be positive (line 12)"
//   e.meaning   // the sentence of the public code "exit_code" (vm_error_meaning)
//
// A UserError is the contract's own message. A VM error is its public code (the wire form's
// part before " # ") and one sentence of what that code means. When the run's stderr holds a
// Python traceback (the Python runner prints one and exits 1 for an uncaught exception), its
// last exception's type, message and line are read out of it. Nothing here is consensus data:
// it is display only, computed from what the node already stored.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/vm_error.h"

namespace genvm::node {

// One sentence for every public VM error code of common/vm_error.h's table (a code with a
// parameter, such as `exit_code 3`, is looked up without it). Empty for an unknown code.
std::string_view vm_error_meaning(std::string_view public_code);

// The last exception of a CPython traceback ("Traceback (most recent call last):" ... its
// innermost `File "f", line N, in fn` frame ... `Type: message`).
struct PythonException {
  std::string type;      // "ValueError", "genlayer.vm.UserError", ...
  std::string message;   // may be empty (`raise KeyError`)
  std::string file, function;
  int line = 0;          // 0 when no frame was printed
};
std::optional<PythonException> parse_python_traceback(std::string_view stderr_text);

struct ReadableError {
  std::string kind;      // "UserError" | "VmError" | "InternalError"
  std::string code;      // a VM error's public code ("exit_code 1"); empty otherwise
  std::string meaning;   // the code's sentence (vm_error_meaning); empty otherwise
  std::optional<PythonException> exception;  // from the run's stderr, when it holds a traceback
  std::string summary;   // one line: the exception, else the message, else code and meaning
  std::string raw;       // the result's text as the run delivered it
};
// `data_text`: the result's data as text (a UserError's message, a VM error's wire form).
// Only the error codes make one; Return has none.
std::optional<ReadableError> readable_error(ResultCode kind, std::string_view data_text, std::string_view stderr_text);

}  // namespace genvm::node
