/** The index key encoding: byte order is value order (exact decimals, code points), types apart, descending inverted. */
import { expect, test } from "bun:test";
import { documentRoot, EntryRefused, indexKeys } from "../../../src/core/json/index-entries";
import { compareBytes, encodeValue, invert, splitKey } from "../../../src/core/json/index-key";

const number = (literal: string) => encodeValue({ type: "number", literal })!;
const string = (value: string) => encodeValue({ type: "string", value })!;

/** Exact order of decimal literals, by BigInt. */
function exact(a: string, b: string): number {
  const parts = (literal: string) => {
    const [, sign, whole, fraction = "", exponent = "0"] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)!;
    return [BigInt(`${sign}${whole}${fraction}`), Number(exponent) - fraction.length] as const;
  };
  const [ma, ea] = parts(a);
  const [mb, eb] = parts(b);
  const low = Math.min(ea, eb);
  const x = ma * 10n ** BigInt(ea - low);
  const y = mb * 10n ** BigInt(eb - low);
  return x < y ? -1 : x > y ? 1 : 0;
}

test("numbers: byte order is exact decimal order, 1.0 = 1, past 2^53 exact", () => {
  const literals = [
    "0",
    "-0",
    "1",
    "1.0",
    "10",
    "9.99",
    "-1",
    "-1.5",
    "-10",
    "1e2",
    "100",
    "0.001",
    "-0.001",
    "1E-3",
    "2.50",
    "2.5",
    "12345678901234567890",
    "12345678901234567891",
    "-12345678901234567891",
    "9007199254740993",
    "9007199254740992",
    "1e400",
    "-1e-400",
  ];
  for (const a of literals)
    for (const b of literals) expect(Math.sign(compareBytes(number(a), number(b))), `${a} vs ${b}`).toBe(exact(a, b));
});

test("strings by code point, a prefix first, U+0000 kept; types never equal and ordered by type", () => {
  const values = ["", "a", "a\u0000", "a\u0000b", "ab", "b", "é", "\u{1F600}", "\uFFFF"];
  for (const a of values)
    for (const b of values) {
      const expected = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(Math.sign(compareBytes(string(a), string(b))), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(expected);
    }
  const ordered = [
    encodeValue({ type: "missing" })!,
    encodeValue({ type: "null" })!,
    encodeValue({ type: "boolean", value: false })!,
    encodeValue({ type: "boolean", value: true })!,
    number("-1e9"),
    number("1e9"),
    string(""),
    string("zzz"),
    encodeValue({ type: "object", text: "{}" })!,
    encodeValue({ type: "emptyArray" })!,
  ];
  for (let i = 1; i < ordered.length; i++) expect(compareBytes(ordered[i - 1], ordered[i])).toBeLessThan(0);
  expect(compareBytes(number("1"), string("1"))).not.toBe(0);
});

test("a key of several fields splits back into its values; a descending field sorts in reverse", () => {
  const root = documentRoot(new TextEncoder().encode(`{"a":"x","b":[2,10],"c":{"d":1.50}}`));
  const fields = [
    { tokens: ["a"], descending: false },
    { tokens: ["b"], descending: true },
    { tokens: ["c", "d"], descending: false },
    { tokens: ["gone"], descending: false },
  ];
  const keys = indexKeys(root, fields, { maxEntries: null, maxValueBytes: null }).sort(compareBytes);
  expect(keys).toHaveLength(2);
  const parts = keys.map((key) => splitKey(key, [false, true, false, false]));
  expect(parts.map((p) => p[1])).toEqual([number("10"), number("2")]); // descending: 10 first
  expect(parts[0][0]).toEqual(string("x"));
  expect(parts[0][2]).toEqual(number("1.5"));
  expect(parts[0][3]).toEqual(encodeValue({ type: "missing" })!);
  expect(compareBytes(invert(number("10")), invert(number("2")))).toBeLessThan(0);
});

test("limits: more entries than allowed, or a value too large, is refused naming the field", () => {
  const root = documentRoot(new TextEncoder().encode(`{"a":[1,2,3],"b":[1,2],"s":"${"x".repeat(100)}"}`));
  const both = [
    { tokens: ["a"], descending: false },
    { tokens: ["b"], descending: false },
  ];
  expect(indexKeys(root, both, { maxEntries: 6, maxValueBytes: null })).toHaveLength(6);
  expect(() => indexKeys(root, both, { maxEntries: 5, maxValueBytes: null })).toThrow(EntryRefused);
  expect(() => indexKeys(root, [{ tokens: ["s"], descending: false }], { maxEntries: null, maxValueBytes: 50 })).toThrow(
    /more than the 50/,
  );
});
