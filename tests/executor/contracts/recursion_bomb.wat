;; Recursion bomb: a function that calls itself without end. Expected: VMError
;; "wasm_trap stack_overflow" (the engine's call-depth limit), with a 20-frame backtrace.
(module
  (memory (export "memory") 1)
  (func $recurse (param $n i32) (result i32)
    (call $recurse (i32.add (local.get $n) (i32.const 1))))
  (func $_start (export "_start")
    (drop (call $recurse (i32.const 0)))))
