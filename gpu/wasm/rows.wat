;; The inner loops of the 2-D DTCWT on f32 planes (gpu/dtcwt/lowlevel.ts and quads.ts), for planes
;; that live in this module's memory (gpu/wasm/rows.ts hands them out):
;;
;; sum_rows: y[j] = Σ_k c_k · x_k[j] for j < n, where x_k is a source row (its byte address in
;;   `rows`, one i32 per tap) and c_k its coefficient (in `coeffs`, one v128 per tap with the
;;   coefficient in all four lanes). Four outputs per step with 128-bit SIMD, the taps summed in
;;   f32 (JavaScript sums them in f64 before the f32 store: the two differ in the last bits).
;; transpose: y (cols × rows) = xᵀ (x is rows × cols), scalar.
;;
;; Compiled to rows-wasm.ts by `npm run build:wasm` (test/unit/wasm.test.ts checks it is current).
(module
  (memory (export "memory") 1)
  (func (export "sum_rows")
    (param $y i32) (param $rows i32) (param $coeffs i32) (param $taps i32) (param $n i32)
    (local $j i32) (local $k i32) (local $end i32) (local $whole i32) (local $acc v128) (local $s f32)
    (local.set $end (i32.shl (local.get $n) (i32.const 2)))
    (local.set $whole (i32.and (local.get $end) (i32.const -16)))
    (block $done4
      (loop $step4
        (br_if $done4 (i32.ge_u (local.get $j) (local.get $whole)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $k (i32.const 0))
        (block $tapsDone
          (loop $tap
            (br_if $tapsDone (i32.ge_u (local.get $k) (local.get $taps)))
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (v128.load (i32.add (local.get $coeffs) (i32.shl (local.get $k) (i32.const 4))))
              (v128.load (i32.add (i32.load (i32.add (local.get $rows) (i32.shl (local.get $k) (i32.const 2)))) (local.get $j))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $tap)))
        (v128.store (i32.add (local.get $y) (local.get $j)) (local.get $acc))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $step4)))
    ;; The last n mod 4 outputs one at a time: rows are packed, so a whole step would run into the next row.
    (block $done1
      (loop $step1
        (br_if $done1 (i32.ge_u (local.get $j) (local.get $end)))
        (local.set $s (f32.const 0))
        (local.set $k (i32.const 0))
        (block $tapsDone1
          (loop $tap1
            (br_if $tapsDone1 (i32.ge_u (local.get $k) (local.get $taps)))
            (local.set $s (f32.add (local.get $s) (f32.mul
              (f32.load (i32.add (local.get $coeffs) (i32.shl (local.get $k) (i32.const 4))))
              (f32.load (i32.add (i32.load (i32.add (local.get $rows) (i32.shl (local.get $k) (i32.const 2)))) (local.get $j))))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $tap1)))
        (f32.store (i32.add (local.get $y) (local.get $j)) (local.get $s))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $step1))))
  (func (export "transpose")
    (param $y i32) (param $x i32) (param $rows i32) (param $cols i32)
    (local $i i32) (local $j i32) (local $src i32) (local $dst i32) (local $stride i32)
    (local.set $stride (i32.shl (local.get $rows) (i32.const 2)))
    (block $rowsDone
      (loop $row
        (br_if $rowsDone (i32.ge_u (local.get $i) (local.get $rows)))
        (local.set $src (i32.add (local.get $x) (i32.shl (i32.mul (local.get $i) (local.get $cols)) (i32.const 2))))
        (local.set $dst (i32.add (local.get $y) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $colsDone
          (loop $col
            (br_if $colsDone (i32.ge_u (local.get $j) (local.get $cols)))
            (f32.store (local.get $dst) (f32.load (local.get $src)))
            (local.set $src (i32.add (local.get $src) (i32.const 4)))
            (local.set $dst (i32.add (local.get $dst) (local.get $stride)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $col)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $row)))))
