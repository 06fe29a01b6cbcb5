;; A trap three calls deep, for the result's backtrace: innermost first,
;; $inner <- $middle <- $outer <- $_start. Expected: VMError "wasm_trap unreachable".
(module
  (memory (export "memory") 1)
  (func $inner (unreachable))
  (func $middle (call $inner))
  (func $outer (call $middle))
  (func $_start (export "_start") (call $outer)))
