;; Takeuchi's function as clang -O2 compiles it (bench/wasm/recursion.c): the outer recursion
;; became a loop whose condition reads two locals through local.tee. tak(18, 12, 6) = 7 and
;; tak(6, 3, 1) = 3; our engine returned 12 for the first when this was written (found by
;; bench/wasm.sh as a recursion checksum mismatch).
(module
  (func $tak (param i32 i32 i32) (result i32)
    (local i32 i32)
    local.get 0
    local.get 1
    i32.gt_s
    if
      loop
        local.get 0
        i32.const 1
        i32.sub
        local.get 1
        local.get 2
        call $tak
        local.set 3
        local.get 1
        i32.const 1
        i32.sub
        local.get 2
        local.get 0
        call $tak
        local.set 4
        local.get 2
        i32.const 1
        i32.sub
        local.get 0
        local.get 1
        call $tak
        local.set 2
        local.get 3
        local.tee 0
        local.get 4
        local.tee 1
        i32.gt_s
        br_if 0
      end
    end
    local.get 2)
  (func (export "tak_18_12_6") (result i32) (call $tak (i32.const 18) (i32.const 12) (i32.const 6)))
  (func (export "tak_6_3_1") (result i32) (call $tak (i32.const 6) (i32.const 3) (i32.const 1))))
