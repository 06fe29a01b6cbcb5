;; An active data segment past the end of memory traps at instantiation.
(module
  (memory 1)
  (data (i32.const 65535) "ab")
  (func (export "never") (result i32) (i32.const 1)))
