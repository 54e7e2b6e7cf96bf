import { describe, expect, test } from "bun:test";
import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { simdDepthCheck } from "../../../src/core/json/depth-scan";
import { assembleDepthScan } from "../../../src/core/json/depth-scan.build";
import { DEPTH_SCAN_WASM_BASE64 } from "../../../src/core/json/depth-scan-wasm";
import { decodeUtf8, exceedsDepthInJavaScript, MAX_JSON_DEPTH, parseJsonBytes } from "../../../src/core/json/parse";

const encoder = new TextEncoder();
const WINDOW = 64 * 1024;

describe("depth check in WebAssembly SIMD", () => {
  const simd = simdDepthCheck();

  test("runs here: Bun has WebAssembly SIMD, so the tests below compare it with the JavaScript scan", () => {
    expect(simd).not.toBeNull();
  });

  test("the committed binary is what depth-scan.wat assembles to (bun run build:wasm)", async () => {
    expect(Buffer.from(await assembleDepthScan()).toString("base64")).toBe(DEPTH_SCAN_WASM_BASE64);
  });

  /** The same answer as the JavaScript scan at limits 0–4, and just below and at the deepest level reached. */
  const agrees = (bytes: Uint8Array) => {
    for (let limit = 0; limit <= 4; limit++) expect(simd!(bytes, limit)).toBe(exceedsDepthInJavaScript(bytes, limit));
    let deepest = 0;
    for (let high = bytes.length; deepest < high; ) {
      const middle = (deepest + high) >> 1;
      if (exceedsDepthInJavaScript(bytes, middle)) deepest = middle + 1;
      else high = middle;
    }
    expect(simd!(bytes, deepest)).toBe(false);
    if (deepest > 0) expect(simd!(bytes, deepest - 1)).toBe(true);
  };

  // around a 16- and 64-byte block, and around and across the 64 KiB input window
  const lengths = [0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, WINDOW - 1, WINDOW, WINDOW + 1, 3 * WINDOW + 5];
  const lengthArb = fc.oneof(fc.constantFrom(...lengths), fc.integer({ min: 0, max: 300 }));
  const jsonish = fc.constantFrom(...'[]{}"\\a,'.split("").map((c) => encoder.encode(c)), encoder.encode("é"));

  const fromParts = (parts: Uint8Array[], length: number) => {
    const bytes = new Uint8Array(length);
    for (let at = 0, part = 0; at < length; part++) {
      const piece = parts[part % parts.length];
      bytes.set(piece.subarray(0, length - at), at);
      at += piece.length;
    }
    return bytes;
  };

  test("agrees with the JavaScript scan on mixes of brackets, quotes, backslashes, letters and é", () => {
    fc.assert(
      fc.property(fc.array(jsonish, { minLength: 1, maxLength: 200 }), lengthArb, (parts, length) => {
        agrees(fromParts(parts, length));
      }),
      { numRuns: 1500 },
    );
  });

  test("agrees with the JavaScript scan on random bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 400 }), lengthArb, (pattern, length) => {
        agrees(fromParts([pattern], length));
      }),
      { numRuns: 1000 },
    );
  });

  test("agrees with the JavaScript scan on runs of backslashes across block and window boundaries", () => {
    const boundaries = [16, 32, 64, 128, WINDOW, 2 * WINDOW];
    const arb = fc.record({
      boundary: fc.constantFrom(...boundaries),
      offset: fc.integer({ min: -6, max: 6 }),
      run: fc.integer({ min: 0, max: 70 }),
      inString: fc.boolean(),
      after: fc.constantFrom('"', "[", "]", "\\", "a"),
      tail: fc.array(fc.constantFrom("[", "]", '"', "\\", "{", "}", "a"), { maxLength: 80 }),
    });
    fc.assert(
      fc.property(arb, ({ boundary, offset, run, inString, after, tail }) => {
        // balanced filler up to the run, so that the run starts `offset` bytes from the boundary
        const start = Math.max(0, boundary + offset - run);
        const head = (inString ? '["' : "[ ") + "[]".repeat(start);
        const text = head.slice(0, start) + "\\".repeat(run) + after + tail.join("") + '"]]]';
        agrees(encoder.encode(text));
      }),
      { numRuns: 1500 },
    );
  });

  test("brackets inside strings, escaped quotes and runs of backslashes do not count", () => {
    const check = (text: string, limit: number) => simd!(encoder.encode(text), limit);
    expect(check('["[[[", "\\"[[", "\\\\", [1]]', 2)).toBe(false);
    expect(check('["\\\\\\"[[[", [[1]]]', 2)).toBe(true);
    expect(check('"unterminated [[[[', 1)).toBe(false);
    expect(check("]]][[[", 2)).toBe(false);
    expect(check('\\"[[', 0)).toBe(false);
    expect(check("\\[[", 1)).toBe(true);
  });

  test("parseJsonBytes refuses nesting past the limit, and takes it at the limit", () => {
    const nested = (depth: number) => encoder.encode(`${'{"a":['.repeat(depth / 2)}1${"]}".repeat(depth / 2)}`);
    expect(parseJsonBytes(nested(MAX_JSON_DEPTH))).toMatchObject({ ok: true });
    expect(parseJsonBytes(nested(MAX_JSON_DEPTH + 2))).toEqual({
      ok: false,
      message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
    });
  });
});

describe("decodeUtf8: the text of valid UTF-8, nothing for anything else", () => {
  // an independent reference: Node's UTF-8 validation, then a lenient decoding (which only replaces what is invalid)
  const lenient = new TextDecoder("utf-8");
  const reference = (bytes: Uint8Array) => (isUtf8(bytes) ? lenient.decode(bytes) : undefined);
  // valid sequences of 1 to 4 bytes, an encoded U+FFFD, a BOM, and bytes that break UTF-8 (lone continuation, truncated lead, overlong, surrogate)
  const pieces = [
    [0x61],
    [0x22],
    [0xc3, 0xa9],
    [0xe2, 0x82, 0xac],
    [0xf0, 0x9f, 0x98, 0x80],
    [0xef, 0xbf, 0xbd],
    [0xef, 0xbb, 0xbf],
    [0x80],
    [0xc3],
    [0xe2, 0x82],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xff],
  ];

  test("any bytes decode as the reference decodes them, or are refused where it finds them invalid", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (chosen) => {
        const bytes = new Uint8Array(chosen.flat());
        expect(decodeUtf8(bytes)).toBe(reference(bytes));
      }),
      { numRuns: 3000 },
    );
  });

  test("examples: a real U+FFFD is kept, an invalid byte refused, a leading BOM dropped", () => {
    expect(decodeUtf8(new Uint8Array([0x22, 0xef, 0xbf, 0xbd, 0x22]))).toBe('"\uFFFD"');
    expect(decodeUtf8(new Uint8Array([0x22, 0xff, 0x22]))).toBeUndefined();
    expect(decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x31]))).toBe("1");
  });
});
