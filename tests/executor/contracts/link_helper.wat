;; A LinkWasm module for tests/executor/runners_test.cc: named (its exports are linked under
;; "link_helper"), its _initialize sets the global `value` then adds 2 to.
(module $link_helper
  (global $g (mut i32) (i32.const 0))
  (func (export "_initialize") (global.set $g (i32.const 40)))
  (func (export "value") (result i32) (i32.add (global.get $g) (i32.const 2))))
