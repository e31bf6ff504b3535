;; The per-pixel loop of writing both variants of a frame (gpu/resample.ts, writeVariants),
;; 16 pixels per step with 128-bit SIMD. For one full-size row:
;;   d = top·gy + bottom·fy      (δ enlarged: the two widened reduced rows, blended)
;;   a = clamp(round(luma + d)), b = clamp(round(luma − d))
;; Rounding is to nearest, ties to even, and clamping to 0..255 comes from the saturating narrows:
;; what a Uint8ClampedArray store does in JavaScript, in f32 instead of f64 (the two differ by at
;; most one grey level, on ties).
;;
;; Rows are taken in whole steps of 16: the caller pads its buffers so that reading and writing up
;; to 15 values past a row's end stays in memory it owns, and writes rows in increasing order so
;; that any spill into the next row is overwritten by that row itself.
;;
;; `widen` makes one full-size row of δ from a row of the reduced plane: each output takes its
;; two reduced neighbours (byte offsets in lo and hi) weighted by t; scalar, as wasm has no gather.
;;
;; Compiled to variants-wasm.ts by `npm run build:wasm` (test/unit/wasm.test.ts checks it is current).
(module
  (memory (export "memory") 1)
  (func (export "variants")
    (param $luma i32) (param $top i32) (param $bottom i32) (param $gy f32) (param $fy f32)
    (param $a i32) (param $b i32) (param $n i32)
    (local $end i32) (local $gy4 v128) (local $fy4 v128) (local $v v128) (local $l v128) (local $d v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128)
    (local $m0 v128) (local $m1 v128) (local $m2 v128) (local $m3 v128)
    (local.set $gy4 (f32x4.splat (local.get $gy)))
    (local.set $fy4 (f32x4.splat (local.get $fy)))
    (local.set $end (i32.add (local.get $luma) (local.get $n)))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $luma) (local.get $end)))
        (local.set $v (v128.load (local.get $luma)))
        ;; pixels 0..3
        (local.set $l (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get $v)))))
        (local.set $d (f32x4.add
          (f32x4.mul (v128.load offset=0 (local.get $top)) (local.get $gy4))
          (f32x4.mul (v128.load offset=0 (local.get $bottom)) (local.get $fy4))))
        (local.set $p0 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.add (local.get $l) (local.get $d)))))
        (local.set $m0 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.sub (local.get $l) (local.get $d)))))
        ;; pixels 4..7
        (local.set $l (f32x4.convert_i32x4_u (i32x4.extend_high_i16x8_u (i16x8.extend_low_i8x16_u (local.get $v)))))
        (local.set $d (f32x4.add
          (f32x4.mul (v128.load offset=16 (local.get $top)) (local.get $gy4))
          (f32x4.mul (v128.load offset=16 (local.get $bottom)) (local.get $fy4))))
        (local.set $p1 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.add (local.get $l) (local.get $d)))))
        (local.set $m1 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.sub (local.get $l) (local.get $d)))))
        ;; pixels 8..11
        (local.set $l (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $v)))))
        (local.set $d (f32x4.add
          (f32x4.mul (v128.load offset=32 (local.get $top)) (local.get $gy4))
          (f32x4.mul (v128.load offset=32 (local.get $bottom)) (local.get $fy4))))
        (local.set $p2 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.add (local.get $l) (local.get $d)))))
        (local.set $m2 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.sub (local.get $l) (local.get $d)))))
        ;; pixels 12..15
        (local.set $l (f32x4.convert_i32x4_u (i32x4.extend_high_i16x8_u (i16x8.extend_high_i8x16_u (local.get $v)))))
        (local.set $d (f32x4.add
          (f32x4.mul (v128.load offset=48 (local.get $top)) (local.get $gy4))
          (f32x4.mul (v128.load offset=48 (local.get $bottom)) (local.get $fy4))))
        (local.set $p3 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.add (local.get $l) (local.get $d)))))
        (local.set $m3 (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.sub (local.get $l) (local.get $d)))))
        (v128.store (local.get $a) (i8x16.narrow_i16x8_u
          (i16x8.narrow_i32x4_s (local.get $p0) (local.get $p1))
          (i16x8.narrow_i32x4_s (local.get $p2) (local.get $p3))))
        (v128.store (local.get $b) (i8x16.narrow_i16x8_u
          (i16x8.narrow_i32x4_s (local.get $m0) (local.get $m1))
          (i16x8.narrow_i32x4_s (local.get $m2) (local.get $m3))))
        (local.set $luma (i32.add (local.get $luma) (i32.const 16)))
        (local.set $top (i32.add (local.get $top) (i32.const 64)))
        (local.set $bottom (i32.add (local.get $bottom) (i32.const 64)))
        (local.set $a (i32.add (local.get $a) (i32.const 16)))
        (local.set $b (i32.add (local.get $b) (i32.const 16)))
        (br $step))))
  (func (export "widen")
    (param $row i32) (param $lo i32) (param $hi i32) (param $t i32) (param $out i32) (param $n i32)
    (local $end i32) (local $f f32)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $f (f32.load (local.get $t)))
        (f32.store (local.get $out) (f32.add
          (f32.mul (f32.load (i32.add (local.get $row) (i32.load (local.get $lo)))) (f32.sub (f32.const 1) (local.get $f)))
          (f32.mul (f32.load (i32.add (local.get $row) (i32.load (local.get $hi)))) (local.get $f))))
        (local.set $lo (i32.add (local.get $lo) (i32.const 4)))
        (local.set $hi (i32.add (local.get $hi) (i32.const 4)))
        (local.set $t (i32.add (local.get $t) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $step)))))
