// Outcome<T, E>: genvm::Result with the fee code's own error type E.
//
// The fee code's errors decide what the run does next (a VM error ends the contract, anything
// else is an internal error), so their kind is an enum inside E, not a code string.
//
//   Outcome<Value, ExprError> r = evaluate(program);
//   if (!r) return r.error();
//   use(*r);
#pragma once

#include "common/result.h"

namespace genvm::executor::fees {

template <class T, class E>
using Outcome = Result<T, E>;

}  // namespace genvm::executor::fees
