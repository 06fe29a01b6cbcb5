;; Infinite loop: never ends by itself. The executor has no timeout; the test kills it at a
;; deadline and expects no result delivered.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
