;; Table bomb: 67108864 initial elements at 64 octets each is 4 GiB, over the RAM budget.
;; Expected: VMError "out_of memory wasm_table" at instantiation.
(module
  (memory (export "memory") 1)
  (table 67108864 funcref)
  (func (export "_start")))
