;; Whether JSON text nests deeper than a limit: the byte scan of exceedsDepthInJavaScript (json.ts),
;; 64 bytes at a time with SIMD, giving exactly its answers on any bytes, JSON or not.
;;
;; The caller fills the 64 KiB window at offset 0 with the input a chunk at a time (a fixed window,
;; because wasm memory never shrinks and bodies go up to 50 MB), padding the last chunk with spaces to
;; a multiple of 64; the scan state is carried across blocks and chunks in the globals.
;;
;; Per 64-byte block, as in simdjson's stage 1: bitmasks of quotes, backslashes, opening and closing
;; brackets; the escaped bytes from the runs of backslashes; the in-string mask as the prefix XOR of the
;; unescaped quotes; then the brackets outside strings, counted with popcnt. Only a block whose opening
;; brackets could take the depth past the limit is walked bracket by bracket.
;;
;; The escape masks assume every backslash is inside a string, where the reference gives it meaning;
;; outside a string it means nothing (not JSON, but the answer must still match). The first place that
;; assumption could go wrong is a backslash outside a string per the computed mask, with everything
;; before it right, so a block holding such a backslash is rescanned byte by byte ($scanBlockBytewise).
(module
  (memory (export "memory") 1 1)

  (global $limit (mut i32) (i32.const 0))
  (global $depth (mut i32) (i32.const 0))
  ;; all ones when the previous block ended inside a string, else zero: the XOR carry of the prefix XOR
  (global $inString (mut i64) (i64.const 0))
  ;; 1 when the previous block ended in an escaping backslash, so this block's first byte is skipped
  (global $firstEscaped (mut i64) (i64.const 0))

  (func (export "begin") (param $limit i32)
    (global.set $limit (local.get $limit))
    (global.set $depth (i32.const 0))
    (global.set $inString (i64.const 0))
    (global.set $firstEscaped (i64.const 0)))

  ;; one bit per byte of the four 16-byte comparison results, first byte lowest
  (func $bitmask64 (param $a v128) (param $b v128) (param $c v128) (param $d v128) (result i64)
    (i64.or
      (i64.or
        (i64.extend_i32_u (i8x16.bitmask (local.get $a)))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $b))) (i64.const 16)))
      (i64.or
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $c))) (i64.const 32))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $d))) (i64.const 48)))))

  ;; 1 when the brackets, in byte order, take the depth past the limit; otherwise the depth after them
  (func $walkBrackets (param $opens i64) (param $closes i64) (result i32)
    (local $brackets i64) (local $lowest i64)
    (local.set $brackets (i64.or (local.get $opens) (local.get $closes)))
    (block $done
      (loop $next
        (br_if $done (i64.eqz (local.get $brackets)))
        (local.set $lowest (i64.and (local.get $brackets) (i64.sub (i64.const 0) (local.get $brackets))))
        (if (i64.eqz (i64.and (local.get $opens) (local.get $lowest)))
          (then (global.set $depth (i32.sub (global.get $depth) (i32.const 1))))
          (else
            (global.set $depth (i32.add (global.get $depth) (i32.const 1)))
            (if (i32.gt_s (global.get $depth) (global.get $limit)) (then (return (i32.const 1))))))
        (local.set $brackets (i64.xor (local.get $brackets) (local.get $lowest)))
        (br $next)))
    (i32.const 0))

  ;; The reference scan over one block from the carried state: 1 when the depth passes the limit
  (func $scanBlockBytewise (param $at i32) (result i32)
    (local $end i32) (local $byte i32) (local $inString i32)
    (local.set $end (i32.add (local.get $at) (i32.const 64)))
    (local.set $inString (i64.ne (global.get $inString) (i64.const 0)))
    (local.set $at (i32.add (local.get $at) (i32.wrap_i64 (global.get $firstEscaped))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $byte (i32.load8_u (local.get $at)))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (if (local.get $inString)
          (then
            (if (i32.eq (local.get $byte) (i32.const 0x5c))
              (then (local.set $at (i32.add (local.get $at) (i32.const 1))))
              (else (if (i32.eq (local.get $byte) (i32.const 0x22))
                (then (local.set $inString (i32.const 0)))))))
          (else
            (if (i32.eq (local.get $byte) (i32.const 0x22))
              (then (local.set $inString (i32.const 1)))
              (else
                ;; | 0x20 maps [ to { and ] to }, and nothing else onto either
                (local.set $byte (i32.or (local.get $byte) (i32.const 0x20)))
                (if (i32.eq (local.get $byte) (i32.const 0x7b))
                  (then
                    (global.set $depth (i32.add (global.get $depth) (i32.const 1)))
                    (if (i32.gt_s (global.get $depth) (global.get $limit)) (then (return (i32.const 1)))))
                  (else (if (i32.eq (local.get $byte) (i32.const 0x7d))
                    (then (global.set $depth (i32.sub (global.get $depth) (i32.const 1)))))))))))
        (br $next)))
    ;; a backslash as the block's last byte skips past the end: the next block's first byte
    (global.set $firstEscaped (i64.extend_i32_u (i32.gt_u (local.get $at) (local.get $end))))
    (global.set $inString (i64.extend_i32_s (i32.sub (i32.const 0) (local.get $inString))))
    (i32.const 0))

  ;; Scans the window's first `length` bytes (a multiple of 64) from the carried state:
  ;; 1 as soon as the depth passes the limit, else 0 with the state carried for the next chunk
  (func (export "scan") (param $length i32) (result i32)
    (local $at i32)
    (local $bytes0 v128) (local $bytes1 v128) (local $bytes2 v128) (local $bytes3 v128)
    (local $folded0 v128) (local $folded1 v128) (local $folded2 v128) (local $folded3 v128)
    (local $quote0 v128) (local $quote1 v128) (local $quote2 v128) (local $quote3 v128)
    (local $backslash0 v128) (local $backslash1 v128) (local $backslash2 v128) (local $backslash3 v128)
    (local $open0 v128) (local $open1 v128) (local $open2 v128) (local $open3 v128)
    (local $close0 v128) (local $close1 v128) (local $close2 v128) (local $close3 v128)
    (local $backslashes i64) (local $escapers i64) (local $runStarts i64)
    (local $evenStartRuns i64) (local $oddStartRuns i64) (local $escaped i64)
    (local $stringMask i64) (local $opens i64) (local $closes i64) (local $openCount i32)
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $at) (local.get $length)))
        (local.set $bytes0 (v128.load offset=0 (local.get $at)))
        (local.set $bytes1 (v128.load offset=16 (local.get $at)))
        (local.set $bytes2 (v128.load offset=32 (local.get $at)))
        (local.set $bytes3 (v128.load offset=48 (local.get $at)))
        (local.set $folded0 (v128.or (local.get $bytes0) (i8x16.splat (i32.const 0x20))))
        (local.set $folded1 (v128.or (local.get $bytes1) (i8x16.splat (i32.const 0x20))))
        (local.set $folded2 (v128.or (local.get $bytes2) (i8x16.splat (i32.const 0x20))))
        (local.set $folded3 (v128.or (local.get $bytes3) (i8x16.splat (i32.const 0x20))))
        (local.set $quote0 (i8x16.eq (local.get $bytes0) (i8x16.splat (i32.const 0x22))))
        (local.set $quote1 (i8x16.eq (local.get $bytes1) (i8x16.splat (i32.const 0x22))))
        (local.set $quote2 (i8x16.eq (local.get $bytes2) (i8x16.splat (i32.const 0x22))))
        (local.set $quote3 (i8x16.eq (local.get $bytes3) (i8x16.splat (i32.const 0x22))))
        (local.set $backslash0 (i8x16.eq (local.get $bytes0) (i8x16.splat (i32.const 0x5c))))
        (local.set $backslash1 (i8x16.eq (local.get $bytes1) (i8x16.splat (i32.const 0x5c))))
        (local.set $backslash2 (i8x16.eq (local.get $bytes2) (i8x16.splat (i32.const 0x5c))))
        (local.set $backslash3 (i8x16.eq (local.get $bytes3) (i8x16.splat (i32.const 0x5c))))
        (local.set $open0 (i8x16.eq (local.get $folded0) (i8x16.splat (i32.const 0x7b))))
        (local.set $open1 (i8x16.eq (local.get $folded1) (i8x16.splat (i32.const 0x7b))))
        (local.set $open2 (i8x16.eq (local.get $folded2) (i8x16.splat (i32.const 0x7b))))
        (local.set $open3 (i8x16.eq (local.get $folded3) (i8x16.splat (i32.const 0x7b))))
        (local.set $close0 (i8x16.eq (local.get $folded0) (i8x16.splat (i32.const 0x7d))))
        (local.set $close1 (i8x16.eq (local.get $folded1) (i8x16.splat (i32.const 0x7d))))
        (local.set $close2 (i8x16.eq (local.get $folded2) (i8x16.splat (i32.const 0x7d))))
        (local.set $close3 (i8x16.eq (local.get $folded3) (i8x16.splat (i32.const 0x7d))))
        (if (v128.any_true
              (v128.or
                (v128.or
                  (v128.or (v128.or (local.get $quote0) (local.get $quote1)) (v128.or (local.get $quote2) (local.get $quote3)))
                  (v128.or (v128.or (local.get $backslash0) (local.get $backslash1)) (v128.or (local.get $backslash2) (local.get $backslash3))))
                (v128.or
                  (v128.or (v128.or (local.get $open0) (local.get $open1)) (v128.or (local.get $open2) (local.get $open3)))
                  (v128.or (v128.or (local.get $close0) (local.get $close1)) (v128.or (local.get $close2) (local.get $close3))))))
          (then
            ;; Escapes. Without the backslash escaped by the previous block, every run of backslashes
            ;; starts with an escaping one and alternates; adding a run's lowest bit to the run clears it,
            ;; which splits the runs by the parity of their start. A run starting on an even bit escapes
            ;; the odd bits after it, one starting on an odd bit the even ones.
            (local.set $backslashes
              (i64.and
                (call $bitmask64 (local.get $backslash0) (local.get $backslash1) (local.get $backslash2) (local.get $backslash3))
                (i64.xor (global.get $firstEscaped) (i64.const -1))))
            (local.set $runStarts
              (i64.and (local.get $backslashes) (i64.xor (i64.shl (local.get $backslashes) (i64.const 1)) (i64.const -1))))
            (local.set $evenStartRuns
              (i64.and (local.get $backslashes)
                (i64.xor
                  (i64.add (local.get $backslashes) (i64.and (local.get $runStarts) (i64.const 0x5555555555555555)))
                  (i64.const -1))))
            (local.set $oddStartRuns (i64.xor (local.get $backslashes) (local.get $evenStartRuns)))
            (local.set $escaped
              (i64.or
                (i64.or
                  (i64.and (i64.shl (local.get $evenStartRuns) (i64.const 1)) (i64.const 0xaaaaaaaaaaaaaaaa))
                  (i64.and (i64.shl (local.get $oddStartRuns) (i64.const 1)) (i64.const 0x5555555555555555)))
                (global.get $firstEscaped)))
            ;; Strings: bit i set when byte i is inside a string (an opening quote is, a closing one not)
            (local.set $stringMask
              (i64.and
                (call $bitmask64 (local.get $quote0) (local.get $quote1) (local.get $quote2) (local.get $quote3))
                (i64.xor (local.get $escaped) (i64.const -1))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (i64.shl (local.get $stringMask) (i64.const 1))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (i64.shl (local.get $stringMask) (i64.const 2))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (i64.shl (local.get $stringMask) (i64.const 4))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (i64.shl (local.get $stringMask) (i64.const 8))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (i64.shl (local.get $stringMask) (i64.const 16))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (i64.shl (local.get $stringMask) (i64.const 32))))
            (local.set $stringMask (i64.xor (local.get $stringMask) (global.get $inString)))
            (if (i64.eqz (i64.and (local.get $backslashes) (i64.xor (local.get $stringMask) (i64.const -1))))
              (then
                (global.set $inString (i64.shr_s (local.get $stringMask) (i64.const 63)))
                ;; an odd-start run reaching bit 63 escapes bit 64: the next block's first byte
                (global.set $firstEscaped (i64.shr_u (local.get $oddStartRuns) (i64.const 63)))
                (local.set $opens
                  (i64.and
                    (call $bitmask64 (local.get $open0) (local.get $open1) (local.get $open2) (local.get $open3))
                    (i64.xor (local.get $stringMask) (i64.const -1))))
                (local.set $closes
                  (i64.and
                    (call $bitmask64 (local.get $close0) (local.get $close1) (local.get $close2) (local.get $close3))
                    (i64.xor (local.get $stringMask) (i64.const -1))))
                (local.set $openCount (i32.wrap_i64 (i64.popcnt (local.get $opens))))
                (if (i32.gt_s (i32.add (global.get $depth) (local.get $openCount)) (global.get $limit))
                  (then (if (call $walkBrackets (local.get $opens) (local.get $closes)) (then (return (i32.const 1)))))
                  (else
                    (global.set $depth
                      (i32.sub
                        (i32.add (global.get $depth) (local.get $openCount))
                        (i32.wrap_i64 (i64.popcnt (local.get $closes))))))))
              (else (if (call $scanBlockBytewise (local.get $at)) (then (return (i32.const 1)))))))
          ;; no quote, backslash or bracket: the string state holds, and an escaped first byte is spent
          (else (global.set $firstEscaped (i64.const 0))))
        (local.set $at (i32.add (local.get $at) (i32.const 64)))
        (br $block)))
    (i32.const 0))
)
