import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { exceedsDepth, MAX_JSON_DEPTH, parseJsonBytes, textExceedsDepth } from "../../src/http/json";

const encoder = new TextEncoder();

describe("textExceedsDepth", () => {
  test("agrees with the byte scan on any mix of brackets, quotes, backslashes and other characters", () => {
    const text = fc.array(fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "é", ","), { maxLength: 60 }).map((parts) => parts.join(""));
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 4 }), (sample, limit) => {
      expect(textExceedsDepth(sample, limit)).toBe(exceedsDepth(encoder.encode(sample), limit));
    }), { numRuns: 5000 });
  });

  test("brackets inside strings, escaped quotes and runs of backslashes do not count", () => {
    expect(textExceedsDepth('["[[[", "\\"[[", "\\\\", [1]]', 2)).toBe(false);
    expect(textExceedsDepth('["\\\\\\"[[[", [[1]]]', 2)).toBe(true);
    expect(textExceedsDepth('"unterminated [[[[', 1)).toBe(false);
  });

  test("parseJsonBytes refuses nesting past the limit, and takes it at the limit", () => {
    const nested = (depth: number) => encoder.encode(`${'{"a":['.repeat(depth / 2)}1${"]}".repeat(depth / 2)}`);
    expect(parseJsonBytes(nested(MAX_JSON_DEPTH))).toMatchObject({ ok: true });
    expect(parseJsonBytes(nested(MAX_JSON_DEPTH + 2))).toEqual({ ok: false, message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted` });
  });
});
