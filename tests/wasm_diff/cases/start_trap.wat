;; A start function that logs and then traps: the log line is printed, then the instantiation
;; fails, and no export is called.
(module
  (import "fuzzing-support" "log-i32" (func $log_i32 (param i32)))
  (func $start (call $log_i32 (i32.const 7)) unreachable)
  (start $start)
  (func (export "never") (result i32) (i32.const 1)))
