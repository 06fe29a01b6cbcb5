;; Found by run.sh (seed 1, module 67) and shrunk with reduce.sh: a zero-initialised local read
;; right after a dropped constant and tee'd into a parameter must still be 0. Our engine
;; returned the dropped constant (f32 bits 00000001) when this was written.
(module
  (func (export "f") (param i32 f32 f32 i32) (result f32)
    (local f32 f32 f32 i32 i32 f64)
    i32.const 1
    drop
    local.get 5
    local.tee 1))
