;; Guest-supplied lengths that reach past guest memory, and one region written 192 times.
;; Each must answer without a host buffer of the asked size (tests/executor/malicious_test.cc
;; measures the executor's peak RSS). proc_exit(0) when every answer was as expected, else
;; proc_exit(100 * step + the answer).
;; Memory: 257 pages = 16 MiB + 64 KiB; the iovecs and out-words live in the last page.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "genlayer_sdk" "storage_write" (func $storage_write (param i32 i32 i32 i32) (result i32)))
  (import "genlayer_sdk" "gl_call" (func $gl_call (param i32 i32 i32) (result i32)))
  (memory (export "memory") 257)
  (global $iov i32 (i32.const 16777216))      ;; 16 MiB: the iovec array
  (global $out i32 (i32.const 16842000))      ;; nwritten / the gl_call descriptor
  (func $expect (param $step i32) (param $got i32) (param $want i32)
    (if (i32.ne (local.get $got) (local.get $want))
      (then (call $proc_exit (i32.add (i32.mul (local.get $step) (i32.const 100)) (local.get $got))))))
  (func (export "_start")
    (local $i i32)
    ;; 1. fd_write of one iovec {0, 0xffffffff}: FAULT (21).
    (i32.store (global.get $iov) (i32.const 0))
    (i32.store offset=4 (global.get $iov) (i32.const -1))
    (call $expect (i32.const 1) (call $fd_write (i32.const 2) (global.get $iov) (i32.const 1) (global.get $out)) (i32.const 21))
    ;; 2. storage_write of 0xffffffff bytes from 0 into slot 0 (its 32 zero bytes at 0): FAULT (3).
    (call $expect (i32.const 2) (call $storage_write (i32.const 0) (i32.const 0) (i32.const 0) (i32.const -1)) (i32.const 3))
    ;; 3. gl_call of a 0xffffffff-byte request: FAULT (3).
    (call $expect (i32.const 3) (call $gl_call (i32.const 0) (i32.const -1) (global.get $out)) (i32.const 3))
    ;; 4. fd_write of 192 iovecs {0, 16 MiB}: success, at most what the guest owns written.
    (local.set $i (i32.const 0))
    (block $done
      (loop $fill
        (br_if $done (i32.ge_u (local.get $i) (i32.const 192)))
        (i32.store (i32.add (global.get $iov) (i32.mul (local.get $i) (i32.const 8))) (i32.const 0))
        (i32.store offset=4 (i32.add (global.get $iov) (i32.mul (local.get $i) (i32.const 8))) (i32.const 16777216))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $fill)))
    (call $expect (i32.const 4) (call $fd_write (i32.const 2) (global.get $iov) (i32.const 192) (global.get $out)) (i32.const 0))
    ;; 5. ... and the count is the size of memory (the cap), not 3 GiB.
    (call $expect (i32.const 5)
      (i32.eq (i32.load (global.get $out)) (i32.const 16842752)) (i32.const 1))
    (call $proc_exit (i32.const 0))))
