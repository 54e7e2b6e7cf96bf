import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { elementSpans, primaryArraySpan } from "../../../src/utilities/lib/stream-array";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The elements of `inputs.primary` as the scanner splits them, parsed; undefined when it declines. */
function split(text: string): unknown[] | undefined {
  const bytes = encode(text);
  const primary = primaryArraySpan(bytes);
  const spans = primary && elementSpans(bytes, primary);
  return spans?.map(({ start, end }) => JSON.parse(decode(bytes.subarray(start, end))));
}

describe("stream-array scanner", () => {
  test("any array, compact or indented, splits into exactly its elements", () => {
    fc.assert(fc.property(fc.array(fc.jsonValue()), fc.constantFrom(undefined, 2, "\t"), (primary, indent) => {
      const text = JSON.stringify({ config: { search: "a" }, inputs: { secondary: [1, "]"], primary } }, null, indent);
      expect(split(text)).toEqual(JSON.parse(text).inputs.primary);
    }), { numRuns: 300 });
  });

  test("strings holding brackets, commas, quotes and escapes do not end an element", () => {
    expect(split(String.raw`{"inputs":{"primary":[ "a,]}" , {"k\"]":"\\"} ,"\u005d"]}}`)).toEqual(["a,]}", { 'k"]': "\\" }, "]"]);
  });

  test("declines what it cannot split safely: the whole-document path then decides", () => {
    for (const text of [
      `{"inputs":{"primary":{"a":1}}}`, // not an array
      `{"inputs":{"primary":[1],"primary":[2]}}`, // a repeated member
      `{"inputs":{"primary":[1,,2]}}`,
      `{"inputs":{"primary":[1,2,]}}`,
      `{"inputs":{"primary":[1 2]}}`,
      `{"inputs":{"primary":[1,2}}`,
      `{"inputs":{"primary":[1]}} trailing`,
      `[{"inputs":{"primary":[1]}}]`,
    ]) expect(split(text)).toBeUndefined();
  });

  test("an element the scanner passes but JSON.parse refuses is still refused", () => {
    expect(() => split(`{"inputs":{"primary":[tru, {"a":1}]}}`)).toThrow();
  });
});
