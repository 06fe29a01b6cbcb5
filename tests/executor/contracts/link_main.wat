;; The StartWasm module beside link_helper.wat: exits with link_helper's value (42 once its
;; _initialize ran), so the VM error `exit_code 42` shows both linking and initialisation.
(module
  (import "link_helper" "value" (func $value (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (call $value))))
