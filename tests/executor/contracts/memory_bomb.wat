;; Memory bomb: an initial memory of 65536 pages (4 GiB), one byte over the 4294967295-octet
;; RAM budget. Expected: VMError "out_of memory wasm_memory" at instantiation.
(module
  (memory (export "memory") 65536)
  (func (export "_start")))
